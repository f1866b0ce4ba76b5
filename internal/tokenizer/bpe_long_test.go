package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// longWords returns long byte strings to merge as single words: every
// pathological case at several sizes, random strings over small alphabets
// and the golden corpus glued into one word. mergeLong must agree with
// mergeHeap on any byte string, not only on valid pre-tokens.
func longWords(tb testing.TB, short bool) []string {
	var out []string
	sizes := []int{longWord, longWord + 1, 1500, 2*chunkProbe + 7, 4099, 20000}
	if !short {
		sizes = append(sizes, 100003)
	}
	for _, c := range pathologicalCases {
		for _, n := range sizes {
			out = append(out, c.text(n))
		}
	}
	rng := rand.New(rand.NewPCG(15, 1))
	alphabets := []string{" ", " \t", " \n", "ab", "abc", "a ", "aA", "=-", "0123456789", "\x00\xff", "漢字", "ab c\tdé\n",
		"abcdefghijklmnopqrstuvwxyz", "\xe2\x82\xac\xe2\x82"}
	for _, a := range alphabets {
		for range 6 {
			n := longWord + rng.IntN(8000)
			var b strings.Builder
			// Runs of random lengths so that both uniform stretches and
			// changes of character occur.
			for b.Len() < n {
				c := a[rng.IntN(len(a))]
				b.WriteString(strings.Repeat(string(c), 1+rng.IntN(1+rng.IntN(300))))
			}
			out = append(out, b.String())
		}
	}
	var sb strings.Builder
	for _, r := range loadGolden(tb) {
		sb.WriteString(r.Text)
	}
	g := sb.String()
	for i := 0; i+longWord <= len(g); i += len(g) / 7 {
		out = append(out, g[i:min(len(g), i+longWord+rng.IntN(20000))])
	}
	return out
}

// TestMergeLongMatchesHeap checks that chunked merging gives mergeHeap's
// output exactly, and that it rarely has to fall back.
func TestMergeLongMatchesHeap(t *testing.T) {
	tok := qwen(t)
	require.True(t, tok.monotone, "Qwen's merge table is monotone")
	var sc, sc2 bpeScratch
	fallbacks := 0
	words := longWords(t, testing.Short())
	for i, w := range words {
		want := tok.mergeHeap(nil, w, &sc)
		got, ok := tok.mergeLong(nil, w, &sc2)
		if !ok {
			fallbacks++
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("word %d (%d bytes, %q...): chunked merge differs", i, len(w), abbreviate(w))
		}
	}
	t.Logf("%d words, %d fell back to the whole-word merge", len(words), fallbacks)
}

// TestSafeCut checks the cut criterion itself at arbitrary cut positions:
// whenever it calls a cut safe, merging the two sides separately gives the
// whole word's merge. It must also reject the cuts that do change it.
func TestSafeCut(t *testing.T) {
	tok := qwen(t)
	rng := rand.New(rand.NewPCG(15, 2))
	var sc bpeScratch
	var ra, rb chunkResult
	safe, unsafe, changed := 0, 0, 0
	for _, w := range longWords(t, true) {
		w = w[:min(len(w), 600)]
		want := tok.mergeHeap(nil, w, &sc)
		for range 8 {
			k := 1 + rng.IntN(len(w)-1)
			a := tok.mergeHeapRec(nil, w[:k], &sc, &ra)
			b := tok.mergeHeapRec(nil, w[k:], &sc, &rb)
			same := slices.Equal(append(a, b...), want)
			if !same {
				changed++
			}
			if tok.safeCut(ra.right, rb.left) {
				safe++
				require.True(t, same, "cut %d of %q called safe", k, abbreviate(w))
			} else {
				unsafe++
			}
		}
	}
	t.Logf("%d cuts called safe, %d unsafe, %d changed the merge", safe, unsafe, changed)
	require.NotZero(t, safe)
	require.NotZero(t, changed)
}
