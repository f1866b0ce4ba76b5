package chunk_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
)

// offsetTokens builds tokens from code-point spans of text, with byte spans
// derived from the text.
func offsetTokens(text string, offsets [][2]int) []chunk.Token {
	out := make([]chunk.Token, len(offsets))
	for i, o := range offsets {
		out[i] = chunk.Token{
			Start: o[0], End: o[1],
			ByteStart: chunk.CodePointToByte(text, o[0]), ByteEnd: chunk.CodePointToByte(text, o[1]),
		}
	}
	return out
}

// pySlice is Python's text[s:e] on code points.
func pySlice(text string, s, e int) string {
	r := []rune(text)
	return string(r[s:e])
}

func TestPlanWindowsGolden(t *testing.T) {
	g := loadGolden(t, "golden_swepruner.json")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			ws, err := chunk.PlanWindows(c.Code, offsetTokens(c.Code, c.CodeTokenOffsets), c.CodeMaxTokens, c.Overlap)
			require.NoError(t, err)
			require.Len(t, ws, len(c.Chunks))
			if c.Chunked {
				require.Len(t, ws, 30)
			}
			for i, w := range ws {
				ch := c.Chunks[i]
				assert.Equal(t, [2]int{ch.StartChar, ch.EndChar}, [2]int{w.Start, w.End}, "window %d", i)
				assert.Equal(t, pySlice(c.Code, ch.StartChar, ch.EndChar), w.Text(c.Code), "window %d", i)
				assert.LessOrEqual(t, w.EndToken-w.FirstToken, c.CodeMaxTokens)
			}
			// Consecutive windows share exactly the overlap.
			for i := 1; i < len(ws); i++ {
				assert.Equal(t, c.CodeMaxTokens-c.Overlap, ws[i].FirstToken-ws[i-1].FirstToken)
			}
			assert.Equal(t, len(c.CodeTokenOffsets), ws[len(ws)-1].EndToken)
		})
	}
}

func TestPlanWindowsEdges(t *testing.T) {
	ascii := "abcdefghij"
	oneCharTokens := func(text string) []chunk.Token {
		var out []chunk.Token
		cp := 0
		for b, r := range text {
			out = append(out, chunk.Token{Start: cp, End: cp + 1, ByteStart: b, ByteEnd: b + utf8.RuneLen(r)})
			cp++
		}
		return out
	}
	tests := []struct {
		name    string
		text    string
		tokens  []chunk.Token
		budget  int
		overlap int
		want    [][2]int // code-point spans
		wantErr error
	}{
		{name: "empty text", text: "", budget: 4, want: nil},
		{name: "fits", text: ascii, tokens: oneCharTokens(ascii), budget: 10, overlap: 3, want: [][2]int{{0, 10}}},
		{name: "stride", text: ascii, tokens: oneCharTokens(ascii), budget: 4, overlap: 1,
			want: [][2]int{{0, 4}, {3, 7}, {6, 10}}},
		{name: "last window short", text: ascii, tokens: oneCharTokens(ascii), budget: 4, overlap: 0,
			want: [][2]int{{0, 4}, {4, 8}, {8, 10}}},
		{name: "overlap above half the budget is half", text: ascii, tokens: oneCharTokens(ascii), budget: 4, overlap: 3,
			want: [][2]int{{0, 4}, {2, 6}, {4, 8}, {6, 10}}},
		{name: "overlap equal budget means none", text: ascii, tokens: oneCharTokens(ascii), budget: 5, overlap: 5,
			want: [][2]int{{0, 5}, {5, 10}}},
		{name: "overlap above budget means none", text: ascii, tokens: oneCharTokens(ascii), budget: 5, overlap: 50,
			want: [][2]int{{0, 5}, {5, 10}}},
		{name: "negative overlap means none", text: ascii, tokens: oneCharTokens(ascii), budget: 5, overlap: -2,
			want: [][2]int{{0, 5}, {5, 10}}},
		{name: "budget one", text: "abc", tokens: oneCharTokens("abc"), budget: 1, overlap: 50,
			want: [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{name: "budget zero", text: ascii, tokens: oneCharTokens(ascii), budget: 0, wantErr: chunk.ErrInvalidBudget},
		{name: "budget negative", text: ascii, budget: -1, wantErr: chunk.ErrInvalidBudget},
		{
			// An emoji split into two byte-level tokens that both carry the
			// whole character's span: a window edge between them still cuts
			// on a character boundary.
			name: "split multi-byte char", text: "a😀b",
			tokens: []chunk.Token{
				{Start: 0, End: 1, ByteStart: 0, ByteEnd: 1},
				{Start: 1, End: 2, ByteStart: 1, ByteEnd: 3},
				{Start: 1, End: 2, ByteStart: 3, ByteEnd: 5},
				{Start: 2, End: 3, ByteStart: 5, ByteEnd: 6},
			},
			budget: 2, overlap: 0,
			want: [][2]int{{0, 2}, {1, 3}},
		},
		{name: "non-ASCII", text: "héllo wörld", tokens: oneCharTokens("héllo wörld"), budget: 4, overlap: 2,
			want: [][2]int{{0, 4}, {2, 6}, {4, 8}, {6, 10}, {8, 11}}},
		{name: "text with no tokens", text: "\u0301", budget: 3, want: [][2]int{{0, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := chunk.PlanWindows(tt.text, tt.tokens, tt.budget, tt.overlap)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var got [][2]int
			for _, w := range ws {
				got = append(got, [2]int{w.Start, w.End})
				txt := w.Text(tt.text)
				assert.True(t, utf8.ValidString(txt), "window %q is not valid UTF-8", txt)
				assert.Equal(t, pySlice(tt.text, w.Start, w.End), txt)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPlanWindowsLargeText(t *testing.T) {
	// Windows of a long text cover it without gaps and in order.
	text := strings.Repeat("héllo, wörld 😀 ", 2000)
	var tokens []chunk.Token
	cp := 0
	for b, r := range text {
		tokens = append(tokens, chunk.Token{Start: cp, End: cp + 1, ByteStart: b, ByteEnd: b + utf8.RuneLen(r)})
		cp++
	}
	ws, err := chunk.PlanWindows(text, tokens, 500, 50)
	require.NoError(t, err)
	require.Equal(t, (len(tokens)-50+449)/450, len(ws))
	assert.Equal(t, 0, ws[0].ByteStart)
	assert.Equal(t, len(text), ws[len(ws)-1].ByteEnd)
	for i, w := range ws {
		assert.Equal(t, chunk.CodePointToByte(text, w.Start), w.ByteStart, "window %d", i)
		assert.Equal(t, chunk.CodePointToByte(text, w.End), w.ByteEnd, "window %d", i)
		if i > 0 {
			assert.Less(t, w.ByteStart, ws[i-1].ByteEnd, "window %d must overlap the previous one", i)
		}
	}
}
