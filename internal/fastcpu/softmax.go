package fastcpu

import "math"

var negInf = float32(math.Inf(-1))

// Row operations of the fused softmax. The Go versions compute exp as
// simplego does (float64 math.Exp, rounded); the SIMD versions use expPoly's
// polynomial (relative error about 1e-7).

// expSubSumGo sets x[i] = exp(x[i]·scale - mx) and returns their float32
// sum.
func expSubSumGo(x []float32, mx, scale float32) float32 {
	var sum float32
	for i, v := range x {
		e := float32(math.Exp(float64(v)*float64(scale) - float64(mx)))
		x[i] = e
		sum += e
	}
	return sum
}

// maxGo returns the maximum of x (-Inf if empty).
func maxGo(x []float32) float32 {
	mx := negInf
	for _, v := range x {
		mx = max(mx, v)
	}
	return mx
}

// scaleMaxGo sets x[i] *= scale and returns the maximum (-Inf if empty).
func scaleMaxGo(x []float32, scale float32) float32 {
	mx := negInf
	for i := range x {
		x[i] *= scale
		mx = max(mx, x[i])
	}
	return mx
}

// mulGo sets x[i] *= f.
func mulGo(x []float32, f float32) {
	for i := range x {
		x[i] *= f
	}
}

// expPoly is the scalar twin of the AVX2 exp (same constants), for tails.
func expPoly(x float32) float32 {
	const (
		lo    = -87.33654
		log2e = 1.44269504088896341
		c1    = 0.693359375
		c2    = -2.12194440e-4
	)
	x = max(x, lo)
	fx := float32(math.RoundToEven(float64(x * log2e)))
	x -= fx * c1
	x -= fx * c2
	z := x * x
	y := float32(1.9875691500e-4)
	y = y*x + 1.3981999507e-3
	y = y*x + 8.3334519073e-3
	y = y*x + 4.1665795894e-2
	y = y*x + 1.6666665459e-1
	y = y*x + 5.0000001201e-1
	y = y*z + x + 1
	return y * math.Float32frombits(uint32(int32(fx)+127)<<23)
}
