package bert

import (
	"math"
)

// layerNorm writes LayerNorm(x)·g + b into dst (torch's: biased variance,
// eps inside the square root); dst may be x.
func layerNorm(dst, x, g, b []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := float32(sum / float64(len(x)))
	var sq float64
	for _, v := range x {
		d := v - mean
		sq += float64(d * d)
	}
	inv := float32(1 / math.Sqrt(sq/float64(len(x))+float64(eps)))
	g, b, dst = g[:len(x)], b[:len(x)], dst[:len(x)]
	for i, v := range x {
		dst[i] = (v-mean)*inv*g[i] + b[i]
	}
}

// addLayerNorm computes x = LayerNorm(y + bias + x)·g + b: a projection's
// bias, the residual and the post-LayerNorm of a BERT sublayer in one call.
func addLayerNorm(x, y, bias, g, b []float32, eps float32) {
	y, bias = y[:len(x)], bias[:len(x)]
	for i := range x {
		x[i] = y[i] + bias[i] + x[i]
	}
	layerNorm(x, x, g, b, eps)
}

// addBias adds bias to every row of x (rows of len(bias)).
func addBias(x, bias []float32) {
	n := len(bias)
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n]
		for j, v := range bias {
			row[j] += v
		}
	}
}

// biasGELU computes x = GELU(x + bias) on every row, GELU's erf form
// (HF's "gelu"): v·½·(1 + erf(v/√2)).
func biasGELU(x, bias []float32) {
	n := len(bias)
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n]
		for j, b := range bias {
			v := row[j] + b
			row[j] = v * 0.5 * (1 + float32(math.Erf(float64(v)*math.Sqrt2/2)))
		}
	}
}

// softmax replaces x with softmax(x·scale).
func softmax(x []float32, scale float32) {
	mx := float32(math.Inf(-1))
	for _, v := range x {
		mx = max(mx, v)
	}
	var sum float32
	for i, v := range x {
		e := float32(math.Exp(float64((v - mx) * scale)))
		x[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range x {
		x[i] *= inv
	}
}
