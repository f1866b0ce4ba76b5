//go:build !amd64 || purego

package fastcpu

func expSubSumSIMD(x []float32, mx, scale float32, _ bool) float32 {
	return expSubSumGo(x, mx, scale)
}

func maxSIMD(x []float32, _ bool) float32 { return maxGo(x) }

func scaleMaxSIMD(x []float32, scale float32) float32 { return scaleMaxGo(x, scale) }

func mulSIMD(x []float32, f float32) { mulGo(x, f) }

func logisticSIMD(dst, src []float32) { logistic(dst, src) }
