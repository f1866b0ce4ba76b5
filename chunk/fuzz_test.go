package chunk_test

import (
	"math"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
)

var fuzzSeeds = []string{
	"", "\n", "a\r\nb\rc\n", "é😀\xff\x00\n\xe2\x82\xac\xe2\x82", "\r\n\r\n", "def f():\n\treturn 1\n",
	"\xf0\x9f\x98", "a\u2028b\u0085c\x1cd",
}

// naiveBytes maps every code point index (and the end) to its byte offset.
func naiveBytes(text string) []int {
	var out []int
	for b := 0; b < len(text); {
		out = append(out, b)
		_, w := utf8.DecodeRuneInString(text[b:])
		b += w
	}
	return append(out, len(text))
}

func FuzzSplitLines(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := chunk.SplitLines(text)
		assertRoundTrip(t, text, lines)
		for i, l := range lines {
			require.Equal(t, i+1, l.Number)
			term := text[l.End:l.TermEnd]
			if i < len(lines)-1 {
				require.Contains(t, []string{"\n", "\r\n"}, term)
			} else {
				require.Contains(t, []string{"", "\n", "\r\n"}, term)
			}
		}
	})
}

func FuzzOffsetsAndLineScores(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, uint64(i)*0x9e3779b97f4a7c15+1)
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		idx := naiveBytes(text)
		n := len(idx) - 1
		require.Equal(t, n, chunk.CodePointLen(text))
		// A deterministic pseudo-random walk over code-point spans,
		// including out-of-range and backwards ones.
		rnd := func() int {
			seed ^= seed << 13
			seed ^= seed >> 7
			seed ^= seed << 17
			return int(seed % uint64(n+5))
		}
		var spans []chunk.ScoredSpan
		for range 2*n + 3 {
			s, e := rnd()-2, rnd()-1
			spans = append(spans, chunk.ScoredSpan{Start: s, End: e, Score: float64(rnd()%7)/3 - 0.5})
		}
		clampIdx := func(cp int) int { return idx[min(max(cp, 0), n)] }
		byteSpans := chunk.SpansToBytes(text, spans)
		for i, s := range spans {
			require.Equal(t, clampIdx(s.Start), byteSpans[i].Start, "span %d", i)
			require.Equal(t, clampIdx(s.End), byteSpans[i].End, "span %d", i)
			require.Equal(t, clampIdx(s.Start), chunk.CodePointToByte(text, s.Start))
		}
		lines := chunk.SplitLines(text)
		scores, covered := chunk.LineScores(text, lines, byteSpans)
		require.Len(t, scores, len(lines))
		require.Len(t, covered, len(lines))
		for i := range scores {
			require.False(t, math.IsNaN(scores[i]))
			require.GreaterOrEqual(t, scores[i], 0.0)
			require.LessOrEqual(t, scores[i], 1.0)
			if !covered[i] {
				require.Zero(t, scores[i])
			}
		}
		// Raw byte spans (possibly inside characters) must not panic either.
		raw := make([]chunk.ScoredSpan, len(spans))
		for i, s := range spans {
			raw[i] = chunk.ScoredSpan{Start: s.Start * 2, End: s.End * 3, Score: s.Score}
		}
		chunk.LineScores(text, lines, raw)
	})
}

func FuzzPlanWindows(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, i%4+1, i%3)
	}
	f.Fuzz(func(t *testing.T, text string, budget, overlap int) {
		budget = budget%64 + 1
		if budget < 1 {
			budget += 64
		}
		idx := naiveBytes(text)
		// One token per code point, as a byte-level tokenizer would give
		// for single characters.
		tokens := make([]chunk.Token, len(idx)-1)
		for i := range tokens {
			tokens[i] = chunk.Token{Start: i, End: i + 1, ByteStart: idx[i], ByteEnd: idx[i+1]}
		}
		ws, err := chunk.PlanWindows(text, tokens, budget, overlap)
		require.NoError(t, err)
		if text == "" {
			require.Empty(t, ws)
			return
		}
		require.NotEmpty(t, ws)
		require.Equal(t, 0, ws[0].ByteStart)
		require.Equal(t, len(text), ws[len(ws)-1].ByteEnd)
		for i, w := range ws {
			require.Equal(t, idx[w.Start], w.ByteStart, "window %d", i)
			require.Equal(t, idx[w.End], w.ByteEnd, "window %d", i)
			require.LessOrEqual(t, w.EndToken-w.FirstToken, budget)
			if i > 0 {
				// Work stays within about twice the text: each window
				// starts at least half a budget after the previous one.
				require.GreaterOrEqual(t, w.FirstToken-ws[i-1].FirstToken, budget-budget/2, "window %d", i)
			}
			if i > 0 {
				require.LessOrEqual(t, w.ByteStart, ws[i-1].ByteEnd, "windows must not leave gaps")
				require.Greater(t, w.FirstToken, ws[i-1].FirstToken)
			}
		}
	})
}
