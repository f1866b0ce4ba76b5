//go:build amd64 && !purego

package bert

import "golang.org/x/sys/cpu"

// hasAVX512 selects the AVX-512 row kernels (kernels_amd64.s).
var hasAVX512 = cpu.X86.HasAVX512F

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
