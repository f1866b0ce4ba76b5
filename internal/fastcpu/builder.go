package fastcpu

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/notimplemented"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// ErrBuild is wrapped by graph-building errors of the fastgo backend.
var ErrBuild = errors.New("fastgo")

type nodeKind int

const (
	kindSeg   nodeKind = iota // an op inside a simplego segment
	kindParam                 // a parameter of the whole graph
	kindDot                   // a float32 DotGeneral run by Gemm
)

// node is the backends.Op handed to GoMLX.
type node struct {
	id      int
	kind    nodeKind
	shape   shapes.Shape
	builder *Builder

	seg *segment    // kindSeg: owning segment
	op  backends.Op // kindSeg: the op in seg's simplego builder

	param int      // kindParam: parameter index
	dot   *dotPlan // kindDot
	lhs   *node    // kindDot
	rhs   *node    // kindDot
}

// segment is a run of non-DotGeneral ops, built in one simplego builder.
type segment struct {
	sb       backends.Builder
	imports  []*node                 // external values, in parameter order
	importOp map[*node]backends.Op   // external node -> parameter op
	paramOf  map[backends.Op]*node   // parameter op -> external node
	exports  []*node                 // values read after the segment, in output order
	exported map[*node]bool
	exe      backends.Executable
}

// step is one stage of execution: a segment or a product.
type step struct {
	seg *segment
	dot *node
}

// Builder builds a fastgo computation. It implements backends.Builder; ops
// other than float32 DotGeneral are forwarded to simplego (see gen_ops.go).
type Builder struct {
	notimplemented.Builder

	name     string
	backend  *Backend
	nodes    []*node
	params   []*node
	paramNames []string
	steps    []step
	cur      *segment
	compiled bool
}

var _ backends.Builder = (*Builder)(nil)

// Name implements backends.Builder.
func (b *Builder) Name() string { return b.name }

// OpShape implements backends.Builder.
func (b *Builder) OpShape(op backends.Op) (shapes.Shape, error) {
	n, err := b.node("OpShape", op)
	if err != nil {
		return shapes.Invalid(), err
	}
	return n.shape, nil
}

func (b *Builder) node(what string, op backends.Op) (*node, error) {
	n, ok := op.(*node)
	if !ok || n == nil {
		return nil, fmt.Errorf("%w: %s: op %T was not created by a fastgo builder", ErrBuild, what, op)
	}
	if n.builder != b {
		return nil, fmt.Errorf("%w: %s: op from builder %q used in builder %q", ErrBuild, what, n.builder.name, b.name)
	}
	return n, nil
}

func (b *Builder) newNode(kind nodeKind, shape shapes.Shape) *node {
	n := &node{id: len(b.nodes), kind: kind, shape: shape, builder: b}
	b.nodes = append(b.nodes, n)
	return n
}

// segment returns the open segment, starting one if a product closed the last.
func (b *Builder) segment() *segment {
	if b.cur == nil {
		b.cur = &segment{
			sb:       b.backend.Backend.Builder(fmt.Sprintf("%s#%d", b.name, len(b.steps))),
			importOp: map[*node]backends.Op{},
			paramOf:  map[backends.Op]*node{},
			exported: map[*node]bool{},
		}
		b.steps = append(b.steps, step{seg: b.cur})
	}
	return b.cur
}

// export marks n as read after its segment (by a later segment, a product or
// the graph outputs).
func export(n *node) {
	if n.kind != kindSeg || n.seg.exported[n] {
		return
	}
	n.seg.exported[n] = true
	n.seg.exports = append(n.seg.exports, n)
}

// local returns the op standing for n inside segment s, importing n as a
// parameter of s when it was computed elsewhere.
func (s *segment) local(n *node) (backends.Op, error) {
	if n.kind == kindSeg && n.seg == s {
		return n.op, nil
	}
	if op, ok := s.importOp[n]; ok {
		return op, nil
	}
	op, err := s.sb.Parameter(fmt.Sprintf("v%d", n.id), n.shape, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: import value: %w", ErrBuild, err)
	}
	s.importOp[n] = op
	s.paramOf[op] = n
	s.imports = append(s.imports, n)
	export(n)
	return op, nil
}

// joinOps concatenates op lists (used by the generated forwarders).
func joinOps(lists ...[]backends.Op) []backends.Op {
	return slices.Concat(lists...)
}

// forward adds an op to the open segment by calling build on its simplego
// builder with the segment-local versions of ins.
func (b *Builder) forward(what string, ins []backends.Op, build func(backends.Builder, []backends.Op) (backends.Op, error)) (backends.Op, error) {
	if b.compiled {
		return nil, fmt.Errorf("%w: %s: builder %q already compiled", ErrBuild, what, b.name)
	}
	nodes := make([]*node, len(ins))
	for i, op := range ins {
		n, err := b.node(what, op)
		if err != nil {
			return nil, err
		}
		nodes[i] = n
	}
	s := b.segment()
	local := make([]backends.Op, len(nodes))
	for i, n := range nodes {
		op, err := s.local(n)
		if err != nil {
			return nil, err
		}
		local[i] = op
	}
	op, err := build(s.sb, local)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBuild, what, err)
	}
	if src, ok := s.paramOf[op]; ok { // a no-op returned its (imported) operand
		return src, nil
	}
	for i, l := range local {
		if op == l {
			return nodes[i], nil
		}
	}
	shape, err := s.sb.OpShape(op)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBuild, what, err)
	}
	n := b.newNode(kindSeg, shape)
	n.seg, n.op = s, op
	return n, nil
}

// Parameter implements backends.Builder.
func (b *Builder) Parameter(name string, shape shapes.Shape, sharding *backends.ShardingSpec) (backends.Op, error) {
	if b.compiled {
		return nil, fmt.Errorf("%w: Parameter: builder %q already compiled", ErrBuild, b.name)
	}
	if sharding != nil {
		return nil, fmt.Errorf("%w: Parameter %q: sharding is not supported", ErrBuild, name)
	}
	n := b.newNode(kindParam, shape)
	n.param = len(b.params)
	b.params = append(b.params, n)
	b.paramNames = append(b.paramNames, name)
	return n, nil
}

// Constant implements backends.Builder.
func (b *Builder) Constant(flat any, dims ...int) (backends.Op, error) {
	return b.forward("Constant", nil, func(sb backends.Builder, _ []backends.Op) (backends.Op, error) {
		return sb.Constant(flat, dims...)
	})
}

// DotGeneral implements backends.Builder: float32 products run on Gemm,
// other dtypes are forwarded to simplego.
func (b *Builder) DotGeneral(lhsOp backends.Op, lhsContractingAxes, lhsBatchAxes []int,
	rhsOp backends.Op, rhsContractingAxes, rhsBatchAxes []int) (backends.Op, error) {
	lhs, err := b.node("DotGeneral", lhsOp)
	if err != nil {
		return nil, err
	}
	rhs, err := b.node("DotGeneral", rhsOp)
	if err != nil {
		return nil, err
	}
	if lhs.shape.DType != dtypes.Float32 || rhs.shape.DType != dtypes.Float32 {
		return b.forward("DotGeneral", []backends.Op{lhsOp, rhsOp}, func(sb backends.Builder, in []backends.Op) (backends.Op, error) {
			return sb.DotGeneral(in[0], lhsContractingAxes, lhsBatchAxes, in[1], rhsContractingAxes, rhsBatchAxes)
		})
	}
	if b.compiled {
		return nil, fmt.Errorf("%w: DotGeneral: builder %q already compiled", ErrBuild, b.name)
	}
	plan, shape, err := planDot(lhs.shape, lhsContractingAxes, lhsBatchAxes, rhs.shape, rhsContractingAxes, rhsBatchAxes)
	if err != nil {
		return nil, fmt.Errorf("%w: DotGeneral: %w", ErrBuild, err)
	}
	n := b.newNode(kindDot, shape)
	n.dot, n.lhs, n.rhs = plan, lhs, rhs
	export(lhs)
	export(rhs)
	b.cur = nil // later ops go to a new segment
	b.steps = append(b.steps, step{dot: n})
	return n, nil
}

// Compile implements backends.Builder.
func (b *Builder) Compile(outputs []backends.Op, shardings []*backends.ShardingSpec) (backends.Executable, error) {
	if b.compiled {
		return nil, fmt.Errorf("%w: builder %q already compiled", ErrBuild, b.name)
	}
	if len(shardings) != 0 {
		return nil, fmt.Errorf("%w: sharding is not supported", ErrBuild)
	}
	outs := make([]*node, len(outputs))
	seen := map[*node]bool{}
	for i, op := range outputs {
		n, err := b.node("Compile", op)
		if err != nil {
			return nil, err
		}
		if n.kind == kindParam || seen[n] {
			// Outputs get buffers of their own: copy parameters and repeats.
			idOp, err := b.Identity(n)
			if err != nil {
				return nil, err
			}
			n = idOp.(*node)
		}
		seen[n] = true
		outs[i] = n
	}
	for _, n := range outs {
		export(n)
	}
	b.compiled = true
	var steps []step
	for _, st := range b.steps {
		if st.seg == nil {
			steps = append(steps, st)
			continue
		}
		s := st.seg
		if len(s.exports) == 0 {
			continue // nothing computed here is used
		}
		ops := make([]backends.Op, len(s.exports))
		for i, n := range s.exports {
			ops[i] = n.op
		}
		exe, err := s.sb.Compile(ops, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: compile segment %q: %w", ErrBuild, s.sb.Name(), err)
		}
		s.exe = exe
		steps = append(steps, st)
	}
	return newExecutable(b, steps, outs), nil
}
