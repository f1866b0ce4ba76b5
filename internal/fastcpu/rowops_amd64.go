//go:build amd64 && !purego

package fastcpu

//go:noescape
func sumSquaresAVX2(x *float32, n int) float32

//go:noescape
func scaleGainAVX2(dst, x, w *float32, n int, s float32)

//go:noescape
func rotaryAVX2(dst, x, c, s *float32, h int)

//go:noescape
func gluAVX2(dst, gate, up *float32, n int)

// The wrappers below run the assembly on the first len&^7 values and return
// how many they did; the Go loops in rowops.go finish the row. Callers check
// hasSIMD.

func sumSquaresSIMD(x []float32) (float32, int) {
	n := len(x) &^ 7
	if n == 0 {
		return 0, 0
	}
	return sumSquaresAVX2(&x[0], n), n
}

func scaleGainSIMD(dst, x, w []float32, s float32) int {
	n := len(dst) &^ 7
	if n == 0 {
		return 0
	}
	_, _ = x[n-1], w[n-1]
	scaleGainAVX2(&dst[0], &x[0], &w[0], n, s)
	return n
}

func rotarySIMD(dst, x, c, s []float32) int {
	h := len(dst) / 2
	if h == 0 || h%8 != 0 || 2*h != len(dst) {
		return 0 // the Go loop does the whole row
	}
	_, _, _ = x[2*h-1], c[2*h-1], s[2*h-1]
	rotaryAVX2(&dst[0], &x[0], &c[0], &s[0], h)
	return 2 * h
}

func gluSIMD(dst, g, up []float32) int {
	n := len(dst) &^ 7
	if n == 0 {
		return 0
	}
	_, _ = g[n-1], up[n-1]
	gluAVX2(&dst[0], &g[0], &up[0], n)
	return n
}
