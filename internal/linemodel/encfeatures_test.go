package linemodel

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyEncoder maps the question word "giveup" onto the code word
// "attempt" (and nothing else onto anything), in width 2.
func tinyEncoder(t *testing.T) *PairEncoder {
	t.Helper()
	words := []string{stem("giveup"), stem("attempt"), stem("render")}
	idf := []float32{1, 1, 1}
	q := []float32{1, 0, 0, 1, 0, 1}
	c := []float32{0, 1, 1, 0, 0, 1}
	e, err := NewPairEncoder(words, idf, q, c, 2)
	require.NoError(t, err)
	return e
}

func TestEncMatch(t *testing.T) {
	e := tinyEncoder(t)
	lines := []string{
		"func draw() {", // 0
		"  render()",    // 1
		"}",             // 2
		"",              // 3
		"func loop() {", // 4
		"  attempt++",   // 5
		"}",             // 6
	}
	def := []int32{10, 10, 10, -1, 20, 20, 20}
	last := func(d int32) int { return map[int32]int{10: 2, 20: 6}[d] }
	m := newEncMatch(context.Background(), e, "when does it giveup", lines, def, last)
	require.Len(t, m.line, len(lines))
	assert.InDelta(t, 1, m.line[5], 0.02, "the line that does it")
	assert.InDelta(t, 0, m.line[1], 0.02, "render is orthogonal to the question")
	assert.Zero(t, m.line[0], "no vocabulary word: 0")
	assert.InDelta(t, 0.7071, m.win[3], 0.02, "the window of 3 (lines 1-5) holds render and attempt")
	assert.InDelta(t, 1, m.win[6], 0.02, "the window of 6 (lines 4-6) holds attempt alone")
	assert.InDelta(t, 0, m.win[1], 0.02, "the window of 1 (lines 0-3) holds only render")
	assert.InDelta(t, 1, m.def[4], 0.02, "the definition holding line 5")
	assert.InDelta(t, 0, m.def[0], 0.02)
	assert.Zero(t, m.def[3], "outside any definition")
	assert.InDelta(t, 1, m.best, 0.02)

	// A question without vocabulary words, no encoder, a cancelled
	// context: no columns, no panic.
	assert.Nil(t, newEncMatch(context.Background(), e, "what now", lines, def, last).line)
	assert.Nil(t, newEncMatch(context.Background(), nil, "giveup", lines, def, last).line)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Nil(t, newEncMatch(ctx, e, "giveup", lines, def, last).line)
	// A definition table of another length is ignored, not indexed.
	m = newEncMatch(context.Background(), e, "giveup", lines, def[:2], last)
	assert.Zero(t, m.def[5])
	assert.InDelta(t, 1, m.line[5], 0.02)
	// A 50,000-character line is read up to the scan bound.
	long := []string{strings.Repeat("attempt ", 50000/8)}
	m = newEncMatch(context.Background(), e, "giveup", long, nil, nil)
	assert.InDelta(t, 1, m.line[0], 0.02)
}

// TestShippedEncoder: the embedded encoder parses, writes back byte for
// byte, and fails loudly when truncated or of another format.
func TestShippedEncoder(t *testing.T) {
	e, err := shippedEncoder()
	require.NoError(t, err)
	require.NotEmpty(t, e.Words)
	var b bytes.Buffer
	_, err = e.WriteTo(&b)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(encoderData, b.Bytes()), "round trip changed the file")
	for _, cut := range []int{0, 5, 12, len(encoderData) / 3, len(encoderData) - 1} {
		_, err := ReadPairEncoder(encoderData[:cut])
		assert.Error(t, err, "truncated at %d", cut)
	}
	_, err = ReadPairEncoder(wordVecData)
	assert.ErrorContains(t, err, "not a pair-encoder file")
}
