//go:build !amd64 || purego

package fastcpu

// hasBF16 is false without the amd64 assembly.
const hasBF16 = false

func kernel12x32BF16(kp int, a *uint32, lda int, b *uint32, c *float32, ldc int, load bool) {
	panic("fastcpu: no bfloat16 kernel in this build")
}

func cvtPairsSIMD(dst []uint32, src []float32) int { return 0 }
