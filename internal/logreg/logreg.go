// Package logreg fits the small logistic regressions the relevance gates
// are made of (L2-regularized, on standardized features, by Newton's
// method) and measures them (AUC). The gates' fits run as opt-in tests
// that write Go source; this is their shared arithmetic.
package logreg

import (
	"math"
	"sort"
)

// Model is a fitted logistic regression: p = σ(Bias + Σ Weights[j]·(f[j] −
// Mean[j]) / Scale[j]).
type Model struct {
	Mean, Scale, Weights []float64
	Bias                 float64
}

// Logit returns the model's log-odds for features f.
func (m Model) Logit(f []float64) float64 {
	z := m.Bias
	for j, v := range f {
		z += m.Weights[j] * (v - m.Mean[j]) / m.Scale[j]
	}
	return z
}

// Prob returns the model's probability for features f.
func (m Model) Prob(f []float64) float64 { return 1 / (1 + math.Exp(-m.Logit(f))) }

// Fit fits a logistic regression to features x and labels y (0 or 1):
// features standardized by their mean and standard deviation over x, the
// log loss with an L2 penalty l2 on the weights (not the bias), minimized
// by steps exact Newton steps (iteratively reweighted least squares; no
// learning rate). Deterministic.
func Fit(x [][]float64, y []float64, l2 float64, steps int) Model {
	n := float64(len(x))
	d := len(x[0])
	m := Model{Mean: make([]float64, d), Scale: make([]float64, d), Weights: make([]float64, d)}
	for _, f := range x {
		for j, v := range f {
			m.Mean[j] += v / n
		}
	}
	for _, f := range x {
		for j, v := range f {
			m.Scale[j] += (v - m.Mean[j]) * (v - m.Mean[j]) / n
		}
	}
	for j := range m.Scale {
		m.Scale[j] = math.Sqrt(m.Scale[j]) + 1e-9
	}
	// θ = (w, b); v = (standardized features, 1).
	v := make([]float64, d+1)
	for range steps {
		g := make([]float64, d+1)
		h := make([][]float64, d+1)
		for i := range h {
			h[i] = make([]float64, d+1)
		}
		for i, f := range x {
			for j, u := range f {
				v[j] = (u - m.Mean[j]) / m.Scale[j]
			}
			v[d] = 1
			p := m.Prob(f)
			r := p * (1 - p)
			for j := range v {
				g[j] += (p - y[i]) * v[j]
				for k := range v {
					h[j][k] += r * v[j] * v[k]
				}
			}
		}
		for j := range d {
			g[j] = g[j]/n + l2*m.Weights[j]
			for k := range d + 1 {
				h[j][k] /= n
			}
			h[j][j] += l2
		}
		g[d] /= n
		for k := range d + 1 {
			h[d][k] /= n
		}
		step := Solve(h, g)
		for j := range d {
			m.Weights[j] -= step[j]
		}
		m.Bias -= step[d]
	}
	return m
}

// Solve returns x with a·x = y by Gaussian elimination with partial
// pivoting (a is small and positive definite here).
func Solve(a [][]float64, y []float64) []float64 {
	n := len(y)
	m := make([][]float64, n)
	for i := range m {
		m[i] = append(append([]float64(nil), a[i]...), y[i])
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := m[r][n]
		for k := r + 1; k < n; k++ {
			s -= m[r][k] * x[k]
		}
		x[r] = s / m[r][r]
	}
	return x
}

// AUC is the probability that a positive's score exceeds a negative's
// (ties count half).
func AUC(pos, neg []float64) float64 {
	neg = append([]float64(nil), neg...)
	sort.Float64s(neg)
	var a float64
	for _, p := range pos {
		lo := sort.SearchFloat64s(neg, p)
		hi := sort.Search(len(neg), func(i int) bool { return neg[i] > p })
		a += float64(lo) + float64(hi-lo)/2
	}
	return a / float64(len(pos)*len(neg))
}
