//go:build !amd64 || purego

package bert

func hostISA() isa { return isaGo }

// Never called: hostISA is isaGo.

func expMaxSumAVX512(x *float32, n int) float32                 { panic("unreachable") }
func geluBiasAVX512(x, b *float32, n int)                       { panic("unreachable") }
func addSumAVX512(x, y, b *float32, n int) float32              { panic("unreachable") }
func sqDevAVX512(x *float32, n int, mean float32) float32       { panic("unreachable") }
func normAVX512(x, gain, b *float32, n int, mean, rstd float32) { panic("unreachable") }
func addScaleAVX512(dst, a, b *float32, n int, s float32)       { panic("unreachable") }
func scaleAVX512(x *float32, n int, s float32)                  { panic("unreachable") }
func maxAVX2(x *float32, n int) float32                         { panic("unreachable") }
func expSubSumAVX2(x *float32, n int, mx float32) float32       { panic("unreachable") }
func geluBiasAVX2(x, b *float32, n int)                         { panic("unreachable") }
func addSumAVX2(x, y, b *float32, n int) float32                { panic("unreachable") }
func sqDevAVX2(x *float32, n int, mean float32) float32         { panic("unreachable") }
func normAVX2(x, gain, b *float32, n int, mean, rstd float32)   { panic("unreachable") }
func addScaleAVX2(dst, a, b *float32, n int, s float32)         { panic("unreachable") }
func scaleAVX2(x *float32, n int, s float32)                    { panic("unreachable") }
