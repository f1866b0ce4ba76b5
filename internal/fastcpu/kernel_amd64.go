//go:build amd64 && !purego

package fastcpu

import "golang.org/x/sys/cpu"

// hasSIMD reports whether the AVX2+FMA micro-kernel can run here (the CPU
// has both and the OS saves the YMM registers; x/sys/cpu checks both).
var hasSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasAVX512 reports whether the AVX-512 micro-kernel can run here (x/sys/cpu
// also checks that the OS saves the ZMM registers).
var hasAVX512 = hasSIMD && cpu.X86.HasAVX512F

//go:noescape
func kernel6x16AVX2(k int, a, b, c *float32, ldc int, load bool)

//go:noescape
func kernel12x32AVX512(k int, a, b, c *float32, ldc int, load bool)

//go:noescape
func kernel12x32BAVX512(k int, a, b *float32, ldb int, c *float32, ldc int, load bool)

// kernelWideB is kernelWide for a row-major B read in place: step p's 32
// columns are b[p·ldb : p·ldb+32].
func kernelWideB(k int, a, b []float32, ldb int, c []float32, ldc int, load bool) {
	_ = a[2*k*mr-1]
	_ = b[(k-1)*ldb+2*nr-1]
	_ = c[(2*mr-1)*ldc+2*nr-1]
	kernel12x32BAVX512(k, &a[0], &b[0], ldb, &c[0], ldc, load)
}

// kernelWide runs the AVX-512 micro-kernel on a 12×32 tile: a holds two
// consecutive A panels (2·k·mr floats), b two consecutive B panels
// (2·k·nr); callers check hasAVX512.
func kernelWide(k int, a, b, c []float32, ldc int, load bool) {
	_ = a[2*k*mr-1]
	_ = b[2*k*nr-1]
	_ = c[(2*mr-1)*ldc+2*nr-1]
	kernel12x32AVX512(k, &a[0], &b[0], &c[0], ldc, load)
}

// kernelSIMD runs the assembly micro-kernel; callers check hasSIMD.
func kernelSIMD(k int, a, b, c []float32, ldc int, load bool) {
	kernel6x16AVX2(k, &a[0], &b[0], &c[0], ldc, load)
}

//go:noescape
func packA6AVX2(panel, src *float32, ld, n8 int)

//go:noescape
func packB16TAVX2(panel, src *float32, ld, n8 int)

// packA6SIMD packs the first depth&^7 steps with AVX2 and returns how many
// it packed; callers check hasSIMD.
func packA6SIMD(panel, src []float32, off, ld, depth int) int {
	n8 := depth / 8
	if n8 == 0 {
		return 0
	}
	_ = src[off+5*ld+8*n8-1]
	_ = panel[8*n8*mr-1]
	packA6AVX2(&panel[0], &src[off], ld, n8)
	return 8 * n8
}

//go:noescape
func packB16TAVX512(panel *float32, src *float32, ld, n16 int)

//go:noescape
func packB16TBF16AVX512(panel *float32, src *uint16, ld, n16 int)

// packB16TSIMD is packA6SIMD for packB16T; with wide, AVX-512 16×16
// transposes pack the first depth&^15 steps (callers check hasAVX512).
func packB16TSIMD(panel, src []float32, off, ld, depth int, wide bool) int {
	return packB16TBlocks(panel, src, off, ld, depth, wide, packB16TAVX512, packB16TAVX2)
}

// packB16TBlocks packs 16-step blocks with k16 (when wide), then 8-step
// blocks with k8, and returns how many steps it packed. The checks make
// every element the assembly reads or writes an element of src or panel.
func packB16TBlocks[T float32 | uint16](panel []float32, src []T, off, ld, depth int, wide bool, k16, k8 func(panel *float32, src *T, ld, n int)) int {
	done := 0
	if n16 := depth / 16; wide && n16 > 0 {
		_ = src[off+15*ld+16*n16-1]
		_ = panel[16*n16*nr-1]
		k16(&panel[0], &src[off], ld, n16)
		done = 16 * n16
	}
	n8 := (depth - done) / 8
	if n8 == 0 {
		return done
	}
	_ = src[off+done+15*ld+8*n8-1]
	_ = panel[(done+8*n8)*nr-1]
	k8(&panel[done*nr], &src[off+done], ld, n8)
	return done + 8*n8
}

//go:noescape
func packB16TBF16AVX2(panel *float32, src *uint16, ld, n8 int)

// packB16TBF16SIMD is packB16TSIMD for bfloat16 columns.
func packB16TBF16SIMD(panel []float32, src []uint16, off, ld, depth int, wide bool) int {
	return packB16TBlocks(panel, src, off, ld, depth, wide, packB16TBF16AVX512, packB16TBF16AVX2)
}
