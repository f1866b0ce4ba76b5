package skimmer

import (
	"context"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Output is the model's view of one input row, trimmed to its real tokens.
type Output struct {
	N         int       // number of real tokens in the row
	Emissions []float32 // [N,K,2]: (prune, keep) emissions of each rubric
	Gates     []float32 // [N,K] gate weights; nil when K = 1
	LYes, LNo float32   // yes/no logits of the last real token

	// Filled only by RunInternals (golden tests and debugging).
	Hidden [3][]float32 // early, middle, final hidden states, [N,H] each
	Fused  []float32    // fused features, [N,3H]
}

// DocScore is sigmoid(l_yes − l_no), the reranker's relevance probability.
func (o Output) DocScore() float64 { return sigmoid(float64(o.LYes) - float64(o.LNo)) }

// seqBuckets are the padded sequence lengths: powers of two and their
// midpoints, so padding wastes at most a third while a long-running process
// compiles at most a few dozen graphs.
var seqBuckets = func() []int {
	var b []int
	for p := 16; p <= 1<<20; p *= 2 {
		b = append(b, p)
		if p >= 32 {
			b = append(b, p+p/2)
		}
	}
	return b
}()

// BucketLen returns the padded sequence length used for n tokens.
func BucketLen(n int) int {
	for _, b := range seqBuckets {
		if b >= n {
			return b
		}
	}
	return n
}

// BucketBatch returns the padded batch size used for n rows (a power of two).
func BucketBatch(n int) int {
	b := 1
	for b < n {
		b *= 2
	}
	return b
}

// Run scores a batch of token rows (each a complete model input). Rows are
// right-padded to a shared bucketed length; padding does not change the
// outputs of real tokens. It checks ctx before running.
func (m *Model) Run(ctx context.Context, rows [][]int32) ([]Output, error) {
	return m.run(ctx, rows, false)
}

// RunInternals is Run that also returns hidden states and fused features.
func (m *Model) RunInternals(ctx context.Context, rows [][]int32) ([]Output, error) {
	return m.run(ctx, rows, true)
}

func (m *Model) run(ctx context.Context, rows [][]int32, internals bool) (outs []Output, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	maxLen := 0
	for i, r := range rows {
		if len(r) == 0 {
			return nil, fmt.Errorf("skimmer: row %d is empty", i)
		}
		for _, id := range r {
			if id < 0 || int(id) >= m.cfg.Backbone.VocabSize {
				return nil, fmt.Errorf("skimmer: row %d: token id %d outside vocabulary [0,%d)", i, id, m.cfg.Backbone.VocabSize)
			}
		}
		maxLen = max(maxLen, len(r))
	}
	s, b := BucketLen(maxLen), BucketBatch(len(rows))
	ids := make([]int32, b*s)
	lengths := make([]int32, b)
	for i := range ids {
		ids[i] = PadID
	}
	for i := range lengths {
		lengths[i] = 1 // padding rows: one pad token keeps their softmaxes finite
	}
	for i, r := range rows {
		copy(ids[i*s:], r)
		lengths[i] = int32(len(r))
	}
	exec, err := m.executable(internals)
	if err != nil {
		return nil, err
	}
	defer recoverErr(&err, "skimmer: run")
	results, err := exec.Exec(tensors.FromFlatDataAndDimensions(ids, b, s), tensors.FromFlatDataAndDimensions(lengths, b))
	if err != nil {
		return nil, fmt.Errorf("skimmer: run: %w", err)
	}
	flat := make([][]float32, len(results))
	for i, t := range results {
		flat[i] = tensors.MustCopyFlatData[float32](t)
		t.MustFinalizeAll()
	}
	k := m.cfg.NumRubrics
	h, e := m.cfg.Backbone.HiddenSize, m.cfg.FusedDim()
	outs = make([]Output, len(rows))
	for i, r := range rows {
		n := len(r)
		o := Output{N: n}
		o.Emissions = clone(flat[0][i*s*k*2 : (i*s+n)*k*2])
		o.LYes, o.LNo = flat[1][2*i], flat[1][2*i+1]
		next := 2
		if k > 1 {
			o.Gates = clone(flat[2][i*s*k : (i*s+n)*k])
			next = 3
		}
		if internals {
			o.Fused = clone(flat[next][i*s*e : (i*s+n)*e])
			for j := 0; j < 3; j++ {
				o.Hidden[j] = clone(flat[next+1+j][i*s*h : (i*s+n)*h])
			}
		}
		outs[i] = o
	}
	return outs, nil
}

func clone(x []float32) []float32 { return append([]float32(nil), x...) }
