package train

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/linemodel"
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
			outs := exec.MustExec(m.stepArgs(qIDs, qW, uIDs, uW, uM, cm)...)
			var g [][]float32
			for k, out := range outs[1:] {
				v := tensors.MustCopyFlatData[float32](out)
				// The tables' gradients come per word occurrence; the
				// optimizer adds them up by row, as here.
				switch k {
				case aeEQ, aeEC:
					r := newRowSum(V, o.Dim)
					if k == aeEQ {
						r.add(qIDs, qW, v)
					} else {
						r.add(uIDs, uM, v)
					}
					v = r.dense(V)
				}
				g = append(g, v)
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
		_, got, err := TrainAttnEncoder(context.Background(), d, o, backend, t.Logf)
		require.NoError(t, err)
		assert.Greater(t, got.R1, 0.8, "attention %v: the encoder should learn talkX -> codeX", attn)
	}
}

// The library's Go forward pass (linemodel.UnitEncoder) computes the unit
// vectors the training graph does, on the tables as the library stores
// them (int8 rows), and the written encoder reads back the same.
func TestAttnEncoderGoForwardMatchesGraph(t *testing.T) {
	backend, err := simplego.New("ops_sequential")
	require.NoError(t, err)
	V := 50
	idf := make([]float32, V)
	words := make([]string, V)
	for i := range idf {
		idf[i] = 0.5 + float32(i%5)/2
		words[i] = fmt.Sprintf("w%d", i)
	}
	o := AttnEncoderOptions{Dim: 8, Attn: true, Batch: 1, Cands: 1, UnitWords: 6, QueryWords: 3, Temp: 5, Seed: 7}
	m := newAttnEnc(V, idf, o)
	for _, p := range m.P[aeWQ:] {
		for i := range p {
			p[i] *= 6
		}
	}
	e, err := m.encoder(words)
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = e.WriteTo(&buf)
	require.NoError(t, err)
	back, err := linemodel.ReadAttnEncoder(buf.Bytes())
	require.NoError(t, err)
	// The graph reads the dequantized tables.
	for r := range V {
		for j := range o.Dim {
			m.P[aeEC][r*o.Dim+j] = e.CScale[r] * float32(e.C[r*o.Dim+j])
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	units := make([][]int32, 7)
	for n := range units {
		for range 1 + rng.IntN(9) { // some past UnitWords
			units[n] = append(units[n], int32(rng.IntN(V)))
		}
	}
	N := len(units)
	ids, w, mask := m.unitInputs(units, N)
	enc, err := G.NewExec(backend, func(in []*G.Node) []*G.Node {
		u, _, _ := m.encodeUnits(in[0], in[1], in[2], append([]*G.Node{aeEQ: nil, aeEC: nil}, in[3:]...))
		return []*G.Node{u}
	})
	require.NoError(t, err)
	want := tensors.MustCopyFlatData[float32](enc.MustExec(append([]any{m.rows(aeEC, ids), tensors.FromFlatDataAndDimensions(w, N, o.UnitWords), tensors.FromFlatDataAndDimensions(mask, N, o.UnitWords)}, m.params()...)...)[0])
	for _, ue := range []*linemodel.UnitEncoder{e.NewUnitEncoder(), back.NewUnitEncoder()} {
		got := make([]float32, o.Dim)
		for n, u := range units {
			ue.Encode(got, u)
			for j := range got {
				require.InDelta(t, want[n*o.Dim+j], got[j], 1e-4, "unit %d component %d", n, j)
			}
		}
	}
}
