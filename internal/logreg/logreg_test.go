package logreg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSolve(t *testing.T) {
	a := [][]float64{{0, 2, 1}, {1, 1, 0}, {3, 0, 1}}
	want := []float64{1, -2, 3}
	y := make([]float64, 3)
	for i := range a {
		for k := range a[i] {
			y[i] += a[i][k] * want[k]
		}
	}
	got := Solve(a, y)
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-12)
	}
}

// Fit recovers the weights that generated the labels, and its gradient
// vanishes at the optimum.
func TestFitRecoversWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var x [][]float64
	var y []float64
	for range 20000 {
		f := []float64{r.NormFloat64(), r.NormFloat64()}
		p := 1 / (1 + math.Exp(-(0.5 + 2*f[0] - 1*f[1])))
		l := 0.0
		if r.Float64() < p {
			l = 1
		}
		x, y = append(x, f), append(y, l)
	}
	m := Fit(x, y, 0, 12)
	// Back on the raw scale: w/scale, b − Σ w·mean/scale.
	w0, w1 := m.Weights[0]/m.Scale[0], m.Weights[1]/m.Scale[1]
	b := m.Bias - m.Weights[0]*m.Mean[0]/m.Scale[0] - m.Weights[1]*m.Mean[1]/m.Scale[1]
	assert.InDelta(t, 2, w0, 0.1)
	assert.InDelta(t, -1, w1, 0.1)
	assert.InDelta(t, 0.5, b, 0.1)
	var g [3]float64
	for i, f := range x {
		d := m.Prob(f) - y[i]
		g[0] += d * f[0]
		g[1] += d * f[1]
		g[2] += d
	}
	for _, v := range g {
		assert.InDelta(t, 0, v/float64(len(x)), 1e-9)
	}
	// A penalty shrinks the weights.
	p := Fit(x, y, 1, 12)
	require.Less(t, math.Abs(p.Weights[0]), math.Abs(m.Weights[0]))
}

func TestAUC(t *testing.T) {
	assert.Equal(t, 1.0, AUC([]float64{3, 4}, []float64{1, 2}))
	assert.Equal(t, 0.0, AUC([]float64{1}, []float64{2, 3}))
	assert.Equal(t, 0.5, AUC([]float64{1}, []float64{1}))
	neg := []float64{3, 1, 2}
	assert.InDelta(t, (0.5+2)/6.0, AUC([]float64{1, 2.5}, neg), 1e-12) // 1 ties one; 2.5 beats 1 and 2
	assert.Equal(t, []float64{3, 1, 2}, neg, "the negatives are not sorted in place")
}
