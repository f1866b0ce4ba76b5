//go:build amd64 && !purego

package fastcpu

//go:noescape
func expSubSumAVX2(x *float32, n int, mx, scale float32) float32

//go:noescape
func expSubSumAVX512(x *float32, n int, mx, scale float32) float32

//go:noescape
func maxAVX2(x *float32, n int) float32

//go:noescape
func maxAVX512(x *float32, n int) float32

//go:noescape
func scaleMaxAVX2(x *float32, n int, scale float32) float32

//go:noescape
func mulAVX2(x *float32, n int, f float32)

// expSubSumSIMD sets x[i] = exp(x[i]·scale - mx) (all x[i]·scale <= mx)
// and returns their sum; wide runs 16 lanes (callers check hasAVX512).
func expSubSumSIMD(x []float32, mx, scale float32, wide bool) float32 {
	var sum float32
	n := 0
	if n16 := len(x) &^ 15; wide && n16 > 0 {
		sum, n = expSubSumAVX512(&x[0], n16, mx, scale), n16
	}
	if n8 := (len(x) - n) &^ 7; n8 > 0 {
		sum += expSubSumAVX2(&x[n], n8, mx, scale)
		n += n8
	}
	for i := n; i < len(x); i++ {
		e := expPoly(x[i]*scale - mx)
		x[i] = e
		sum += e
	}
	return sum
}

// maxSIMD returns the maximum of x (-Inf if empty); wide runs 16 lanes.
func maxSIMD(x []float32, wide bool) float32 {
	mx := negInf
	n := 0
	if n16 := len(x) &^ 15; wide && n16 > 0 {
		mx, n = maxAVX512(&x[0], n16), n16
	}
	if n8 := (len(x) - n) &^ 7; n8 > 0 {
		mx = max(mx, maxAVX2(&x[n], n8))
		n += n8
	}
	for _, v := range x[n:] {
		mx = max(mx, v)
	}
	return mx
}

// scaleMaxSIMD sets x[i] *= scale and returns the maximum.
func scaleMaxSIMD(x []float32, scale float32) float32 {
	n := len(x) &^ 7
	mx := negInf
	if n > 0 {
		mx = scaleMaxAVX2(&x[0], n, scale)
	}
	for i := n; i < len(x); i++ {
		x[i] *= scale
		mx = max(mx, x[i])
	}
	return mx
}

// mulSIMD sets x[i] *= f.
func mulSIMD(x []float32, f float32) {
	n := len(x) &^ 7
	if n > 0 {
		mulAVX2(&x[0], n, f)
	}
	for i := n; i < len(x); i++ {
		x[i] *= f
	}
}

//go:noescape
func logisticAVX2(dst, src *float32, n int)

// logisticSIMD sets dst[i] = 1/(1+exp(-src[i])) with the polynomial exp.
func logisticSIMD(dst, src []float32) {
	n := len(src) &^ 7
	if n > 0 {
		logisticAVX2(&dst[0], &src[0], n)
	}
	for i := n; i < len(src); i++ {
		dst[i] = 1 / (1 + expPoly(min(-src[i], 88)))
	}
}
