//go:build amd64 && !purego

package fastcpu

import "golang.org/x/sys/cpu"

// hasBF16 reports whether the bfloat16 kernel (VDPBF16PS, VCVTNE2PS2BF16)
// can run here: AVX-512 with the BF16 extension, ZMM state saved by the OS
// (x/sys/cpu checks it for every AVX-512 flag).
var hasBF16 = hasAVX512 && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512BF16

//go:noescape
func kernel12x32BF16(kp int, a *uint32, lda int, b *uint32, c *float32, ldc int, load bool)

//go:noescape
func cvtBF16Pairs(dst *uint32, src *float32, n32 int)

// cvtPairsSIMD converts the first len(src)&^31 floats of src into pairs in
// dst and returns how many pairs it wrote; callers check hasBF16.
func cvtPairsSIMD(dst []uint32, src []float32) int {
	n32 := len(src) / 32
	if n32 == 0 {
		return 0
	}
	_ = dst[16*n32-1]
	cvtBF16Pairs(&dst[0], &src[0], n32)
	return 16 * n32
}
