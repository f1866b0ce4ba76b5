package train

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gomlx/gomlx/backends"
	G "github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/prunekit/pruner/internal/fastcpu"
	"github.com/prunekit/pruner/internal/linemodel"
)

// syntheticExamples returns n random examples of L lines (for timing).
func syntheticExamples(n, L int) []Example {
	rng := rand.New(rand.NewPCG(3, 4))
	exs := make([]Example, n)
	for e := range exs {
		ex := Example{N: L, X: make([]float32, L*linemodel.NumFeatures), Dep: make([]float32, L), Def: make([]int32, L), Lab: make([]uint8, L),
			QIDs: []uint16{1, 2, 3, 4, 5}, TIDs: make([]uint16, L*linemodel.MaxLineIDs)}
		for i := range ex.TIDs {
			ex.TIDs[i] = uint16(rng.IntN(linemodel.NumBuckets))
		}
		for i := range ex.X {
			ex.X[i] = float32(rng.NormFloat64())
		}
		for i := 0; i < L; i++ {
			ex.Def[i] = int32(i / 37)
			if rng.IntN(30) == 0 {
				ex.Lab[i] = LabGold | LabSem
				ex.Gold = append(ex.Gold, i+1)
			}
		}
		exs[e] = ex
	}
	return exs
}

func BenchmarkTrainStep(b *testing.B) {
	exs := syntheticExamples(16, 400)
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := linemodel.NewModel(linemodel.Config{Hidden: []int{64, 32, 32}, Embed: 16, Lambda: 0.5, Listwise: 1, GateReg: 0.002}, rng.NormFloat64)
	if err != nil {
		b.Fatal(err)
	}
	var be backends.Backend
	if os.Getenv("LINEMODEL_FASTCPU") != "" {
		if be, err = fastcpu.New(""); err != nil {
			b.Fatal(err)
		}
	}
	tr, err := NewTrainer(m, TrainOptions{Batch: 16, MaxLines: 400, TargetDep: 0.3}, be)
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]*Example, 16)
	for i := range batch {
		batch[i] = &exs[i]
	}
	if _, err := tr.TrainStep(batch); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.TrainStep(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAttnEncoderStep times one step of the attention encoder's
// training graph at the experiment's sizes (a 40K-word vocabulary).
func BenchmarkAttnEncoderStep(b *testing.B) {
	backend, err := fastcpu.New("")
	if err != nil {
		b.Fatal(err)
	}
	for _, dim := range []int{64, 128} {
		b.Run(fmt.Sprintf("dim%d", dim), func(b *testing.B) {
			V := 40000
			idf := make([]float32, V)
			for i := range idf {
				idf[i] = 1
			}
			o := DefaultAttnEncoderOptions
			o.Dim = dim
			m := newAttnEnc(V, idf, o)
			B, C, Lq := o.Batch, o.Cands, o.QueryWords
			rng := rand.New(rand.NewPCG(1, 2))
			qIDs, qW := make([]int32, B*Lq), make([]float32, B*Lq)
			for i := range qIDs {
				qIDs[i], qW[i] = int32(rng.IntN(V)), 1
			}
			units := make([][]int32, B*C)
			cm := make([]float32, B*C)
			for n := range units {
				cm[n] = 1
				for range 30 {
					units[n] = append(units[n], int32(rng.IntN(V)))
				}
			}
			uIDs, uW, uM := m.unitInputs(units, B*C)
			exec, err := G.NewExec(backend, func(in []*G.Node) []*G.Node { return m.trainGraph(in) })
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				outs := exec.MustExec(m.stepArgs(qIDs, qW, uIDs, uW, uM, cm)...)
				for _, t := range outs {
					t.FinalizeAll()
				}
			}
		})
	}
}
