package skimmer

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/golden"
)

// Tolerances from the reference README (float32 Go vs float32 goldens).
const (
	tolHidden    = 1e-4
	tolEmission  = 2e-4
	tolProb      = 5e-5
	tolDocLogits = 1e-4
	tolScore     = 1e-5
)

func loadTiny(t testing.TB, name string) *Model {
	t.Helper()
	backend, err := simplego.New("ops_sequential") // as the library runs it: v0.26's parallel scheduler races
	require.NoError(t, err)
	m, err := Load(filepath.Join(golden.Dir(), name), backend)
	require.NoError(t, err)
	return m
}

func assertClose(t *testing.T, what string, want []float64, got []float32, tol float64) {
	t.Helper()
	require.Len(t, got, len(want), what)
	worst, at := 0.0, -1
	for i := range want {
		if d := math.Abs(want[i] - float64(got[i])); d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	t.Logf("%s: max abs diff %.3g (tol %.0e)", what, worst, tol)
	require.LessOrEqualf(t, worst, tol, "%s: max |diff| %.3g at %d (want %v got %v)", what, worst, at,
		func() any {
			if at >= 0 {
				return want[at]
			}
			return nil
		}(), func() any {
			if at >= 0 {
				return got[at]
			}
			return nil
		}())
}

func flatten(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

func TestGoldens(t *testing.T) {
	for _, tc := range []struct{ checkpoint, golden string }{
		{"tiny-swepruner", "golden_swepruner.json"},
		{"tiny-lamr", "golden_lamr.json"},
	} {
		t.Run(tc.checkpoint, func(t *testing.T) {
			m := loadTiny(t, tc.checkpoint)
			g, err := golden.Load(tc.golden)
			require.NoError(t, err)
			idx := m.Config().LayerIndices
			require.Equal(t, [3]int{g.LayerIndices["early"], g.LayerIndices["middle"], g.LayerIndices["final"]}, idx)
			for _, c := range g.Cases {
				chunks := c.Chunks
				if len(chunks) > 4 {
					chunks = []golden.Chunk{chunks[0], chunks[len(chunks)/2], chunks[len(chunks)-1]}
				}
				rows := make([][]int32, len(chunks))
				for i, ch := range chunks {
					rows[i] = ch.InputIDs
				}
				outs, err := m.RunInternals(context.Background(), rows)
				require.NoError(t, err)
				for i, ch := range chunks {
					o := outs[i]
					lo, hi := ch.DocStart, ch.DocEnd
					if ch.AllPositions() {
						lo, hi = 0, len(ch.InputIDs)
					}
					k := m.Config().NumRubrics
					want, wk, err := ch.EmissionsFlat()
					require.NoError(t, err)
					require.Equal(t, k, wk)
					assertClose(t, c.Name+" emissions", want, o.Emissions[lo*k*2:hi*k*2], tolEmission)
					require.InDelta(t, ch.LYes, o.LYes, tolDocLogits, c.Name+" l_yes")
					require.InDelta(t, ch.LNo, o.LNo, tolDocLogits, c.Name+" l_no")
					require.InDelta(t, ch.Score, o.DocScore(), tolScore, c.Name+" score")
					if k == 1 {
						probs := make([]float32, 0, ch.DocEnd-ch.DocStart)
						for p := ch.DocStart; p < ch.DocEnd; p++ {
							probs = append(probs, float32(sigmoid(float64(o.Emissions[2*p+1]-o.Emissions[2*p]))))
						}
						assertClose(t, c.Name+" keep probs", ch.KeepProbs, probs, tolProb)
					} else {
						assertClose(t, c.Name+" gates", flatten(ch.GatingWeights), o.Gates[lo*k:hi*k], tolProb)
					}
					if ch.FusedFeatures != nil {
						assertClose(t, c.Name+" fused", flatten(ch.FusedFeatures), o.Fused, tolHidden)
					}
					for j, key := range []int{idx[0], idx[1], idx[2]} {
						hs, ok := ch.HiddenStates[itoa(key)]
						if !ok {
							continue
						}
						assertClose(t, c.Name+" hidden "+itoa(key), flatten(hs), o.Hidden[j], tolHidden)
					}
				}
			}
		})
	}
}

func itoa(i int) string { return string(rune('0' + i)) }
