package linemodel

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuotedFragments(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"How is a `*` in a pattern handled?", []string{"*"}},
		{"why doesn't `--no-foo` work, and 'Connection: keep-alive'?", []string{"--no-foo", "Connection: keep-alive"}},
		{"the parser's and the lexer's tokens", nil},
		{`what does "$5" become, and "$"?`, []string{"$5", "$"}},
		{"an unclosed `quote", nil},
		{"`a` and `a` again, `` empty", []string{"a"}},
		{"`" + strings.Repeat("x", maxQuotedLen+1) + "`", nil},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, quotedFragments(tc.query), tc.query)
	}
}

func TestQuotedMatch(t *testing.T) {
	lines := []string{"if c == '*':", "    add(STAR)", "x = 1"}
	got := newQuotedMatch(context.Background(), "how is `*` handled, and `STAR`?", lines)
	assert.Equal(t, []float32{0.5, 0.5, 0}, got)
}

// The shipped vectors parse, know common code words and put related words
// closer than unrelated ones.
func TestShippedWordVectors(t *testing.T) {
	wv, err := shippedWordVectors()
	require.NoError(t, err)
	require.Greater(t, len(wv.Words), 1000)
	id := func(w string) int32 {
		i := wv.ID(stem(w))
		require.GreaterOrEqual(t, i, int32(0), w)
		return i
	}
	assert.Greater(t, wv.Cos(id("error"), id("err")), wv.Cos(id("error"), id("width")))
	assert.Greater(t, wv.Cos(id("retry"), id("backoff")), wv.Cos(id("retry"), id("column")))
	assert.InDelta(t, 1, wv.Cos(id("error"), id("error")), 0.02)
}

func TestWordVectorsRoundTrip(t *testing.T) {
	wv, err := NewWordVectors([]string{"alpha", "beta"}, []float32{3, 4, 0, -2}, []float32{1.5, 2.5}, 2)
	require.NoError(t, err)
	var b bytes.Buffer
	_, err = wv.WriteTo(&b)
	require.NoError(t, err)
	got, err := ReadWordVectors(b.Bytes())
	require.NoError(t, err)
	assert.Equal(t, wv.Words, got.Words)
	assert.Equal(t, wv.Vecs, got.Vecs)
	assert.Equal(t, wv.IDF, got.IDF)
	assert.Equal(t, int32(1), got.ID("beta"))
	assert.Equal(t, int32(-1), got.ID("gamma"))
	assert.InDelta(t, -0.8, got.Cos(0, 1), 0.02) // (0.6, 0.8)·(0, -1)
	// Every truncation is an error, never a panic.
	for n := 0; n < b.Len(); n++ {
		_, err := ReadWordVectors(b.Bytes()[:n])
		require.Error(t, err, "truncated at %d", n)
	}
	_, err = NewWordVectors([]string{"a"}, []float32{1}, nil, 1)
	require.Error(t, err)
}

func FuzzReadWordVectors(f *testing.F) {
	wv, _ := NewWordVectors([]string{"alpha", "beta"}, []float32{3, 4, 0, -2}, []float32{1.5, 2.5}, 2)
	var b bytes.Buffer
	_, _ = wv.WriteTo(&b)
	f.Add(b.Bytes())
	f.Add([]byte(wordVecMagic + "\xff\xff\xff\x00\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wv, err := ReadWordVectors(data)
		if err != nil {
			return
		}
		for i := range wv.Words {
			_ = wv.Cos(int32(i), 0)
		}
	})
}

// Soft matching reads a bounded prefix of each line: a 50,000-character
// line costs about what a short one does.
func TestSoftMatchBounded(t *testing.T) {
	wv, err := shippedWordVectors()
	require.NoError(t, err)
	long := strings.Repeat("retryBackoff errorCode ", 50000/23)
	ctx := context.Background()
	q := "how are retries scheduled after an error?"
	sm := newSoftMatch(ctx, wv, q, []string{long + " scheduled", long[:maxSoftScan], "x := 1", ""})
	assert.Greater(t, sm.share[0], sm.share[2])
	// What lies past the scanned prefix (a query word) is not read.
	require.GreaterOrEqual(t, wv.ID(stem("scheduled")), int32(0))
	assert.Equal(t, sm.share[1], sm.share[0])
	assert.Zero(t, sm.share[3])
	// A line holding the query's words verbatim matches fully, and none
	// of it is "soft only".
	sm = newSoftMatch(ctx, wv, "retry error", []string{"retry(error)"})
	assert.InDelta(t, 1, sm.share[0], 1e-6)
	assert.InDelta(t, 0, sm.only[0], 1e-6)
	// No vectors or no known query words: zeros.
	sm = newSoftMatch(ctx, nil, "retry", []string{"retry"})
	assert.Zero(t, sm.share[0])
	sm = newSoftMatch(ctx, wv, "zzqqxx", []string{"retry"})
	assert.Zero(t, sm.share[0])
}
