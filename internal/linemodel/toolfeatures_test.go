package linemodel

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

func TestToolColumns(t *testing.T) {
	log := "2031-03-02 14:00:01,100 INFO reindex: shard 1 done (40 docs)\n" +
		"2031-03-02 14:00:01,200 INFO reindex: shard 2 done (40 docs)\n" +
		"2031-03-02 14:00:01,300 INFO reindex: shard 3 done (40 docs)\n" +
		"Traceback (most recent call last):\n" +
		"  File \"/srv/app/reindex.py\", line 88, in flush\n" +
		"KeyError: shard 4 has no mapping\n" +
		"4.0K\tsrc/a.go\n" +
		"1.2M\tsrc/big.go\n" +
		"store/cache.go:19:7: undefined: evictAll\n"
	X, n := Features(context.Background(), "why did the reindex stop?", log, syntax.Text)
	require.Equal(t, 9, n)
	col := func(name string) []float32 {
		j := slices.Index(FeatureNames, name)
		require.GreaterOrEqual(t, j, 0, name)
		out := make([]float32, n)
		for i := range out {
			out[i] = X[i*NumFeatures+j]
		}
		return out
	}
	assert.Equal(t, []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}, col("is_text"))
	assert.Equal(t, []float32{0, 0, 0, 0.5, 0, 0.5, 0, 0, 0.5}, col("err_word"), "Traceback, KeyError, undefined: one word each")
	assert.Equal(t, []float32{0, 0, 0, 0, 1, 0, 0, 0, 1}, col("loc_ref"))
	freq := col("tmpl_freq")
	assert.Positive(t, freq[0], "the three page lines share a shape")
	assert.Equal(t, freq[0], freq[2])
	assert.Zero(t, freq[5], "a line whose shape is unique")
	rank := col("num_rank")
	assert.Greater(t, rank[7], rank[6], "1.2M is larger than 4.0K")
	assert.Zero(t, rank[3], "no number on the line")

	code, _ := Features(context.Background(), "q", "package p\n", syntax.Go)
	assert.Zero(t, code[slices.Index(FeatureNames, "is_text")])
}

// TestToolColumnsBounded: a 50,000-character line of colons and digits
// costs no more than a short one (hasLocation was quadratic on it).
func TestToolColumnsBounded(t *testing.T) {
	long := strings.Repeat("a:1", 200_000) // 600 KB, no delimiter
	text := strings.Repeat(long[:50_000]+"\n", 40) + long + "\n"
	allocs := testing.AllocsPerRun(1, func() {
		X, n := Features(context.Background(), "q", text, syntax.Text)
		require.Equal(t, 41, n)
		require.Len(t, X, 41*NumFeatures)
	})
	assert.Less(t, allocs, 5000.0)
	assert.True(t, hasLocation("x.go:1"))
	assert.False(t, hasLocation(long), "no path before the colons")
}

func TestNumRankTies(t *testing.T) {
	ti := newToolInfo(context.Background(), []string{"4 a", "9 b", "4 c", "x"}, syntax.Text)
	assert.Equal(t, ti.numRank[0], ti.numRank[2], "equal numbers share a rank")
	assert.Greater(t, ti.numRank[1], ti.numRank[0])
	assert.Zero(t, ti.numRank[3])
}

func TestHasLocation(t *testing.T) {
	for l, want := range map[string]bool{
		"parser/lexer.go:6:2: x":                    true,
		"    at Object.<anonymous> (lib/x.js:12:5)": true,
		`  File "a.py", line 3, in f`:               true,
		"12:30:01 INFO started":                     false,
		"Date: Mon Nov 24 10:43:03 2025":            false,
		"":                                          false,
		"a:":                                        false,
	} {
		assert.Equal(t, want, hasLocation(l), "%q", l)
	}
}
