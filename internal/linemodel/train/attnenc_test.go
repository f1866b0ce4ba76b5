package train

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The attention encoder's hand-written backward pass (attention, positions,
// the scatter into both tables) agrees with finite differences of its
// loss, with and without the attention layer.
func TestAttnEncoderGradient(t *testing.T) {
	backend, err := simplego.New("ops_sequential")
	require.NoError(t, err)
	for _, attn := range []bool{true, false} {
		V := 12
		idf := make([]float32, V)
		for i := range idf {
			idf[i] = 0.5 + float32(i%3)
		}
		o := AttnEncoderOptions{Dim: 6, Attn: attn, Batch: 2, Cands: 3, UnitWords: 4, QueryWords: 3, Temp: 5, Seed: 3}
		m := newAttnEnc(V, idf, o)
		for _, p := range m.P[aeWQ:] { // larger attention weights, so the layer matters
			for i := range p {
				p[i] *= 8
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		B, C, Lq, L := o.Batch, o.Cands, o.QueryWords, o.UnitWords
		qIDs, qW := make([]int32, B*Lq), make([]float32, B*Lq)
		for i := range qIDs {
			qIDs[i], qW[i] = int32(rng.IntN(V)), idf[i%V]
		}
		qW[Lq-1] = 0 // padding
		units := make([][]int32, B*C)
		cm := make([]float32, B*C)
		for n := range units {
			if n == B*C-1 {
				continue // a padded candidate
			}
			cm[n] = 1
			for range 1 + rng.IntN(L) {
				units[n] = append(units[n], int32(rng.IntN(V)))
			}
		}
		uIDs, uW, uM := m.unitInputs(units, B*C)
		exec, err := G.NewExec(backend, func(in []*G.Node) []*G.Node { return m.trainGraph(in) })
		require.NoError(t, err)
		run := func() ([]float32, [][]float32) {
			args := []any{
				tensors.FromFlatDataAndDimensions(qIDs, B, Lq, 1), tensors.FromFlatDataAndDimensions(qW, B, Lq),
				tensors.FromFlatDataAndDimensions(uIDs, B*C*L, 1), tensors.FromFlatDataAndDimensions(uW, B*C, L),
				tensors.FromFlatDataAndDimensions(uM, B*C, L), tensors.FromFlatDataAndDimensions(cm, B, C),
			}
			outs := exec.MustExec(append(args, m.params()...)...)
			var g [][]float32
			for _, o := range outs[1:] {
				g = append(g, tensors.MustCopyFlatData[float32](o))
			}
			return tensors.MustCopyFlatData[float32](outs[0]), g
		}
		_, grads := run()
		checked := 0
		for k := range m.P {
			if !attn && k >= aePos {
				continue
			}
			for _, i := range []int{int(uIDs[0]) * o.Dim, int(qIDs[0])*o.Dim + 1, 2, len(m.P[k]) - 1} {
				if i >= len(m.P[k]) {
					continue
				}
				const h = 1e-2
				old := m.P[k][i]
				m.P[k][i] = old + h
				lp, _ := run()
				m.P[k][i] = old - h
				lm, _ := run()
				m.P[k][i] = old
				num := (float64(lp[0]) - float64(lm[0])) / (2 * h)
				require.InDelta(t, num, float64(grads[k][i]), 2e-3+0.02*abs64(num), "attn %v param %d index %d", attn, k, i)
				checked++
			}
		}
		require.GreaterOrEqual(t, checked, 8)
	}
}

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Both forms of the experiment's encoder learn a mapping no word overlap
// shows (talkX in comments, codeX in code), from the same synthetic pairs
// the bag encoder's test learns.
func TestAttnEncoderLearnsMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pairs.jsonl.gz")
	writeSyntheticPairs(t, path, 300)
	eo := DefaultEncoderOptions
	eo.MinCount = 1
	d, err := LoadPairData(context.Background(), []string{path}, eo, 0)
	require.NoError(t, err)
	backend, err := simplego.New("ops_sequential")
	require.NoError(t, err)
	for _, attn := range []bool{true, false} {
		o := AttnEncoderOptions{Dim: 16, Epochs: 3, Attn: attn, Batch: 8, Cands: 8, UnitWords: 8, QueryWords: 6, LR: 1e-2, Temp: 10, Seed: 1}
		got, err := TrainAttnEncoder(context.Background(), d, o, backend, t.Logf)
		require.NoError(t, err)
		assert.Greater(t, got.R1, 0.8, "attention %v: the encoder should learn talkX -> codeX", attn)
	}
}
