package chunk_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/swecompat"
)

// benchText builds about 1 MB of code-like text with some non-ASCII, cut
// into fake tokens of up to 4 code points, and scores them through windows
// of 8105 tokens overlapping by 50 (the real model's budget).
func benchText(b *testing.B) (string, []chunk.WindowScores) {
	b.Helper()
	const line = "    def wrap(self, text: str) -> list[str]:  # héllo wörld → 😀\n"
	text := strings.Repeat(line, (1<<20)/len(line))
	var tokens []chunk.Token
	cp, bs := 0, 0
	for bs < len(text) {
		start, startB := cp, bs
		for k := 0; k < 4 && bs < len(text); k++ {
			_, w := utf8.DecodeRuneInString(text[bs:])
			bs += w
			cp++
		}
		tokens = append(tokens, chunk.Token{Start: start, End: cp, ByteStart: startB, ByteEnd: bs})
	}
	ws, err := chunk.PlanWindows(text, tokens, 8105, chunk.DefaultOverlap)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]chunk.WindowScores, len(ws))
	for i, w := range ws {
		rel := make([]chunk.Token, 0, w.EndToken-w.FirstToken)
		scores := make([]float64, 0, cap(rel))
		for j, t := range tokens[w.FirstToken:w.EndToken] {
			t.Start -= w.Start
			t.End -= w.Start
			rel = append(rel, t)
			scores = append(scores, float64((j*7919)%1000)/1000)
		}
		out[i] = chunk.WindowScores{Start: w.Start, Tokens: rel, Scores: scores}
	}
	return text, out
}

func BenchmarkMergeAndLineScores1MB(b *testing.B) {
	text, windows := benchText(b)
	n := chunk.CodePointLen(text)
	b.Run("MergeTokenScores", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			chunk.MergeTokenScores(n, windows...)
		}
	})
	merged := chunk.MergeTokenScores(n, windows...)
	b.Run("SpansToBytes", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			chunk.SpansToBytes(text, merged)
		}
	})
	byteSpans := chunk.SpansToBytes(text, merged)
	b.Run("SplitLines", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			chunk.SplitLines(text)
		}
	})
	lines := chunk.SplitLines(text)
	b.Run("LineScores", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			chunk.LineScores(text, lines, byteSpans)
		}
	})
	b.Run("All", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			m := chunk.MergeTokenScores(n, windows...)
			chunk.LineScores(text, chunk.SplitLines(text), chunk.SpansToBytes(text, m))
		}
	})
	b.Run("swecompat.AggregateLines", func(b *testing.B) {
		spans := make([][2]int, len(merged))
		scores := make([]float64, len(merged))
		for i, s := range merged {
			spans[i] = [2]int{s.Start, s.End}
			scores[i] = s.Score
		}
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			swecompat.AggregateLines(text, spans, scores)
		}
	})
}
