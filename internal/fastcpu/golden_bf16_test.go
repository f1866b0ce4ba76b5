package fastcpu_test

import (
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

// tolBF16 holds the Go backend's "bf16" configuration against the PyTorch
// float32 reference (docs/performance.md, "bfloat16 products": measured on
// the tiny checkpoints, then about doubled). The float32 path's are 1e-4 /
// 2e-4 / 5e-5 / 1e-4 / 1e-5.
var tolBF16 = bf16Tolerance{hidden: 0.2, emission: 0.25, prob: 0.05, logits: 0.03, score: 0.01, flips: 0.01}

// tolGraphBF16 holds the graph's bfloat16 products (skimmer.WithBF16Products,
// pruner.BF16 on XLA): there attention's products and every product's result
// are bfloat16 too, as in a PyTorch bfloat16 forward, so the deviations are
// about three times those of the Go backend's weight-only rounding. Measured
// on simplego, whose conversions to bfloat16 truncate (the worst case), and
// on XLA CUDA (round to nearest even), then about 1.5× the larger
// (docs/performance.md).
var tolGraphBF16 = bf16Tolerance{hidden: 0.35, emission: 1.0, prob: 0.25, logits: 0.06, score: 0.025, flips: 0.04}

// bf16Tolerance bounds the largest deviations from the PyTorch float32
// reference of one bfloat16 mode. flips bounds the share of keep decisions
// (probability ≥ 0.5) that differ from the reference's.
type bf16Tolerance struct{ hidden, emission, prob, logits, score, flips float64 }

// TestGoldensBF16 runs the golden cases of the tiny checkpoints with the
// weight products in bfloat16 and holds the deviations from the PyTorch
// float32 reference to the bfloat16 tolerances above; it logs the largest
// of each and how many keep decisions (probability ≥ 0.5, SWE-Pruner head)
// flip against the reference.
func TestGoldensBF16(t *testing.T) {
	if !fastcpu.BF16Supported() {
		t.Skip("this CPU/build has no AVX512_BF16 (VDPBF16PS): the bf16 configuration is refused here")
	}
	backend, err := fastcpu.New("bf16")
	require.NoError(t, err)
	defer backend.Finalize()
	require.Equal(t, "bf16", backend.Precision())
	checkGoldensBF16(t, backend, tolBF16)
	st := backend.Stats()
	require.Positive(t, st.BF16Products, "no product ran in bfloat16")
	t.Logf("%d weight products in bfloat16, %d float32 products in all", st.BF16Products, st.NativeProducts)
}

// TestGoldensGraphBF16 builds the graph with bfloat16 products
// (skimmer.WithBF16Products: what pruner.BF16 does on XLA, where the GPU's
// tensor cores multiply bfloat16 with float32 accumulation) and holds it to
// the same bfloat16 tolerances. Here it runs on simplego, whose bfloat16
// products accumulate in float32 too; with PRUNER_GOLDEN_BACKEND set (e.g.
// an XLA CUDA plugin) it runs on that backend instead.
func TestGoldensGraphBF16(t *testing.T) {
	checkGoldensBF16(t, asWrittenBackend(t), tolGraphBF16, skimmer.WithBF16Products())
}

// asWrittenBackend returns the backend PRUNER_GOLDEN_BACKEND names, else
// simplego: one that runs the graph as written (the Go backend would fuse
// attention and round weight products itself). It is finalized when the
// test ends.
func asWrittenBackend(t *testing.T) backends.Backend {
	name := os.Getenv("PRUNER_GOLDEN_BACKEND")
	if name == "" {
		name = pbackend.SimpleGo
	}
	b, err := pbackend.New(name)
	require.NoError(t, err)
	t.Cleanup(b.Finalize)
	t.Logf("backend %s: %s", b.Name(), b.Description())
	return b
}

// checkGoldensBF16 runs the golden cases of the tiny checkpoints on backend
// and holds the deviations from the PyTorch float32 reference to the
// bfloat16 tolerances; it logs the largest of each and how many keep
// decisions (probability ≥ 0.5, SWE-Pruner head) flip against the
// reference.
func checkGoldensBF16(t *testing.T, backend backends.Backend, tol bf16Tolerance, opts ...skimmer.LoadOption) {
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
			var worst struct{ hidden, emission, prob, logits, score float64 }
			flips, decisions := 0, 0
			eachGoldenChunk(t, m, g, func(_ *golden.Case, ch *golden.Chunk, o *skimmer.Output, lo, hi int) {
				want, _, err := ch.EmissionsFlat()
				require.NoError(t, err)
				worst.emission = max(worst.emission, maxDiff(want, o.Emissions[lo*k*2:hi*k*2]))
				worst.logits = max(worst.logits, math.Abs(ch.LYes-float64(o.LYes)), math.Abs(ch.LNo-float64(o.LNo)))
				worst.score = max(worst.score, math.Abs(ch.Score-float64(o.DocScore())))
				if k == 1 {
					for p := ch.DocStart; p < ch.DocEnd; p++ {
						prob := 1 / (1 + math.Exp(float64(o.Emissions[2*p]-o.Emissions[2*p+1])))
						ref := ch.KeepProbs[p-ch.DocStart]
						worst.prob = max(worst.prob, math.Abs(prob-ref))
						decisions++
						if (prob >= 0.5) != (ref >= 0.5) {
							flips++
						}
					}
				} else {
					worst.prob = max(worst.prob, maxDiff(flatten(ch.GatingWeights), o.Gates[lo*k:hi*k]))
				}
				if ch.FusedFeatures != nil {
					worst.hidden = max(worst.hidden, maxDiff(flatten(ch.FusedFeatures), o.Fused))
				}
				for j, key := range idx {
					if hs, ok := ch.HiddenStates[strconv.Itoa(key)]; ok {
						worst.hidden = max(worst.hidden, maxDiff(flatten(hs), o.Hidden[j]))
					}
				}
			})
			t.Logf("bf16 vs PyTorch float32: hidden %.3g, emissions %.3g, probabilities/gates %.3g, document logits %.3g, score %.3g; keep decisions flipped %d of %d",
				worst.hidden, worst.emission, worst.prob, worst.logits, worst.score, flips, decisions)
			require.LessOrEqual(t, worst.hidden, tol.hidden, "hidden states")
			require.LessOrEqual(t, worst.emission, tol.emission, "emissions")
			require.LessOrEqual(t, worst.prob, tol.prob, "probabilities / gates")
			require.LessOrEqual(t, worst.logits, tol.logits, "document logits")
			require.LessOrEqual(t, worst.score, tol.score, "document score")
			require.LessOrEqual(t, float64(flips), tol.flips*float64(decisions), "flipped keep decisions")
		})
	}
}
