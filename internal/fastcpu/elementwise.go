package fastcpu

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// elemMinSize is the output size from which a float32 elementwise op runs
// natively (on all workers) instead of inside a simplego segment.
const elemMinSize = 1 << 14

// elemPlan is a float32 elementwise op run natively: a binary arithmetic op
// with simplego's broadcasting (same rank, size-1 axes broadcast, or a
// scalar operand) or Logistic.
type elemPlan struct {
	op      string
	dims    []int    // output dimensions
	strides [2][]int // per operand and output axis; 0 where broadcast
	perm    []int    // Transpose: output axis i is input axis perm[i]
}

var elemOps = map[string]int{"Add": 2, "Sub": 2, "Mul": 2, "Div": 2, "Logistic": 1}

// planElementwise returns the plan for n, or nil when n stays in simplego.
// Besides elementwise ops it takes float32 ReduceSum over the last axis
// (op "ReduceSumLast"), summed in the same order as simplego.
func planElementwise(n *node) *elemPlan {
	if n.kind == kindSeg && n.name == "ReduceSum" && len(n.inputs) == 1 && len(n.args) == 1 {
		in := n.inputs[0]
		axes, ok := n.args[0].([]int)
		rank := in.shape.Rank()
		if ok && len(axes) == 1 && rank > 0 && (axes[0] == rank-1 || axes[0] == -1) &&
			in.shape.DType == dtypes.Float32 && in.shape.Size() >= elemMinSize {
			return &elemPlan{op: "ReduceSumLast", dims: in.shape.Dimensions}
		}
		return nil
	}
	if n.kind == kindSeg && n.name == "Transpose" && len(n.inputs) == 1 && len(n.args) == 1 {
		in := n.inputs[0]
		perm, ok := n.args[0].([]int)
		if ok && len(perm) == in.shape.Rank() && in.shape.DType == dtypes.Float32 && in.shape.Size() >= elemMinSize {
			return &elemPlan{op: "Transpose", dims: in.shape.Dimensions, perm: perm}
		}
		return nil
	}
	arity, ok := elemOps[n.name]
	if !ok || n.kind != kindSeg || len(n.inputs) != arity || n.shape.DType != dtypes.Float32 || n.shape.Size() < elemMinSize {
		return nil
	}
	rank := n.shape.Rank()
	p := &elemPlan{op: n.name, dims: n.shape.Dimensions}
	for i, in := range n.inputs {
		if in.shape.DType != dtypes.Float32 {
			return nil
		}
		st := make([]int, rank)
		if in.shape.Rank() == 0 {
			p.strides[i] = st // scalar: every stride 0
			continue
		}
		if in.shape.Rank() != rank {
			return nil
		}
		stride := 1
		for a := rank - 1; a >= 0; a-- {
			switch d := in.shape.Dimensions[a]; {
			case d == p.dims[a]:
				st[a] = stride
			case d == 1:
				st[a] = 0
			default:
				return nil
			}
			stride *= in.shape.Dimensions[a]
		}
		p.strides[i] = st
	}
	return p
}

// splitRows runs fn over rows [0, rows) in contiguous chunks, one per
// worker (on t), with at most one worker per elemMinSize of the size values
// touched (below that, handing work over costs more than it saves). A
// worker that starts late finds its chunk taken.
func splitRows(t *team, rows, size, workers int, fn func(r0, r1 int)) {
	workers = min(workers, max(1, size/elemMinSize), max(1, rows))
	if workers <= 1 {
		fn(0, rows)
		return
	}
	chunk := (rows + workers - 1) / workers
	var next atomic.Int64
	t.run(workers, func() {
		for {
			r0 := int(next.Add(1)-1) * chunk
			if r0 >= rows {
				return
			}
			fn(r0, min(rows, r0+chunk))
		}
	})
}

// rowIO returns the float32 inputs of a native row-wise node and a new
// output buffer with its data.
func (r *run) rowIO(n *node) (ins [][]float32, out backends.Buffer, dst []float32, err error) {
	ins = make([][]float32, len(n.inputs))
	for i, in := range n.inputs {
		if ins[i], err = r.float32s(in); err != nil {
			return nil, nil, nil, err
		}
	}
	out, flat, err := r.e.backend.NewSharedBuffer(0, n.shape)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s output: %w", ErrBuild, n.name, err)
	}
	return ins, out, flat.([]float32), nil
}

func (r *run) elementwise(n *node) error {
	p := n.elem
	ins, out, dst, err := r.rowIO(n)
	if err != nil {
		return err
	}
	rank := len(p.dims)
	last := 1
	if rank > 0 {
		last = p.dims[rank-1]
	}
	size := len(dst)
	switch p.op {
	case "ReduceSumLast":
		size = len(ins[0])
	case "Transpose":
		transposeParallel(r.e.backend.gemm.team, dst, ins[0], p.dims, p.perm, r.e.backend.gemm.workers)
		size = 0
	}
	if size > 0 {
		splitRows(r.e.backend.gemm.team, size/max(1, last), size, r.e.backend.gemm.workers, func(r0, r1 int) {
			p.rows(r0, r1, last, dst, ins, r.e.backend.gemm.SIMD())
		})
	}
	r.done(n, out)
	return nil
}

// rows computes output rows [r0, r1) (a row is the last axis).
func (p *elemPlan) rows(r0, r1, last int, dst []float32, ins [][]float32, simd bool) {
	rank := len(p.dims)
	if p.op == "ReduceSumLast" {
		src := ins[0]
		for r := r0; r < r1; r++ {
			var sum float32
			for _, v := range src[r*last : (r+1)*last] {
				sum += v
			}
			dst[r] = sum
		}
		return
	}
	if p.op == "Logistic" {
		if simd {
			logisticSIMD(dst[r0*last:r1*last], ins[0][r0*last:r1*last])
		} else {
			logistic(dst[r0*last:r1*last], ins[0][r0*last:r1*last])
		}
		return
	}
	// Operand offsets of row r0 and an odometer over the leading axes.
	idx := make([]int, max(0, rank-1))
	rem := r0
	var off [2]int
	for a := rank - 2; a >= 0; a-- {
		idx[a] = rem % p.dims[a]
		rem /= p.dims[a]
		off[0] += idx[a] * p.strides[0][a]
		off[1] += idx[a] * p.strides[1][a]
	}
	var ls [2]int
	if rank > 0 {
		ls = [2]int{p.strides[0][rank-1], p.strides[1][rank-1]}
	}
	for r := r0; r < r1; r++ {
		binaryRow(p.op, dst[r*last:(r+1)*last], ins[0], off[0], ls[0], ins[1], off[1], ls[1])
		for a := rank - 2; a >= 0; a-- {
			idx[a]++
			off[0] += p.strides[0][a]
			off[1] += p.strides[1][a]
			if idx[a] < p.dims[a] {
				break
			}
			off[0] -= p.strides[0][a] * p.dims[a]
			off[1] -= p.strides[1][a] * p.dims[a]
			idx[a] = 0
		}
	}
}

// binaryRow computes dst[j] = a[ao+j*as] op b[bo+j*bs]; strides are 0 or 1.
func binaryRow(op string, dst, a []float32, ao, as int, b []float32, bo, bs int) {
	n := len(dst)
	switch {
	case as == 1 && bs == 1:
		x, y := a[ao:ao+n], b[bo:bo+n]
		switch op {
		case "Add":
			for j := range dst {
				dst[j] = x[j] + y[j]
			}
		case "Sub":
			for j := range dst {
				dst[j] = x[j] - y[j]
			}
		case "Mul":
			for j := range dst {
				dst[j] = x[j] * y[j]
			}
		case "Div":
			for j := range dst {
				dst[j] = x[j] / y[j]
			}
		}
	case as == 1 && bs == 0:
		x, c := a[ao:ao+n], b[bo]
		switch op {
		case "Add":
			for j := range dst {
				dst[j] = x[j] + c
			}
		case "Sub":
			for j := range dst {
				dst[j] = x[j] - c
			}
		case "Mul":
			for j := range dst {
				dst[j] = x[j] * c
			}
		case "Div":
			for j := range dst {
				dst[j] = x[j] / c
			}
		}
	case as == 0 && bs == 1:
		c, y := a[ao], b[bo:bo+n]
		switch op {
		case "Add":
			for j := range dst {
				dst[j] = c + y[j]
			}
		case "Sub":
			for j := range dst {
				dst[j] = c - y[j]
			}
		case "Mul":
			for j := range dst {
				dst[j] = c * y[j]
			}
		case "Div":
			for j := range dst {
				dst[j] = c / y[j]
			}
		}
	default:
		x, y := a[ao], b[bo]
		var v float32
		switch op {
		case "Add":
			v = x + y
		case "Sub":
			v = x - y
		case "Mul":
			v = x * y
		case "Div":
			v = x / y
		}
		for j := range dst {
			dst[j] = v
		}
	}
}

// logistic computes 1/(1+e^-x) as simplego does (in float64, stable form).
func logistic(dst, src []float32) {
	for i, x := range src {
		if x >= 0 {
			dst[i] = float32(1 / (1 + math.Exp(-float64(x))))
		} else {
			e := math.Exp(float64(x))
			dst[i] = float32(e / (1 + e))
		}
	}
}
