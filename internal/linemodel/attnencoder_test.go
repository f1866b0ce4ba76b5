package linemodel

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyAttnEncoder is tinyEncoder's tables with posLen positions and the
// given attention weights (nil: zero).
func tinyAttnEncoder(t *testing.T, posLen int, pos, w []float32) *AttnEncoder {
	t.Helper()
	b := tinyEncoder(t)
	D := b.Dim
	deq := func(tab []int8, sc []float32) []float32 {
		out := make([]float32, len(tab))
		for i, x := range tab {
			out[i] = sc[i/D] * float32(x)
		}
		return out
	}
	if pos == nil {
		pos = make([]float32, posLen*D)
	}
	if w == nil {
		w = make([]float32, D*D)
	}
	e, err := NewAttnEncoder(b.Words, b.IDF, deq(b.Q, b.QScale), deq(b.C, b.CScale), pos, w, w, w, D, posLen)
	require.NoError(t, err)
	return e
}

// Without positions and attention weights the attention encoder is the
// bag of words: its columns are the bag's, on every line.
func TestAttnEncMatchReducesToBag(t *testing.T) {
	lines := []string{"func draw() {", "  render()", "}", "", "func loop() {", "  attempt++", "  render(attempt)", "}", "x := attempt + attempt"}
	def := []int32{10, 10, 10, -1, 20, 20, 20, 20, -1}
	last := func(d int32) int { return map[int32]int{10: 2, 20: 7}[d] }
	bag := newEncMatch(context.Background(), tinyEncoder(t), "when does it giveup", lines, def, last)
	att := newAttnEncMatch(context.Background(), tinyAttnEncoder(t, 48, nil, nil), "when does it giveup", lines, def, last)
	require.Len(t, att.line, len(lines))
	assert.InDeltaSlice(t, bag.line, att.line, 1e-5)
	assert.InDeltaSlice(t, bag.win, att.win, 1e-5)
	assert.InDeltaSlice(t, bag.def, att.def, 1e-5)
	assert.InDelta(t, bag.best, att.best, 1e-5)
}

// A window of more words than positions reads the words around its own
// line, and a definition its first words.
func TestAttnEncMatchWindowCentred(t *testing.T) {
	e := tinyAttnEncoder(t, 2, nil, nil)
	lines := []string{"render render render", "render", "attempt", "render", "render render render"}
	m := newAttnEncMatch(context.Background(), e, "giveup", lines, nil, nil)
	// Window of line 2: lines 0-4, 9 words; the 2 read are line 2's
	// attempt and one neighbour's render.
	assert.InDelta(t, 0.7071, m.win[2], 0.02)
	assert.InDelta(t, 0, m.win[0], 0.02, "lines 0-2: the first 2 words around line 0 are render")

	defLines := []string{"func f() {", "render render", "attempt", "}"}
	def := []int32{1, 1, 1, 1}
	m = newAttnEncMatch(context.Background(), e, "giveup", defLines, def, func(int32) int { return 3 })
	assert.InDelta(t, 0, m.def[2], 0.02, "the definition's first 2 words are render")
}

// Nothing to score, a cancelled context, a long line: no columns or
// bounded work, no panic.
func TestAttnEncMatchEdges(t *testing.T) {
	e := tinyAttnEncoder(t, 4, []float32{.1, .2, .3, .4, .5, .6, .7, .8}, []float32{1, -1, .5, 2})
	lines := []string{"attempt render", "render attempt"}
	assert.Nil(t, newAttnEncMatch(context.Background(), e, "what now", lines, nil, nil).line)
	assert.Nil(t, newAttnEncMatch(context.Background(), nil, "giveup", lines, nil, nil).line)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Nil(t, newAttnEncMatch(ctx, e, "giveup", lines, nil, nil).line)
	m := newAttnEncMatch(context.Background(), e, "giveup", lines, nil, nil)
	assert.NotEqual(t, m.line[0], m.line[1], "with positions and attention, word order counts")
	long := []string{strings.Repeat("attempt ", 50000/8)}
	m = newAttnEncMatch(context.Background(), e, "giveup", long, nil, nil)
	assert.Greater(t, m.line[0], float32(0.5))
}

// The encoder's file round-trips byte for byte and is refused when
// truncated, padded or of another format.
func TestAttnEncoderFile(t *testing.T) {
	e := tinyAttnEncoder(t, 3, []float32{.1, .2, .3, .4, .5, .6}, []float32{1, -1, .5, 2})
	var b bytes.Buffer
	_, err := e.WriteTo(&b)
	require.NoError(t, err)
	back, err := ReadAttnEncoder(b.Bytes())
	require.NoError(t, err)
	var b2 bytes.Buffer
	_, err = back.WriteTo(&b2)
	require.NoError(t, err)
	assert.Equal(t, b.Bytes(), b2.Bytes())
	data := b.Bytes()
	for _, cut := range []int{0, 3, 8, 14, len(data) / 2, len(data) - 1} {
		_, err := ReadAttnEncoder(data[:cut])
		assert.Error(t, err, "truncated at %d", cut)
	}
	_, err = ReadAttnEncoder(append(append([]byte{}, data...), 0))
	assert.Error(t, err, "a byte too many")
	_, err = ReadAttnEncoder(wordVecData)
	assert.ErrorContains(t, err, "bad magic")
	_, err = NewAttnEncoder(e.Words, e.IDF, make([]float32, 6), make([]float32, 6), make([]float32, 5), make([]float32, 4), make([]float32, 4), make([]float32, 4), 2, 3)
	assert.Error(t, err, "positions of the wrong size")
}

// Whatever the bytes, ReadAttnEncoder returns an error or an encoder whose
// forward pass runs on any of its words.
func FuzzReadAttnEncoder(f *testing.F) {
	e, _ := NewAttnEncoder([]string{"alpha", "beta"}, []float32{1, 2}, []float32{1, 0, 0, 1}, []float32{0, 1, 1, 0},
		[]float32{.1, .2, .3, .4}, []float32{1, 0, 0, 1}, []float32{0, 1, 1, 0}, []float32{1, 1, 0, 1}, 2, 2)
	var b bytes.Buffer
	_, _ = e.WriteTo(&b)
	f.Add(b.Bytes())
	f.Add([]byte(attnEncMagic + "\x02\x00\x00\x00\xff\xff\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ReadAttnEncoder(data)
		if err != nil {
			return
		}
		ue := e.NewUnitEncoder()
		ids := make([]int32, 0, e.Len+1)
		for i := 0; i <= e.Len; i++ {
			ids = append(ids, int32(i%len(e.Words)))
		}
		ue.Encode(make([]float32, e.Dim), ids)
	})
}
