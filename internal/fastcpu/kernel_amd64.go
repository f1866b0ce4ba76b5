//go:build amd64 && !purego

package fastcpu

import "golang.org/x/sys/cpu"

// hasSIMD reports whether the AVX2+FMA micro-kernel can run here (the CPU
// has both and the OS saves the YMM registers; x/sys/cpu checks both).
var hasSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func kernel6x16AVX2(k int, a, b, c *float32, ldc int, load bool)

// kernelSIMD runs the assembly micro-kernel; callers check hasSIMD.
func kernelSIMD(k int, a, b, c []float32, ldc int, load bool) {
	kernel6x16AVX2(k, &a[0], &b[0], &c[0], ldc, load)
}
