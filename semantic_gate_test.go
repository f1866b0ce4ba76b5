package pruner

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSemanticGateFeatures(t *testing.T) {
	for _, tc := range []struct {
		name string
		gate float64
		sims []float64
		want [3]float64
	}{
		{"best and best three", 0.5, []float64{0.1, 0.5, 0.3, 0.2}, [3]float64{0, 0.5, 1.0 / 3}},
		{"fewer than three", 0.5, []float64{0.4, -0.2}, [3]float64{0, 0.4, 0.1}},
		{"no candidates", 0.5, nil, [3]float64{0, 0, 0}},
		{"certain gate stays finite", 1, []float64{0.2}, [3]float64{math.Log((1 - 1e-6) / 1e-6), 0.2, 0.2}},
		{"impossible gate stays finite", 0, []float64{0.2}, [3]float64{math.Log(1e-6 / (1 - 1e-6)), 0.2, 0.2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sims := append([]float64(nil), tc.sims...)
			got := semanticGateFeatures(tc.gate, tc.sims)
			for j := range got {
				assert.InDelta(t, tc.want[j], got[j], 1e-9, "feature %d", j)
			}
			assert.Equal(t, sims, tc.sims, "the similarities are not reordered in place")
		})
	}
}

// A question closer to the text, or a line model surer of it, never reads
// as less relevant.
func TestSemanticRelevanceMonotone(t *testing.T) {
	for j, w := range semanticGateWeights {
		assert.Positive(t, w, "weight %d", j)
	}
	base := []float64{0.1, 0.2, 0.3}
	prev := -1.0
	for _, g := range []float64{0, 0.01, 0.1, 0.3, 0.5, 0.9, 1} {
		p := semanticRelevance(g, base)
		assert.GreaterOrEqual(t, p, prev)
		assert.True(t, p >= 0 && p <= 1)
		prev = p
	}
	prev = -1
	for _, s := range []float64{-1, -0.2, 0, 0.3, 0.6, 1} {
		p := semanticRelevance(0.2, []float64{s, s - 0.1, s - 0.2})
		assert.GreaterOrEqual(t, p, prev)
		prev = p
	}
}

// The semantic scorer's Result.Score is the semantic gate over the line
// model's gate and the encoder's similarities, and WithMinRelevance(0)
// turns both off.
func TestSemanticGateInPipeline(t *testing.T) {
	ctx := context.Background()
	const q = "how long is the backoff between retries?"
	text := "package retry\n\nimport \"time\"\n\n" +
		"// Backoff returns how long to wait before the n-th retry.\nfunc Backoff(n int) time.Duration {\n\td := 100 * time.Millisecond\n\tfor i := 0; i < n; i++ {\n\t\td *= 2\n\t}\n\treturn d\n}\n\n" +
		"// Name is the package's name.\nfunc Name() string { return \"retry\" }\n\n" +
		"// Max is the most retries.\nconst Max = 5\n"
	for i := range 30 {
		text += fmt.Sprintf("\n// Helper%d formats the %d-th field.\nfunc Helper%d(s string) string {\n\treturn strings.Repeat(s, %d)\n}\n", i, i, i, i)
	}
	sem, err := Load(ctx, "internal/bert/testdata/tiny-bert")
	require.NoError(t, err)
	st := sem.sc.(semanticStage)
	var gate float64
	var sims []float64
	judged := false
	st.observe = func(g float64, j bool, s []float64) { gate, judged, sims = g, j, s }
	p := *sem
	p.sc = st
	res, err := p.Prune(ctx, q, text)
	require.NoError(t, err)
	require.True(t, judged)
	require.NotEmpty(t, sims)
	assert.InDelta(t, semanticRelevance(gate, sims), res.Score, 1e-12)

	line, err := Load(ctx, "")
	require.NoError(t, err)
	lres, err := line.Prune(ctx, q, text)
	require.NoError(t, err)
	assert.InDelta(t, lres.Score, gate, 1e-12, "the observed gate is the line model's")

	off, err := Load(ctx, "internal/bert/testdata/tiny-bert", WithMinRelevance(0))
	require.NoError(t, err)
	ores, err := off.Prune(ctx, q, text)
	require.NoError(t, err)
	loff, err := Load(ctx, "", WithMinRelevance(0))
	require.NoError(t, err)
	lores, err := loff.Prune(ctx, q, text)
	require.NoError(t, err)
	assert.Equal(t, lores.Score, ores.Score)
}

// A scorer's RelevanceFull moves where a doubtful text starts to keep less.
func TestRelevanceFullPerScorer(t *testing.T) {
	ctx := context.Background()
	p := &Pruner{}
	for _, tc := range []struct {
		full, prob, withheld float64
		offTopic             bool
	}{
		{0, 0.25, 1 - 0.25/relevanceFull, false},
		{0.5, 0.25, 0.5, false},
		{0.5, 0.6, 0, false},
		{0.5, 0.05, 0, true},
	} {
		ts := &tokenScores{Judged: true, Relevance: tc.prob, RelevanceMin: 0.07, RelevanceFull: tc.full}
		v, err := p.judgeRelevance(ctx, ts)
		require.NoError(t, err)
		assert.Equal(t, tc.offTopic, v.offTopic, "%+v", tc)
		assert.InDelta(t, tc.withheld, v.withheld, 1e-12, "%+v", tc)
	}
}
