package crf

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks report ns/op for a whole sequence and ns/pos per position.
// Benchmarks report ns/op for a whole sequence; divide by the size for
// ns/position (also reported as the ns/pos metric).
func BenchmarkViterbi(b *testing.B) {
	for _, numTags := range []int{2, 3} {
		for _, n := range []int{8 << 10, 100_000} {
			r := rand.New(rand.NewPCG(1, uint64(n)))
			p := randomParams(r, numTags, 1)
			em := randomEmissions(r, n, numTags, 3)
			b.Run(fmt.Sprintf("T=%d/n=%d/fresh", numTags, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_, _, _ = Viterbi(p, em, nil)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pos")
			})
			b.Run(fmt.Sprintf("T=%d/n=%d/workspace", numTags, n), func(b *testing.B) {
				var w Workspace
				dst := make([]int, n)
				b.ReportAllocs()
				for b.Loop() {
					_, _, _ = DecodeInto(&w, dst, p, em, nil, AsCoded)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pos")
			})
		}
	}
}
