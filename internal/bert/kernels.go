package bert

import (
	"math"
)

// The row kernels of the forward pass. Each has an AVX-512 version
// (kernels_amd64.s), an AVX2+FMA one (kernels_avx2_amd64.s) and the Go
// version below, which computes the same formulas one value at a time
// (tests compare the three); the dispatchers pick the best the CPU runs.

// Constants of exp and of the erf approximation, shared with the assembly.
const (
	expLo = -88 // exp's lower clamp: e^-88 is a denormal, and softmax only needs 0
	log2e = 1.44269504088896341
	ln2Hi = 0.693359375 // ln 2 in two parts, for an exact n·ln2Hi
	ln2Lo = -2.12194440e-4
	expC6 = 0.0013751409 // e^r ≈ 1 + r + r²·(c2 + c3·r + … + c6·r⁴) on |r| ≤ ln2/2,
	expC5 = 0.008368919  // a least-squares fit of relative error below 8e-8
	expC4 = 0.041669533
	expC3 = 0.16666518
	expC2 = 0.49999988
	erfP  = 0.3275911 / math.Sqrt2 // Abramowitz and Stegun 7.1.26, in terms of v = √2·z
	erfA1 = 0.254829592
	erfA2 = -0.284496736
	erfA3 = 1.421413741
	erfA4 = -1.453152027
	erfA5 = 1.061405429
)

// expf is e^x for x ≤ 0 in float32, the assembly's formula.
func expf(x float32) float32 {
	x = max(x, expLo)
	n := float32(math.RoundToEven(float64(x * log2e)))
	r := x - n*ln2Hi
	r -= n * ln2Lo
	p := ((((expC6*r+expC5)*r+expC4)*r+expC3)*r + expC2)
	p = p*r*r + r + 1
	return p * float32(math.Ldexp(1, int(n)))
}

// gelu is v·Φ(v), Φ by Abramowitz and Stegun 7.1.26 (|erf error| ≤
// 1.5e-7): for z = |v|/√2, q = 1 − erf(z) = t·poly(t)·e^(−z²) with
// t = 1/(1 + p·z), and Φ(v) = ½ + sign(v)·(½ − ½q), which keeps Φ of a
// negative v free of 1 + erf's cancellation.
func gelu(v float32) float32 {
	a := float32(math.Abs(float64(v)))
	t := 1 / (1 + erfP*a)
	q := t * (erfA1 + t*(erfA2+t*(erfA3+t*(erfA4+t*erfA5))))
	q *= expf(-0.5 * v * v)
	d := 0.5 - 0.5*q
	if v < 0 {
		d = -d
	}
	return v * (0.5 + d)
}

// isa is a level of the row kernels.
type isa uint8

const (
	isaGo isa = iota
	isaAVX2
	isaAVX512
)

// rowISA is the level the row kernels run at: the host's best (tests
// lower it to compare the levels).
var rowISA = hostISA()

// wide8 is how much of an n-long row the AVX2 kernels take (whole groups
// of 8); the Go loops do the rest.
func wide8(n int) int {
	if rowISA == isaAVX2 {
		return n &^ 7
	}
	return 0
}

// expMaxSum sets x = exp(x − max(x)) and returns the sum: a softmax row
// before its division, which the caller folds into the attention output.
func expMaxSum(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	if rowISA == isaAVX512 {
		return expMaxSumAVX512(&x[0], len(x))
	}
	mx := x[0]
	w := wide8(len(x))
	if w > 0 {
		mx = maxAVX2(&x[0], w)
	}
	for _, v := range x[w:] {
		mx = max(mx, v)
	}
	var sum float32
	if w > 0 {
		sum = expSubSumAVX2(&x[0], w, mx)
	}
	for i, v := range x[w:] {
		e := expf(v - mx)
		x[w+i] = e
		sum += e
	}
	return sum
}

// biasGELU computes x = GELU(x + bias) on every row of x (rows of
// len(bias)).
func biasGELU(x, bias []float32) {
	n := len(bias)
	if n == 0 {
		return
	}
	w := wide8(n)
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n]
		if rowISA == isaAVX512 {
			geluBiasAVX512(&row[0], &bias[0], n)
			continue
		}
		if w > 0 {
			geluBiasAVX2(&row[0], &bias[0], w)
		}
		for j, b := range bias[w:] {
			row[w+j] = gelu(row[w+j] + b)
		}
	}
}

// addLayerNorm computes x = LayerNorm((y + bias) + x)·g + b, torch's
// LayerNorm (biased variance, eps inside the square root): a projection's
// bias, the residual and the post-LayerNorm of a BERT sublayer, in one
// call per row.
func addLayerNorm(x, y, bias, g, b []float32, eps float32) {
	n := len(x)
	if n == 0 {
		return
	}
	y, bias, g, b = y[:n], bias[:n], g[:n], b[:n]
	var sum float32
	w := 0
	switch rowISA {
	case isaAVX512:
		sum, w = addSumAVX512(&x[0], &y[0], &bias[0], n), n
	case isaAVX2:
		if w = wide8(n); w > 0 {
			sum = addSumAVX2(&x[0], &y[0], &bias[0], w)
		}
	}
	for i := w; i < n; i++ {
		x[i] = (y[i] + bias[i]) + x[i]
		sum += x[i]
	}
	normalize(x, g, b, sum, eps)
}

// layerNorm computes x = LayerNorm(x)·g + b.
func layerNorm(x, g, b []float32, eps float32) {
	var sum float32
	for _, v := range x {
		sum += v
	}
	normalize(x, g[:len(x)], b[:len(x)], sum, eps)
}

// normalize finishes a LayerNorm of x whose sum is known.
func normalize(x, g, b []float32, sum, eps float32) {
	n := len(x)
	if n == 0 {
		return
	}
	mean := sum / float32(n)
	var sq float32
	w := 0
	switch rowISA {
	case isaAVX512:
		sq, w = sqDevAVX512(&x[0], n, mean), n
	case isaAVX2:
		if w = wide8(n); w > 0 {
			sq = sqDevAVX2(&x[0], w, mean)
		}
	}
	for _, v := range x[w:] {
		d := v - mean
		sq += d * d
	}
	rstd := float32(1 / math.Sqrt(float64(sq/float32(n)+eps)))
	switch rowISA {
	case isaAVX512:
		normAVX512(&x[0], &g[0], &b[0], n, mean, rstd)
		return
	case isaAVX2:
		if w > 0 {
			normAVX2(&x[0], &g[0], &b[0], w, mean, rstd)
		}
	}
	for i := w; i < n; i++ {
		x[i] = (x[i]-mean)*rstd*g[i] + b[i]
	}
}

// addScale sets dst = (a + b)·s.
func addScale(dst, a, b []float32, s float32) {
	n := len(dst)
	if n == 0 {
		return
	}
	a, b = a[:n], b[:n]
	if rowISA == isaAVX512 {
		addScaleAVX512(&dst[0], &a[0], &b[0], n, s)
		return
	}
	w := wide8(n)
	if w > 0 {
		addScaleAVX2(&dst[0], &a[0], &b[0], w, s)
	}
	for i := w; i < n; i++ {
		dst[i] = (a[i] + b[i]) * s
	}
}

// scale sets x = x·s.
func scale(x []float32, s float32) {
	n := len(x)
	if n == 0 {
		return
	}
	if rowISA == isaAVX512 {
		scaleAVX512(&x[0], n, s)
		return
	}
	w := wide8(n)
	if w > 0 {
		scaleAVX2(&x[0], w, s)
	}
	for i := w; i < n; i++ {
		x[i] *= s
	}
}
