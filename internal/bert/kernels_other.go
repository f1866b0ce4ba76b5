//go:build !amd64 || purego

package bert

const hasAVX512 = false

func expMaxSumAVX512(x *float32, n int) float32                 { panic("unreachable") }
func geluBiasAVX512(x, b *float32, n int)                       { panic("unreachable") }
func addSumAVX512(x, y, b *float32, n int) float32              { panic("unreachable") }
func sqDevAVX512(x *float32, n int, mean float32) float32       { panic("unreachable") }
func normAVX512(x, gain, b *float32, n int, mean, rstd float32) { panic("unreachable") }
func addScaleAVX512(dst, a, b *float32, n int, s float32)       { panic("unreachable") }
func scaleAVX512(x *float32, n int, s float32)                  { panic("unreachable") }
