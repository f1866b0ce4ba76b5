package fastcpu_test

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/fastcpu"
	"github.com/prunekit/pruner/internal/golden"
	"github.com/prunekit/pruner/internal/skimmer"
)

// Tolerances of the "bf16" configuration against the PyTorch float32
// reference (docs/performance.md, "bfloat16 products": measured on the tiny
// checkpoints, then about doubled). The float32 path's are 1e-4 / 2e-4 /
// 5e-5 / 1e-4 / 1e-5.
const (
	tolBF16Hidden    = 0.2
	tolBF16Emission  = 0.25
	tolBF16Prob      = 0.05
	tolBF16DocLogits = 0.03
	tolBF16Score     = 0.01
	// tolBF16Flips bounds the share of keep decisions (probability ≥ 0.5)
	// that differ from the reference's.
	tolBF16Flips = 0.01
)

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
	for _, tc := range []struct{ checkpoint, golden string }{
		{"tiny-swepruner", "golden_swepruner.json"},
		{"tiny-lamr", "golden_lamr.json"},
	} {
		t.Run(tc.checkpoint, func(t *testing.T) {
			m, err := skimmer.Load(filepath.Join(golden.Dir(), tc.checkpoint), backend)
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
			require.LessOrEqual(t, worst.hidden, tolBF16Hidden, "hidden states")
			require.LessOrEqual(t, worst.emission, tolBF16Emission, "emissions")
			require.LessOrEqual(t, worst.prob, tolBF16Prob, "probabilities / gates")
			require.LessOrEqual(t, worst.logits, tolBF16DocLogits, "document logits")
			require.LessOrEqual(t, worst.score, tolBF16Score, "document score")
			require.LessOrEqual(t, float64(flips), tolBF16Flips*float64(decisions), "flipped keep decisions")
		})
	}
	st := backend.Stats()
	require.Positive(t, st.BF16Products, "no product ran in bfloat16")
	t.Logf("%d weight products in bfloat16, %d float32 products in all", st.BF16Products, st.NativeProducts)
}
