package bert

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tinyDir = "testdata/tiny-bert"

// tolerance is the largest difference from PyTorch accepted anywhere.
const tolerance = 1e-4

type tinyGolden struct {
	Texts  []string
	IDs    [][]int32
	Hidden [][]float32
	Mean   [][]float32
	CLS    [][]float32
}

func readGolden[T any](tb testing.TB, path string) T {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	var g T
	require.NoError(tb, json.Unmarshal(data, &g))
	return g
}

func loadTiny(tb testing.TB, opts ...Option) *Model {
	tb.Helper()
	m, err := Load(context.Background(), tinyDir, opts...)
	require.NoError(tb, err)
	return m
}

// maxDiff returns the largest |a−b| and where it is.
func maxDiff(tb testing.TB, a, b []float32) (float64, int) {
	tb.Helper()
	require.Equal(tb, len(a), len(b))
	worst, at := 0.0, -1
	for i := range a {
		if d := math.Abs(float64(a[i]) - float64(b[i])); d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	return worst, at
}

func requireClose(tb testing.TB, want, got []float32, tol float64, what string) float64 {
	tb.Helper()
	d, at := maxDiff(tb, want, got)
	require.LessOrEqual(tb, d, tol, "%s: max difference %.3g at %d", what, d, at)
	return d
}

// TestTinyGolden compares the tiny random BERT with PyTorch (HF's BertModel,
// testdata/gen_golden.py): token ids, last hidden states and pooled
// vectors, the texts run as one padded batch there and packed here, and
// one at a time.
func TestTinyGolden(t *testing.T) {
	g := readGolden[tinyGolden](t, "testdata/tiny_golden.json")
	m := loadTiny(t)
	ctx := context.Background()
	require.Equal(t, 48, m.MaxLength())
	for i, text := range g.Texts {
		assert.Equal(t, g.IDs[i], m.Tokenizer().Sequence(text, m.MaxLength()), "ids of %q", text)
	}
	hidden, err := m.HiddenStates(ctx, g.IDs)
	require.NoError(t, err)
	worst := 0.0
	for i := range g.IDs {
		worst = max(worst, requireClose(t, g.Hidden[i], hidden[i], tolerance, "hidden states of text "+g.Texts[i]))
	}
	vecs, err := m.Embed(ctx, g.Texts)
	require.NoError(t, err)
	for i := range g.Texts {
		worst = max(worst, requireClose(t, g.Mean[i], vecs[i], tolerance, "mean-pooled vector of "+g.Texts[i]))
		one, err := m.Embed(ctx, g.Texts[i:i+1])
		require.NoError(t, err)
		requireClose(t, g.Mean[i], one[0], tolerance, "alone: "+g.Texts[i])
	}
	t.Logf("max difference from PyTorch: %.3g", worst)
}
