//go:build !amd64 || purego

package fastcpu

func expSubSumSIMD(x []float32, mx float32) float32 { return expSubSumGo(x, mx) }

func scaleMaxSIMD(x []float32, scale float32) float32 { return scaleMaxGo(x, scale) }

func mulSIMD(x []float32, f float32) { mulGo(x, f) }

func logisticSIMD(dst, src []float32) { logistic(dst, src) }
