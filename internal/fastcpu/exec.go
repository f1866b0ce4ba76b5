package fastcpu

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Executable runs a compiled fastgo graph: its segments on simplego and its
// products on Gemm. It is safe for concurrent use.
type Executable struct {
	backend *Backend
	names   []string
	params  []*node
	steps   []step
	outputs []*node
	uses    []int  // per node id: reads by steps (outputs excluded)
	isOut   []bool // per node id
	isConst []bool // per node id: a folded constant (in consts)
	consts  []constValue
	scratch sync.Pool
}

var _ backends.Executable = (*Executable)(nil)

func newExecutable(b *Builder, steps []step, outputs []*node, consts []constValue) *Executable {
	e := &Executable{backend: b.backend, names: b.paramNames, params: b.params, steps: steps, outputs: outputs,
		uses: make([]int, len(b.nodes)), isOut: make([]bool, len(b.nodes)), isConst: make([]bool, len(b.nodes)), consts: consts}
	for _, c := range consts {
		e.isConst[c.n.id] = true
	}
	for _, st := range steps {
		if st.seg != nil {
			for _, n := range st.seg.imports {
				e.uses[n.id]++
			}
		} else {
			for _, in := range st.native.inputs {
				e.uses[in.id]++
			}
		}
	}
	for _, n := range outputs {
		e.isOut[n.id] = true
	}
	e.scratch.New = func() any { return new([]float32) }
	return e
}

// Finalize implements backends.Executable.
func (e *Executable) Finalize() {
	for _, st := range e.steps {
		if st.seg != nil && st.seg.exe != nil {
			st.seg.exe.Finalize()
		}
	}
	for _, c := range e.consts {
		_ = e.backend.BufferFinalize(c.buf)
	}
	e.consts = nil
	e.steps = nil
}

// Inputs implements backends.Executable.
func (e *Executable) Inputs() (names []string, inputShapes []shapes.Shape) {
	for i, p := range e.params {
		names = append(names, e.names[i])
		inputShapes = append(inputShapes, p.shape)
	}
	return names, inputShapes
}

// Outputs implements backends.Executable.
func (e *Executable) Outputs() []shapes.Shape {
	out := make([]shapes.Shape, len(e.outputs))
	for i, n := range e.outputs {
		out[i] = n.shape
	}
	return out
}

// run holds the values of one execution.
type run struct {
	e     *Executable
	vals  []backends.Buffer
	owned []bool
	uses  []int
}

// release drops one read of n, freeing its buffer after the last one.
func (r *run) release(n *node) {
	r.uses[n.id]--
	if r.uses[n.id] == 0 && r.owned[n.id] && !r.e.isOut[n.id] && r.vals[n.id] != nil {
		_ = r.e.backend.BufferFinalize(r.vals[n.id])
		r.vals[n.id] = nil
	}
}

// done records out as n's value and drops n's reads of its inputs (the end
// of every native step).
func (r *run) done(n *node, out backends.Buffer) {
	for _, in := range n.inputs {
		r.release(in)
	}
	r.vals[n.id] = out
	r.owned[n.id] = true
}

// cleanup frees every owned intermediate buffer (after an error).
func (r *run) cleanup() {
	for id, v := range r.vals {
		if v != nil && r.owned[id] {
			_ = r.e.backend.BufferFinalize(v)
			r.vals[id] = nil
		}
	}
}

// Execute implements backends.Executable.
func (e *Executable) Execute(inputs []backends.Buffer, donate []bool, _ backends.DeviceNum) ([]backends.Buffer, error) {
	if e.steps == nil && len(e.outputs) > 0 {
		return nil, fmt.Errorf("%w: executable finalized", ErrBuild)
	}
	if len(inputs) != len(e.params) {
		return nil, fmt.Errorf("%w: %d inputs given, %d expected", ErrBuild, len(inputs), len(e.params))
	}
	n := len(e.uses)
	r := &run{e: e, vals: make([]backends.Buffer, n), owned: make([]bool, n), uses: make([]int, n)}
	copy(r.uses, e.uses)
	for _, c := range e.consts {
		r.vals[c.n.id] = c.buf // not owned: never donated or freed
	}
	for i, p := range e.params {
		r.vals[p.id] = inputs[i]
		r.owned[p.id] = len(donate) > i && donate[i]
	}
	for _, st := range e.steps {
		var err error
		switch {
		case st.seg != nil:
			err = r.segment(st.seg)
		case st.native.kind == kindDot:
			err = r.dot(st.native)
		case st.native.kind == kindElem:
			err = r.elementwise(st.native)
		case st.native.kind == kindRow:
			err = r.rowOp(st.native)
		case st.native.kind == kindGather:
			err = r.gather(st.native)
		default:
			err = r.attention(st.native)
		}
		if err != nil {
			r.cleanup()
			return nil, err
		}
	}
	outs := make([]backends.Buffer, len(e.outputs))
	for i, o := range e.outputs {
		outs[i] = r.vals[o.id]
		r.vals[o.id] = nil
	}
	// Donated inputs not consumed are ours to free.
	r.cleanup()
	return outs, nil
}

func (r *run) segment(s *segment) error {
	ins := make([]backends.Buffer, len(s.imports))
	don := make([]bool, len(s.imports))
	for i, n := range s.imports {
		ins[i] = r.vals[n.id]
		if ins[i] == nil {
			return fmt.Errorf("%w: internal: value v%d missing", ErrBuild, n.id)
		}
		// Hand over buffers read for the last time, so simplego can reuse them.
		if r.owned[n.id] && r.uses[n.id] == 1 && !r.e.isOut[n.id] {
			don[i] = true
			r.vals[n.id] = nil
		}
	}
	outs, err := s.exe.Execute(ins, don, 0)
	if err != nil {
		return fmt.Errorf("%w: segment %q: %w", ErrBuild, s.sb.Name(), err)
	}
	for _, n := range s.imports {
		r.release(n)
	}
	for i, n := range s.exports {
		r.vals[n.id] = outs[i]
		r.owned[n.id] = true
	}
	return nil
}

var errDType = errors.New("buffer is not float32")

func (r *run) float32s(n *node) ([]float32, error) {
	flat, err := r.e.backend.BufferData(r.vals[n.id])
	if err != nil {
		return nil, err
	}
	f, ok := flat.([]float32)
	if !ok {
		return nil, fmt.Errorf("%w: value v%d: %w", ErrBuild, n.id, errDType)
	}
	return f, nil
}

// bfloat16s returns n's bfloat16 value as bit patterns (no copy).
func (r *run) bfloat16s(n *node) ([]uint16, error) {
	flat, err := r.e.backend.BufferData(r.vals[n.id])
	if err != nil {
		return nil, err
	}
	f, ok := flat.([]bfloat16.BFloat16)
	if !ok {
		return nil, fmt.Errorf("%w: value v%d: buffer is %T, not bfloat16", ErrBuild, n.id, flat)
	}
	if len(f) == 0 {
		return []uint16{}, nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&f[0])), len(f)), nil
}

func (r *run) dot(n *node) error {
	p := n.dot
	lhsN, rhsN := n.inputs[0], n.inputs[1]
	lhs, err := r.float32s(lhsN)
	if err != nil {
		return err
	}
	var rhs []float32
	var rhsHalf []uint16
	if p.rhsBF16 {
		rhsHalf, err = r.bfloat16s(rhsN)
	} else {
		rhs, err = r.float32s(rhsN)
	}
	if err != nil {
		return err
	}
	out, flat, err := r.e.backend.NewSharedBuffer(0, n.shape)
	if err != nil {
		return fmt.Errorf("%w: product output: %w", ErrBuild, err)
	}
	c := flat.([]float32)
	a, b := p.lhs.view, p.rhs.view
	var bufs []*[]float32
	prepare := func(op operandPlan, data []float32, v *Strided) {
		if op.perm == nil {
			v.Data = data
			return
		}
		buf := r.e.scratch.Get().(*[]float32)
		if cap(*buf) < len(data) {
			*buf = make([]float32, len(data))
		}
		*buf = (*buf)[:len(data)]
		transposeParallel(r.e.backend.gemm.team, *buf, data, op.dims, op.perm, r.e.backend.gemm.workers)
		v.Data = *buf
		bufs = append(bufs, buf)
	}
	prepare(p.lhs, lhs, &a)
	if p.rhsBF16 {
		b.BF16 = rhsHalf // viewed in place: fuseBF16Operands requires it
	} else {
		prepare(p.rhs, rhs, &b)
	}
	if g := r.e.backend.gemm; p.weight && g.bf16 {
		g.MatMulBF16(p.batch, p.m, p.n, p.k, a, b, c)
	} else {
		g.MatMul(p.batch, p.m, p.n, p.k, a, b, c)
	}
	for _, buf := range bufs {
		r.e.scratch.Put(buf)
	}
	r.done(n, out)
	return nil
}
