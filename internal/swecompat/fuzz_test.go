package swecompat_test

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/swecompat"
)

// withoutBreaks removes what str.splitlines() consumes: "\r\n" pairs and
// every line-break character (invalid bytes are content).
func withoutBreaks(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		switch {
		case w == 1 && r == utf8.RuneError:
			b.WriteByte(text[i])
		case strings.ContainsRune("\n\r\v\f\x1c\x1d\x1e\u0085\u2028\u2029", r):
		default:
			b.WriteString(text[i : i+w])
		}
		i += w
	}
	return b.String()
}

var placeholderRE = regexp.MustCompile(`^\(filtered [1-9][0-9]* lines\)$`)
var forkPlaceholderRE = regexp.MustCompile(`(pass  )?# \(filtered [1-9][0-9]* lines\)$`)

// isForkPlaceholder reports whether o is Python whitespace followed by a
// fork placeholder.
func isForkPlaceholder(o string) bool {
	loc := forkPlaceholderRE.FindStringIndex(o)
	if loc == nil {
		return false
	}
	const pySpace = "\t\n\v\f\r\x1c\x1d\x1e\x1f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
	return strings.Trim(o[:loc[0]], pySpace) == ""
}

func FuzzCompat(f *testing.F) {
	for i, s := range []string{
		"", "\n", "a\r\nb\rc\n", "é😀\xff\x00\n\xe2\x82", "class A:\n    def f(self):\n        x = 1\n\n    y\n",
		"\tif x:\n\x1c\x1f\n\u2028 \u3000\n", "k\nshort\nk\n",
	} {
		f.Add(s, uint64(i)*0x9e3779b97f4a7c15+1, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64, keepFirst bool) {
		lines := swecompat.SplitLines(text)
		require.Equal(t, withoutBreaks(text), strings.Join(lines, ""))
		for _, l := range lines {
			require.Equal(t, l, withoutBreaks(l), "a line must hold no break")
		}

		n := utf8.RuneCountInString(text)
		rnd := func() uint64 {
			seed ^= seed << 13
			seed ^= seed >> 7
			seed ^= seed << 17
			return seed
		}
		var spans [][2]int
		var scores []float64
		for range n + 2 {
			s := int(rnd()%uint64(n+3)) - 1
			spans = append(spans, [2]int{s, s + int(rnd()%4)})
			scores = append(scores, float64(rnd()%9)/4-0.5)
		}
		scores = append(scores, math.NaN())
		lineScores := swecompat.AggregateLines(text, spans, scores)
		for k, v := range lineScores {
			require.True(t, k >= 1 && k <= len(lines), "line %d of %d", k, len(lines))
			require.True(t, v >= 0 && v <= 1, "score %v", v)
		}

		inputLines := map[string]bool{}
		for _, l := range lines {
			inputLines[l] = true
		}
		kept, pruned := swecompat.PruneLines(text, lineScores, 0.5, keepFirst)
		require.True(t, slices.IsSorted(kept))
		require.Equal(t, len(kept), len(slices.Compact(slices.Clone(kept))))
		if len(lines) > 0 {
			out := strings.Split(pruned, "\n")
			require.LessOrEqual(t, len(out), len(lines))
			for _, o := range out {
				require.True(t, inputLines[o] || placeholderRE.MatchString(o), "unexpected output line %q", o)
			}
		} else {
			require.Empty(t, pruned)
		}

		forkKept, forkPruned := swecompat.PruneLinesFork(text, lineScores, 0.5, keepFirst, !keepFirst)
		require.True(t, slices.IsSorted(forkKept))
		require.Subset(t, kept, dropKeepLast(lines, forkKept), "gap filling only adds lines")
		if len(lines) > 0 {
			for _, o := range strings.Split(forkPruned, "\n") {
				require.True(t, inputLines[o] || isForkPlaceholder(o), "unexpected fork line %q", o)
			}
		}
	})
}

// dropKeepLast drops the last line, which keep-last may have added and
// PruneLines does not know about.
func dropKeepLast(lines []string, kept []int) []int {
	if len(kept) > 0 && kept[len(kept)-1] == len(lines) {
		return kept[:len(kept)-1]
	}
	return kept
}
