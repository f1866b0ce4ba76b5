package tokenizer

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// naiveBPE is the textbook GPT-2 algorithm on raw byte strings: find the
// best-ranked adjacent pair, merge every occurrence of it left to right,
// repeat. It shares nothing with the implementation but the merges file.
type naiveBPE struct {
	ranks map[[2]string]int
}

func newNaiveBPE(tb testing.TB) *naiveBPE {
	tb.Helper()
	data, err := readGzip(assets, "assets/merges.txt.gz")
	require.NoError(tb, err)
	bl := newByteLevel()
	n := &naiveBPE{ranks: map[[2]string]int{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#version") || l == "" {
			continue
		}
		a, b, _ := strings.Cut(l, " ")
		ra, _ := bl.decode(nil, []byte(a))
		rb, _ := bl.decode(nil, []byte(b))
		n.ranks[[2]string{string(ra), string(rb)}] = len(n.ranks)
	}
	return n
}

func (n *naiveBPE) encode(word string) []string {
	parts := make([]string, len(word))
	for i := 0; i < len(word); i++ {
		parts[i] = word[i : i+1]
	}
	for len(parts) > 1 {
		best, bestRank := [2]string{}, -1
		for i := 0; i+1 < len(parts); i++ {
			p := [2]string{parts[i], parts[i+1]}
			if r, ok := n.ranks[p]; ok && (bestRank < 0 || r < bestRank) {
				best, bestRank = p, r
			}
		}
		if bestRank < 0 {
			break
		}
		var next []string
		for i := 0; i < len(parts); i++ {
			if i+1 < len(parts) && parts[i] == best[0] && parts[i+1] == best[1] {
				next = append(next, best[0]+best[1])
				i++
			} else {
				next = append(next, parts[i])
			}
		}
		parts = next
	}
	return parts
}

func pieces(tok *Tokenizer, ids []int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tok.pieces[id]
	}
	return out
}

// bpeWords returns pre-tokens from the golden corpus plus random and
// repetitive byte strings.
func bpeWords(tb testing.TB) []string {
	seen := map[string]bool{}
	var words []string
	add := func(w string) {
		if w != "" && !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	for _, r := range loadGolden(tb) {
		for _, w := range split(normalize(r.Text).text) {
			add(w)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "e", "t", "_", " ", "\n", "\t", "=", "0", "é", "中", "\xff", "\x00"}
	for i := 0; i < 300; i++ {
		var sb strings.Builder
		for n := rng.IntN(120) + 1; n > 0; n-- {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		add(sb.String())
		b := make([]byte, rng.IntN(80)+1)
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		add(string(b))
	}
	for _, rep := range []string{" ", "a", "ab", "=", "\n", "  \n", "é", "😀"} {
		add(strings.Repeat(rep, 333))
	}
	return words
}

func TestBPEMatchesNaive(t *testing.T) {
	tok := qwen(t)
	naive := newNaiveBPE(t)
	var sc bpeScratch
	for _, w := range bpeWords(t) {
		want := naive.encode(w)
		small := tok.mergeSmall(nil, w, &sc)
		heap := tok.mergeHeap(nil, w, &sc)
		require.Equal(t, want, pieces(tok, small), "mergeSmall %q", w)
		require.Equal(t, want, pieces(tok, heap), "mergeHeap %q", w)
		require.Equal(t, small, tok.appendWord(nil, w, &sc), "appendWord %q", w)
		require.Equal(t, small, tok.appendWord(nil, w, &sc), "appendWord (cached) %q", w)
	}
}
