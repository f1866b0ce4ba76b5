package chunk_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/swecompat"
)

type lineView struct {
	Content, Term string
}

func viewLines(text string, lines []chunk.Line) []lineView {
	out := make([]lineView, len(lines))
	for i, l := range lines {
		out[i] = lineView{text[l.Start:l.End], text[l.End:l.TermEnd]}
	}
	return out
}

func TestSplitLines(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []lineView
	}{
		{"empty", "", []lineView{}},
		{"one newline", "\n", []lineView{{"", "\n"}}},
		{"no final newline", "a\nb", []lineView{{"a", "\n"}, {"b", ""}}},
		{"final newline adds no line", "a\nb\n", []lineView{{"a", "\n"}, {"b", "\n"}}},
		{"CRLF terminators", "a\r\nb\r\n", []lineView{{"a", "\r\n"}, {"b", "\r\n"}}},
		{"lone CR is content", "a\rb\r", []lineView{{"a\rb\r", ""}}},
		{"CR CR LF", "a\r\r\n", []lineView{{"a\r", "\r\n"}}},
		{"CRLF alone", "\r\n", []lineView{{"", "\r\n"}}},
		{"blank lines", "\n\n\n", []lineView{{"", "\n"}, {"", "\n"}, {"", "\n"}}},
		{"other separators are content", "a\fb\vc\u2028d\u0085e", []lineView{{"a\fb\vc\u2028d\u0085e", ""}}},
		{"invalid UTF-8 and NUL", "\xff\x00\n\xe2\x82", []lineView{{"\xff\x00", "\n"}, {"\xe2\x82", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := chunk.SplitLines(tt.text)
			got := viewLines(tt.text, lines)
			assert.Equal(t, tt.want, got)
			for i, l := range lines {
				assert.Equal(t, i+1, l.Number)
			}
			assert.Equal(t, len(lines), chunk.CountLines(tt.text))
			assertRoundTrip(t, tt.text, lines)
		})
	}
}

// assertRoundTrip checks that the lines tile the text exactly.
func assertRoundTrip(t testing.TB, text string, lines []chunk.Line) {
	t.Helper()
	var b strings.Builder
	prev := 0
	for i, l := range lines {
		require.Equal(t, prev, l.Start, "line %d must start where the previous ended", i+1)
		require.LessOrEqual(t, l.Start, l.End)
		require.LessOrEqual(t, l.End, l.TermEnd)
		require.NotContains(t, text[l.Start:l.End], "\n")
		b.WriteString(text[l.Start:l.TermEnd])
		prev = l.TermEnd
	}
	require.Equal(t, text, b.String())
}

func TestLineScores(t *testing.T) {
	tests := []struct {
		name        string
		text        string
		spans       []chunk.ScoredSpan // bytes
		wantScores  []float64
		wantCovered []bool
	}{
		{name: "empty text", text: "", spans: []chunk.ScoredSpan{{0, 4, 1}}, wantScores: []float64{}, wantCovered: []bool{}},
		{name: "character weighted", text: "abcd\nef\n", spans: []chunk.ScoredSpan{{0, 1, 1}, {1, 4, 0}, {5, 7, 0.5}},
			wantScores: []float64{0.25, 0.5}, wantCovered: []bool{true, true}},
		{name: "terminator excluded", text: "ab\r\ncd", spans: []chunk.ScoredSpan{{0, 2, 0.2}, {2, 4, 1}, {4, 6, 0.4}},
			wantScores: []float64{0.2, 0.4}, wantCovered: []bool{true, true}},
		{name: "uncovered line and partial cover", text: "ab\ncd\nef", spans: []chunk.ScoredSpan{{0, 1, 0.8}, {6, 8, 0.3}},
			wantScores: []float64{0.8, 0, 0.3}, wantCovered: []bool{true, false, true}},
		{name: "clamped", text: "a\nb", spans: []chunk.ScoredSpan{{0, 1, -3}, {2, 3, 7}},
			wantScores: []float64{0, 1}, wantCovered: []bool{true, true}},
		{name: "NaN skipped", text: "ab", spans: []chunk.ScoredSpan{{0, 2, 0.6}, {0, 1, math.NaN()}},
			wantScores: []float64{0.6}, wantCovered: []bool{true}},
		{name: "last span wins", text: "abcd", spans: []chunk.ScoredSpan{{0, 4, 0.2}, {1, 3, 1}},
			wantScores: []float64{0.6}, wantCovered: []bool{true}},
		{
			// "é" is 2 bytes and "😀" 4: each counts as one character, and a
			// span over part of a character covers all of it.
			name: "multi-byte characters", text: "é😀x",
			spans:      []chunk.ScoredSpan{{0, 2, 1}, {2, 4, 0.1}, {4, 6, 0.4}, {6, 7, 0}},
			wantScores: []float64{(1 + 0.4 + 0) / 3}, wantCovered: []bool{true},
		},
		{name: "span inside a character", text: "a€", spans: []chunk.ScoredSpan{{2, 3, 0.9}},
			wantScores: []float64{0.9}, wantCovered: []bool{true}},
		{name: "spans outside the text", text: "ab", spans: []chunk.ScoredSpan{{-4, 1, 0.5}, {1, 40, 1}, {5, 9, 0}, {1, 1, 0}},
			wantScores: []float64{0.75}, wantCovered: []bool{true}},
		{name: "invalid UTF-8 byte is one character", text: "\xff\xfe", spans: []chunk.ScoredSpan{{0, 1, 1}},
			wantScores: []float64{1}, wantCovered: []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := chunk.SplitLines(tt.text)
			scores, covered := chunk.LineScores(tt.text, lines, tt.spans)
			require.Len(t, scores, len(tt.wantScores))
			for i := range scores {
				assert.InDelta(t, tt.wantScores[i], scores[i], 1e-15, "line %d", i+1)
			}
			assert.Equal(t, tt.wantCovered, covered)
		})
	}
	// The invalid-UTF-8 case above covers one of two characters.
	scores, _ := chunk.LineScores("\xff\xfe", chunk.SplitLines("\xff\xfe"), []chunk.ScoredSpan{{0, 1, 1}, {1, 2, 0}})
	assert.Equal(t, []float64{0.5}, scores)
}

// TestLineScoresMatchReference checks, on the golden texts (LF only, where
// both line models agree), that the library's line scores from byte spans
// equal the reference's line scores from code-point spans.
func TestLineScoresMatchReference(t *testing.T) {
	for _, file := range []string{"golden_swepruner.json", "golden_lamr.json"} {
		g := loadGolden(t, file)
		for _, c := range g.Cases {
			t.Run(file+"/"+c.Name, func(t *testing.T) {
				require.Equal(t, len(swecompat.SplitLines(c.Code)), len(chunk.SplitLines(c.Code)))
				spans := make([]chunk.ScoredSpan, len(c.Merged))
				for i, m := range c.Merged {
					spans[i] = chunk.ScoredSpan{Start: int(m[0]), End: int(m[1]), Score: m[2]}
				}
				scores, covered := chunk.LineScores(c.Code, chunk.SplitLines(c.Code), chunk.SpansToBytes(c.Code, spans))
				want := lineScoreMap(t, c.RawLineScores)
				for i := range scores {
					w, ok := want[i+1]
					require.Equal(t, ok, covered[i], "line %d", i+1)
					if ok {
						require.InDelta(t, w, scores[i], 1e-12, "line %d", i+1)
					}
				}
			})
		}
	}
}

func TestSpansToBytes(t *testing.T) {
	text := "aé😀\xffz"
	spans := []chunk.ScoredSpan{{0, 1, 0.1}, {1, 2, 0.2}, {2, 3, 0.3}, {3, 4, 0.4}, {4, 5, 0.5}, {0, 5, 1}, {2, 2, 0}, {-1, 9, 0}}
	want := []chunk.ScoredSpan{{0, 1, 0.1}, {1, 3, 0.2}, {3, 7, 0.3}, {7, 8, 0.4}, {8, 9, 0.5}, {0, 9, 1}, {3, 3, 0}, {0, 9, 0}}
	assert.Equal(t, want, chunk.SpansToBytes(text, spans))
	assert.Equal(t, 5, chunk.CodePointLen(text))
}
