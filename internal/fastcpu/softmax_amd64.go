//go:build amd64 && !purego

package fastcpu

//go:noescape
func expSubSumAVX2(x *float32, n int, mx float32) float32

//go:noescape
func scaleMaxAVX2(x *float32, n int, scale float32) float32

//go:noescape
func mulAVX2(x *float32, n int, f float32)

// expSubSumSIMD sets x[i] = exp(x[i]-mx) (all x[i] <= mx) and returns their sum.
func expSubSumSIMD(x []float32, mx float32) float32 {
	n := len(x) &^ 7
	var sum float32
	if n > 0 {
		sum = expSubSumAVX2(&x[0], n, mx)
	}
	for i := n; i < len(x); i++ {
		e := expPoly(x[i] - mx)
		x[i] = e
		sum += e
	}
	return sum
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
