package crf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func simplegoBackend(t testing.TB) backends.Backend {
	t.Helper()
	b, err := simplego.New("ops_sequential") // as the library runs it: v0.26's parallel scheduler races
	require.NoError(t, err)
	return b
}

// graphOutputs are the per-sample values and gradients computed by the graph.
type graphOutputs struct {
	logZ, gold, nll []float64
	dZdEm           [][][]float64 // d Σ logZ / d emissions
	dZdTrans        [][]float64   // d Σ logZ / d transitions
	dNLLdTrans      [][]float64   // d Σ nll / d transitions
	dNLLdStart      []float64
	dNLLdEnd        []float64
}

func lossGraph(em, mask, trans, start, end, tags *Node) []*Node {
	logZ := LogPartitionGraph(em, mask, trans, start, end)
	gold := GoldScoreGraph(em, mask, trans, start, end, tags)
	nll := NLLGraph(em, mask, trans, start, end, tags)
	gz := Gradient(ReduceAllSum(logZ), em, trans)
	gn := Gradient(ReduceAllSum(nll), trans, start, end)
	return []*Node{logZ, gold, nll, gz[0], gz[1], gn[0], gn[1], gn[2]}
}

func runGraph(t *testing.T, exec *Exec, em [][][]float64, mask any, p Params, tags [][]int32) graphOutputs {
	t.Helper()
	out, err := exec.Exec(em, mask, p.Transitions, p.Start, p.End, tags)
	require.NoError(t, err)
	return graphOutputs{
		logZ: flatValues[float64](out[0]), gold: flatValues[float64](out[1]), nll: flatValues[float64](out[2]),
		dZdEm: out[3].Value().([][][]float64), dZdTrans: out[4].Value().([][]float64),
		dNLLdTrans: out[5].Value().([][]float64), dNLLdStart: flatValues[float64](out[6]), dNLLdEnd: flatValues[float64](out[7]),
	}
}

// centralDiff returns the derivative of f at x[i] (x is restored).
func centralDiff(x *float64, f func() float64) float64 {
	const h = 1e-5
	orig := *x
	*x = orig + h
	up := f()
	*x = orig - h
	down := f()
	*x = orig
	return (up - down) / (2 * h)
}

func TestGraphMatchesPlainGo(t *testing.T) {
	backend := simplegoBackend(t)
	exec, err := NewExec(backend, lossGraph)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(11, 12))
	const batch = 3
	for _, numTags := range []int{1, 2, 3} {
		for _, l := range []int{1, 2, 3, 5, 8} {
			t.Run(fmt.Sprintf("T=%d/L=%d", numTags, l), func(t *testing.T) {
				p := randomParams(r, numTags, 1)
				em := make([][][]float64, batch)
				mask := make([][]bool, batch)
				tags := make([][]int32, batch)
				plainEm := make([]Emissions[float64], batch)
				plainTags := make([][]int, batch)
				for b := range batch {
					k := l
					if b > 0 {
						k = 1 + r.IntN(l)
					}
					mask[b] = rightPadMask(l, k)
					flat := make([]float64, 0, l*numTags)
					for range l {
						row := make([]float64, numTags)
						for j := range row {
							row[j] = 2 * r.NormFloat64()
						}
						em[b] = append(em[b], row)
						flat = append(flat, row...)
						y := r.IntN(numTags)
						tags[b] = append(tags[b], int32(y))
						plainTags[b] = append(plainTags[b], y)
					}
					plainEm[b] = Emissions[float64]{Data: flat, NumTags: numTags}
				}
				got := runGraph(t, exec, em, mask, p, tags)

				sumNLL := func() float64 {
					s := 0.0
					for b := range batch {
						v, err := NLL(p, plainEm[b], plainTags[b], mask[b])
						require.NoError(t, err)
						s += v
					}
					return s
				}
				sumLogZ := func() float64 {
					s := 0.0
					for b := range batch {
						v, err := LogPartition(p, plainEm[b], mask[b])
						require.NoError(t, err)
						s += v
					}
					return s
				}
				for b := range batch {
					logZ, err := LogPartition(p, plainEm[b], mask[b])
					require.NoError(t, err)
					gold, err := GoldScore(p, plainEm[b], plainTags[b], mask[b])
					require.NoError(t, err)
					nll, err := NLL(p, plainEm[b], plainTags[b], mask[b])
					require.NoError(t, err)
					assert.InDelta(t, logZ, got.logZ[b], 1e-9, "sample %d logZ", b)
					assert.InDelta(t, gold, got.gold[b], 1e-9, "sample %d gold", b)
					assert.InDelta(t, nll, got.nll[b], 1e-9, "sample %d nll", b)

					// d log Z / d emission[i][t] is the posterior marginal.
					marg, err := Marginals(p, plainEm[b], mask[b])
					require.NoError(t, err)
					for i := range l {
						assert.InDeltaSlice(t, marg[i], got.dZdEm[b][i], 1e-9, "sample %d position %d", b, i)
					}
				}
				for j := range numTags {
					for q := range numTags {
						assert.InDelta(t, centralDiff(&p.Transitions[j][q], sumLogZ), got.dZdTrans[j][q], 1e-6, "dlogZ/dtrans[%d][%d]", j, q)
						assert.InDelta(t, centralDiff(&p.Transitions[j][q], sumNLL), got.dNLLdTrans[j][q], 1e-6, "dNLL/dtrans[%d][%d]", j, q)
					}
					assert.InDelta(t, centralDiff(&p.Start[j], sumNLL), got.dNLLdStart[j], 1e-6, "dNLL/dstart[%d]", j)
					assert.InDelta(t, centralDiff(&p.End[j], sumNLL), got.dNLLdEnd[j], 1e-6, "dNLL/dend[%d]", j)
				}
			})
		}
	}
}

// Float32 graphs with a numeric mask agree with the float64 plain-Go values
// to float32 precision.
func TestGraphFloat32NumericMask(t *testing.T) {
	backend := simplegoBackend(t)
	exec, err := NewExec(backend, func(em, mask, trans, start, end, tags *Node) []*Node {
		return []*Node{
			LogPartitionGraph(em, mask, trans, start, end),
			NLLGraph(em, mask, trans, start, end, tags),
			NLLGraph(em, nil, trans, start, end, tags),
		}
	})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(13, 14))
	const batch, l, numTags = 2, 37, 2
	p := randomParams(r, numTags, 1)
	em32 := make([][][]float32, batch)
	mask := [][]float32{make([]float32, l), make([]float32, l)}
	tags := make([][]int32, batch)
	lengths := []int{l, 20}
	for b := range batch {
		for i := range l {
			em32[b] = append(em32[b], []float32{float32(3 * r.NormFloat64()), float32(3 * r.NormFloat64())})
			tags[b] = append(tags[b], int32(r.IntN(numTags)))
			if i < lengths[b] {
				mask[b][i] = 1
			}
		}
	}
	toF32 := func(x []float64) []float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			y[i] = float32(v)
		}
		return y
	}
	trans32 := [][]float32{toF32(p.Transitions[0]), toF32(p.Transitions[1])}
	p32 := Params{Transitions: make([][]float64, numTags), Start: make([]float64, numTags), End: make([]float64, numTags)}
	for j := range numTags {
		p32.Transitions[j] = []float64{float64(trans32[j][0]), float64(trans32[j][1])}
		p32.Start[j] = float64(float32(p.Start[j]))
		p32.End[j] = float64(float32(p.End[j]))
	}
	out, err := exec.Exec(em32, mask, trans32, toF32(p.Start), toF32(p.End), tags)
	require.NoError(t, err)
	logZ, nll, nllAll := flatValues[float32](out[0]), flatValues[float32](out[1]), flatValues[float32](out[2])
	for b := range batch {
		em, err := EmissionsFromRows(em32[b])
		require.NoError(t, err)
		bm := rightPadMask(l, lengths[b])
		it := make([]int, l)
		for i, y := range tags[b] {
			it[i] = int(y)
		}
		wantZ, err := LogPartition(p32, em, bm)
		require.NoError(t, err)
		wantNLL, err := NLL(p32, em, it, bm)
		require.NoError(t, err)
		wantNLLAll, err := NLL(p32, em, it, nil)
		require.NoError(t, err)
		assert.InDelta(t, wantZ, float64(logZ[b]), 1e-4)
		assert.InDelta(t, wantNLL, float64(nll[b]), 1e-5)
		assert.InDelta(t, wantNLLAll, float64(nllAll[b]), 1e-5)
	}
}

func TestGraphShapeErrors(t *testing.T) {
	backend := simplegoBackend(t)
	exec, err := NewExec(backend, func(em, trans, start, end *Node) *Node {
		return LogPartitionGraph(em, nil, trans, start, end)
	})
	require.NoError(t, err)
	_, err = exec.Exec([][][]float32{{{1, 2}}}, [][]float32{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, []float32{0, 0}, []float32{0, 0})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrShape)
}

// Long sequences stay finite in the tree-structured graph.
func TestGraphLongSequence(t *testing.T) {
	backend := simplegoBackend(t)
	exec, err := NewExec(backend, func(em, trans, start, end *Node) []*Node {
		logZ := LogPartitionGraph(em, nil, trans, start, end)
		return []*Node{logZ, Gradient(ReduceAllSum(logZ), em)[0]}
	})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(15, 16))
	const l = 3000
	p := randomParams(r, 2, 2)
	em := randomEmissions(r, l, 2, 40)
	rows := make([][]float32, l)
	for i := range rows {
		rows[i] = em.Data[2*i : 2*i+2]
	}
	toF32 := func(x []float64) []float32 { return []float32{float32(x[0]), float32(x[1])} }
	p32 := Params{Transitions: [][]float64{
		{float64(float32(p.Transitions[0][0])), float64(float32(p.Transitions[0][1]))},
		{float64(float32(p.Transitions[1][0])), float64(float32(p.Transitions[1][1]))},
	}, Start: []float64{float64(float32(p.Start[0])), float64(float32(p.Start[1]))}, End: []float64{float64(float32(p.End[0])), float64(float32(p.End[1]))}}
	out, err := exec.Exec([][][]float32{rows}, [][]float32{toF32(p.Transitions[0]), toF32(p.Transitions[1])}, toF32(p.Start), toF32(p.End))
	require.NoError(t, err)
	want, err := LogPartition(p32, em, nil)
	require.NoError(t, err)
	got := float64(flatValues[float32](out[0])[0])
	assert.InDelta(t, want, got, 1e-6*max(1, math.Abs(want)))
	marg, err := Marginals(p32, em, nil)
	require.NoError(t, err)
	grad := flatValues[float32](out[1])
	for i := range l {
		for j := range 2 {
			require.InDelta(t, marg[i][j], float64(grad[2*i+j]), 1e-3, "position %d", i)
		}
	}
}

func flatValues[T float32 | float64](t *tensors.Tensor) []T {
	var out []T
	tensors.MustConstFlatData(t, func(flat []T) { out = append(out, flat...) })
	return out
}

// BenchmarkNLLGraphGradient measures one training-style evaluation (loss and
// its gradient w.r.t. emissions and transitions) on the pure Go backend.
func BenchmarkNLLGraphGradient(b *testing.B) {
	backend := simplegoBackend(b)
	exec, err := NewExec(backend, func(em, mask, trans, start, end, tags *Node) []*Node {
		loss := ReduceAllMean(NLLGraph(em, mask, trans, start, end, tags))
		g := Gradient(loss, em, trans)
		return []*Node{loss, g[0], g[1]}
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range []int{512, 2048} {
		const batch = 8
		r := rand.New(rand.NewPCG(5, uint64(l)))
		em := make([][][]float32, batch)
		mask := make([][]bool, batch)
		tags := make([][]int32, batch)
		for i := range batch {
			for range l {
				em[i] = append(em[i], []float32{float32(r.NormFloat64()), float32(r.NormFloat64())})
				tags[i] = append(tags[i], int32(r.IntN(2)))
				mask[i] = append(mask[i], true)
			}
		}
		trans := [][]float32{{0.1, -0.2}, {0.3, 0.05}}
		start, end := []float32{0.1, 0.2}, []float32{-0.1, 0.3}
		b.Run(fmt.Sprintf("B=%d/L=%d", batch, l), func(b *testing.B) {
			if _, err := exec.Exec(em, mask, trans, start, end, tags); err != nil { // compile outside the loop
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := exec.Exec(em, mask, trans, start, end, tags); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Half-precision emissions are computed in float32 and returned in their
// own dtype; the values agree with plain Go on the rounded inputs.
func TestGraphBFloat16(t *testing.T) {
	backend := simplegoBackend(t)
	exec, err := NewExec(backend, func(em, trans, start, end *Node) []*Node {
		emBF := ConvertDType(em, dtypes.BFloat16)
		logZ := LogPartitionGraph(emBF, nil, trans, start, end)
		return []*Node{logZ, ConvertDType(emBF, dtypes.Float32), ConvertDType(logZ, dtypes.Float32)}
	})
	require.NoError(t, err)
	em := [][][]float32{{{1.3, -0.7}, {0.2, 2.9}, {-1.1, 0.4}, {0.6, 0.6}, {2.2, -3.1}}}
	trans := [][]float32{{0.5, -0.25}, {0.75, 0.125}}
	start, end := []float32{0.25, -0.5}, []float32{0.5, 0.25}
	out, err := exec.Exec(em, trans, start, end)
	require.NoError(t, err)
	assert.Equal(t, dtypes.BFloat16, out[0].DType())
	rounded := flatValues[float32](out[1])
	p, err := NewParams([]float32{0.5, -0.25, 0.75, 0.125}, start, end, 2)
	require.NoError(t, err)
	want, err := LogPartition(p, Emissions[float32]{Data: rounded, NumTags: 2}, nil)
	require.NoError(t, err)
	// bfloat16 keeps 8 significant bits: the result is rounded to ~0.4%.
	assert.InDelta(t, want, float64(flatValues[float32](out[2])[0]), 0.01*math.Abs(want)+0.01)
}
