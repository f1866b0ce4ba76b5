package fastcpu_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/stretchr/testify/require"

	pbackend "github.com/prunekit/pruner/internal/backend"
	"github.com/prunekit/pruner/internal/fastcpu"
	"github.com/prunekit/pruner/internal/golden"
	"github.com/prunekit/pruner/internal/skimmer"
)

// Tolerances of internal/skimmer's golden test (float32 Go vs float32 PyTorch).
const (
	tolHidden    = 1e-4
	tolEmission  = 2e-4
	tolProb      = 5e-5
	tolDocLogits = 1e-4
	tolScore     = 1e-5
)

func maxDiff(want []float64, got []float32) float64 {
	worst := 0.0
	for i := range want {
		d := math.Abs(want[i] - float64(got[i]))
		if d > worst || math.IsNaN(d) {
			worst = d
		}
	}
	return worst
}

func flatten(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// TestGoldensOnFastgo runs the skimmer golden checks (hidden states, fused
// features, emissions, gates, document logits and scores of the tiny
// checkpoints against the PyTorch reference) on the fastgo backend.
// Each kernel path is forced in turn: AVX-512 (the default where the CPU
// has it), AVX2 and pure Go.
func TestGoldensOnFastgo(t *testing.T) {
	for _, config := range []string{"", "avx2", "purego"} {
		t.Run("config="+config, func(t *testing.T) { testGoldens(t, config) })
	}
}

func testGoldens(t *testing.T, config string) {
	backend, err := fastcpu.New(config)
	require.NoError(t, err)
	defer backend.Finalize()
	t.Logf("micro-kernel: %s", backend.Kernel())
	checkGoldens(t, backend)
	st := backend.Stats()
	t.Logf("fastgo lowered %d products and fused %d attention blocks", st.NativeProducts, st.FusedAttention)
	require.Positive(t, st.FusedAttention, "no attention was fused: the fast path did not run")
	require.Positive(t, st.NativeProducts)
}

// TestGoldensOnNamedBackend runs the same golden checks on the backend
// PRUNER_GOLDEN_BACKEND names (any name internal/backend.New accepts, e.g.
// "xla:cuda" or "xla:/path/to/xla_cuda_plugin.so" in a binary built with
// -tags xla): how a GPU run is checked against the PyTorch reference.
func TestGoldensOnNamedBackend(t *testing.T) {
	name := os.Getenv("PRUNER_GOLDEN_BACKEND")
	if name == "" {
		t.Skip("set PRUNER_GOLDEN_BACKEND to a backend name to run the goldens on it")
	}
	b, err := pbackend.New(name)
	require.NoError(t, err)
	defer b.Finalize()
	t.Logf("backend %s: %s", b.Name(), b.Description())
	checkGoldens(t, b)
}

// TestGoldensQueryBlocks runs the goldens with the decoder's attention in
// blocks of 16 queries (skimmer.WithQueryBlock) on simplego, which runs the
// graph as written: skipping the masked keys must not move any output
// beyond the float32 tolerances. With PRUNER_GOLDEN_BACKEND set it runs on
// that backend instead.
func TestGoldensQueryBlocks(t *testing.T) {
	checkGoldens(t, asWrittenBackend(t), skimmer.WithQueryBlock(16))
}

// checkGoldens compares the tiny checkpoints' internals on b with the
// PyTorch reference at the stated tolerances.
func checkGoldens(t *testing.T, backend backends.Backend, opts ...skimmer.LoadOption) {
	for _, tc := range []struct{ checkpoint, golden string }{
		{"tiny-swepruner", "golden_swepruner.json"},
		{"tiny-lamr", "golden_lamr.json"},
	} {
		t.Run(tc.checkpoint, func(t *testing.T) {
			m, err := skimmer.Load(filepath.Join(golden.Dir(), tc.checkpoint), backend, opts...)
			require.NoError(t, err)
			g, err := golden.Load(tc.golden)
			require.NoError(t, err)
			idx := m.Config().LayerIndices
			k := m.Config().NumRubrics
			eachGoldenChunk(t, m, g, func(c *golden.Case, ch *golden.Chunk, o *skimmer.Output, lo, hi int) {
				want, wk, err := ch.EmissionsFlat()
				require.NoError(t, err)
				require.Equal(t, k, wk)
				require.LessOrEqual(t, maxDiff(want, o.Emissions[lo*k*2:hi*k*2]), tolEmission, c.Name+" emissions")
				require.InDelta(t, ch.LYes, o.LYes, tolDocLogits, c.Name+" l_yes")
				require.InDelta(t, ch.LNo, o.LNo, tolDocLogits, c.Name+" l_no")
				require.InDelta(t, ch.Score, o.DocScore(), tolScore, c.Name+" score")
				if k == 1 {
					probs := make([]float32, 0, ch.DocEnd-ch.DocStart)
					for p := ch.DocStart; p < ch.DocEnd; p++ {
						probs = append(probs, float32(1/(1+math.Exp(float64(o.Emissions[2*p]-o.Emissions[2*p+1])))))
					}
					require.LessOrEqual(t, maxDiff(ch.KeepProbs, probs), tolProb, c.Name+" keep probs")
				} else {
					require.LessOrEqual(t, maxDiff(flatten(ch.GatingWeights), o.Gates[lo*k:hi*k]), tolProb, c.Name+" gates")
				}
				if ch.FusedFeatures != nil {
					require.LessOrEqual(t, maxDiff(flatten(ch.FusedFeatures), o.Fused), tolHidden, c.Name+" fused")
				}
				for j, key := range idx {
					hs, ok := ch.HiddenStates[strconv.Itoa(key)]
					if !ok {
						continue
					}
					require.LessOrEqual(t, maxDiff(flatten(hs), o.Hidden[j]), tolHidden, c.Name+" hidden "+strconv.Itoa(key))
				}
			})
		})
	}
}

// eachGoldenChunk runs every case of g through m and calls f for each of
// its chunks with the chunk's outputs and the span [lo, hi) of positions
// the reference scored.
func eachGoldenChunk(t *testing.T, m *skimmer.Model, g *golden.File, f func(c *golden.Case, ch *golden.Chunk, o *skimmer.Output, lo, hi int)) {
	t.Helper()
	for ci := range g.Cases {
		c := &g.Cases[ci]
		rows := make([][]int32, len(c.Chunks))
		for i, ch := range c.Chunks {
			rows[i] = ch.InputIDs
		}
		outs, err := m.RunInternals(context.Background(), rows)
		require.NoError(t, err)
		for i := range c.Chunks {
			ch := &c.Chunks[i]
			lo, hi := ch.DocStart, ch.DocEnd
			if ch.AllPositions() {
				lo, hi = 0, len(ch.InputIDs)
			}
			f(c, ch, &outs[i], lo, hi)
		}
	}
}
