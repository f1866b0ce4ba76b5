package crf

import (
	"fmt"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"math/rand/v2"
	"testing"
)

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

func BenchmarkMarginals(b *testing.B) {
	for _, numTags := range []int{2, 3} {
		for _, n := range []int{8 << 10, 100_000} {
			r := rand.New(rand.NewPCG(2, uint64(n)))
			p := randomParams(r, numTags, 1)
			em := randomEmissions(r, n, numTags, 3)
			b.Run(fmt.Sprintf("T=%d/n=%d/workspace", numTags, n), func(b *testing.B) {
				var w Workspace
				dst := make([]float64, n*numTags)
				b.ReportAllocs()
				for b.Loop() {
					_, _ = MarginalsInto(&w, dst, p, em, nil)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pos")
			})
		}
	}
}

func BenchmarkLogPartition(b *testing.B) {
	const n = 100_000
	r := rand.New(rand.NewPCG(3, 4))
	p := randomParams(r, 2, 1)
	em := randomEmissions(r, n, 2, 3)
	var w Workspace
	b.ReportAllocs()
	for b.Loop() {
		_, _ = LogPartitionWith(&w, p, em, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pos")
}

// BenchmarkNLLGraphGradient measures one training-style evaluation (loss and
// its gradient w.r.t. emissions and transitions) on the pure Go backend.
func BenchmarkNLLGraphGradient(b *testing.B) {
	backend := newBackend(b)
	exec, err := NewExec(backend, func(em, mask, trans, start, end, tags *Node) []*Node {
		loss := ReduceAllMean(NLLGraph(em, mask, trans, start, end, tags))
		g := Gradient(loss, em, trans)
		return []*Node{loss, g[0], g[1]}
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range []int{512, 2048} {
		const batch = 8
		r := rand.New(rand.NewPCG(5, uint64(l)))
		em := make([][][]float32, batch)
		mask := make([][]bool, batch)
		tags := make([][]int32, batch)
		for i := range batch {
			for range l {
				em[i] = append(em[i], []float32{float32(r.NormFloat64()), float32(r.NormFloat64())})
				tags[i] = append(tags[i], int32(r.IntN(2)))
				mask[i] = append(mask[i], true)
			}
		}
		trans := [][]float32{{0.1, -0.2}, {0.3, 0.05}}
		start, end := []float32{0.1, 0.2}, []float32{-0.1, 0.3}
		b.Run(fmt.Sprintf("B=%d/L=%d", batch, l), func(b *testing.B) {
			if _, err := exec.Exec(em, mask, trans, start, end, tags); err != nil { // compile outside the loop
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := exec.Exec(em, mask, trans, start, end, tags); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
