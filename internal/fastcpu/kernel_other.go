//go:build !amd64 || purego

package fastcpu

// hasSIMD is false without the amd64 assembly: the pure Go kernel runs.
const hasSIMD = false

// hasAVX512 is false without the amd64 assembly.
const hasAVX512 = false

func kernelWide(k int, a, b, c []float32, ldc int, load bool) {
	panic("fastcpu: no AVX-512 kernel in this build")
}

func kernelWideB(k int, a, b []float32, ldb int, c []float32, ldc int, load bool) {
	panic("fastcpu: no AVX-512 kernel in this build")
}

func kernelSIMD(k int, a, b, c []float32, ldc int, load bool) {
	kernelGo(k, a, b, c, ldc, load)
}

func packA6SIMD(panel, src []float32, off, ld, depth int) int              { return 0 }
func packB16TSIMD(panel, src []float32, off, ld, depth int, wide bool) int { return 0 }

func sumSquaresSIMD(x []float32) (float32, int)        { return 0, 0 }
func scaleGainSIMD(dst, x, w []float32, s float32) int { return 0 }
func rotarySIMD(dst, x, c, s []float32) int            { return 0 }
func gluSIMD(dst, g, up []float32) int                 { return 0 }

func packB16TBF16SIMD(panel []float32, src []uint16, off, ld, depth int, wide bool) int {
	return 0
}
