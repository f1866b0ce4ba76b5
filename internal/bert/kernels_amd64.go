//go:build amd64 && !purego

package bert

import "golang.org/x/sys/cpu"

// hostISA is the best row-kernel level this CPU runs.
func hostISA() isa {
	switch {
	case cpu.X86.HasAVX512F:
		return isaAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return isaAVX2
	}
	return isaGo
}

// AVX-512 (kernels_amd64.s): any n.

//go:noescape
func expMaxSumAVX512(x *float32, n int) float32

//go:noescape
func geluBiasAVX512(x, b *float32, n int)

//go:noescape
func addSumAVX512(x, y, b *float32, n int) float32

//go:noescape
func sqDevAVX512(x *float32, n int, mean float32) float32

//go:noescape
func normAVX512(x, gain, b *float32, n int, mean, rstd float32)

//go:noescape
func addScaleAVX512(dst, a, b *float32, n int, s float32)

//go:noescape
func scaleAVX512(x *float32, n int, s float32)

// AVX2+FMA (kernels_avx2_amd64.s): n a multiple of 8.

//go:noescape
func maxAVX2(x *float32, n int) float32

//go:noescape
func expSubSumAVX2(x *float32, n int, mx float32) float32

//go:noescape
func geluBiasAVX2(x, b *float32, n int)

//go:noescape
func addSumAVX2(x, y, b *float32, n int) float32

//go:noescape
func sqDevAVX2(x *float32, n int, mean float32) float32

//go:noescape
func normAVX2(x, gain, b *float32, n int, mean, rstd float32)

//go:noescape
func addScaleAVX2(dst, a, b *float32, n int, s float32)

//go:noescape
func scaleAVX2(x *float32, n int, s float32)
