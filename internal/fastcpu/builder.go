package fastcpu

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/notimplemented"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// ErrBuild is wrapped by graph-building and execution errors of the fastgo
// backend.
var ErrBuild = errors.New("fastgo")

type nodeKind int

const (
	kindSeg    nodeKind = iota // an op run by simplego inside a segment
	kindParam                  // a parameter of the whole graph
	kindDot                    // a float32 DotGeneral run by Gemm
	kindAttn                   // a fused masked-softmax attention (see attention.go)
	kindElem                   // a float32 elementwise op run natively (see elementwise.go)
	kindRow                    // a fused chain of float32 row-wise ops (see rowops.go)
	kindGather                 // a Gather of whole rows (see gather.go)
)

type buildFn func(sb backends.Builder, in []backends.Op) (backends.Op, error)

// node is the backends.Op handed to GoMLX. Nodes are recorded while the graph
// is built and lowered at Compile: fusions first, then segmentation.
type node struct {
	id      int
	kind    nodeKind
	name    string // op name
	shape   shapes.Shape
	builder *Builder
	inputs  []*node
	args    []any   // non-op arguments of the op (kindSeg)
	build   buildFn // kindSeg: adds the op to a simplego builder
	shadow  backends.Op
	uses    int // number of nodes reading this one

	param  int      // kindParam: parameter index
	dot    *dotPlan // kindDot
	attn   *attnPlan
	elem   *elemPlan
	row    *rowPlan
	gather *gatherPlan

	// Set by Compile for kindSeg nodes.
	seg *segment
	op  backends.Op
}

// segment is a run of ops built and run by one simplego executable.
type segment struct {
	sb       backends.Builder
	imports  []*node               // external values, in parameter order
	importOp map[*node]backends.Op // external node -> parameter op
	paramOf  map[backends.Op]*node // parameter op -> external node
	exports  []*node               // values read after the segment, in output order
	exported map[*node]bool
	exe      backends.Executable
}

// step is one stage of execution: a segment or a native op.
type step struct {
	seg    *segment
	native *node
}

// Builder builds a fastgo computation. It implements backends.Builder; ops
// other than float32 DotGeneral are forwarded to simplego (see gen_ops.go).
// Every op is also added to a "shadow" simplego builder at once, which
// validates it and gives its shape.
type Builder struct {
	notimplemented.Builder

	name       string
	backend    *Backend
	shadow     backends.Builder
	nodes      []*node
	params     []*node
	paramNames []string
	compiled   bool
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

func (b *Builder) shadowBuilder() backends.Builder {
	if b.shadow == nil {
		b.shadow = b.backend.Backend.Builder(b.name + "#shadow")
	}
	return b.shadow
}

func (b *Builder) newNode(kind nodeKind, name string, shape shapes.Shape, inputs []*node) *node {
	n := &node{id: len(b.nodes), kind: kind, name: name, shape: shape, builder: b, inputs: inputs}
	for _, in := range inputs {
		in.uses++
	}
	b.nodes = append(b.nodes, n)
	return n
}

func (b *Builder) nodes2(what string, ins []backends.Op) ([]*node, error) {
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
	return nodes, nil
}

// joinOps concatenates op lists (used by the generated forwarders).
func joinOps(lists ...[]backends.Op) []backends.Op {
	return slices.Concat(lists...)
}

// forward records an op that simplego runs: build adds it to a simplego
// builder given the builder-local versions of ins.
func (b *Builder) forward(what string, ins []backends.Op, args []any, build buildFn) (backends.Op, error) {
	nodes, err := b.nodes2(what, ins)
	if err != nil {
		return nil, err
	}
	shadowIns := make([]backends.Op, len(nodes))
	for i, n := range nodes {
		shadowIns[i] = n.shadow
	}
	op, err := build(b.shadowBuilder(), shadowIns)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBuild, what, err)
	}
	for i, in := range shadowIns {
		if op == in { // a no-op returned its operand
			return nodes[i], nil
		}
	}
	shape, err := b.shadow.OpShape(op)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBuild, what, err)
	}
	n := b.newNode(kindSeg, what, shape, nodes)
	n.args, n.build, n.shadow = args, build, op
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
	op, err := b.shadowBuilder().Parameter(name, shape, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: Parameter %q: %w", ErrBuild, name, err)
	}
	n := b.newNode(kindParam, "Parameter", shape, nil)
	n.param, n.shadow = len(b.params), op
	b.params = append(b.params, n)
	b.paramNames = append(b.paramNames, name)
	return n, nil
}

// Constant implements backends.Builder. The values are kept (args[0]) so
// fusions can read scalar constants.
func (b *Builder) Constant(flat any, dims ...int) (backends.Op, error) {
	return b.forward("Constant", nil, []any{flat, dims}, func(sb backends.Builder, _ []backends.Op) (backends.Op, error) {
		return sb.Constant(flat, dims...)
	})
}

// DotGeneral implements backends.Builder: float32 products run on Gemm,
// other dtypes are forwarded to simplego.
func (b *Builder) DotGeneral(lhsOp backends.Op, lhsContractingAxes, lhsBatchAxes []int,
	rhsOp backends.Op, rhsContractingAxes, rhsBatchAxes []int) (backends.Op, error) {
	nodes, err := b.nodes2("DotGeneral", []backends.Op{lhsOp, rhsOp})
	if err != nil {
		return nil, err
	}
	lhs, rhs := nodes[0], nodes[1]
	lc, lb := slices.Clone(lhsContractingAxes), slices.Clone(lhsBatchAxes)
	rc, rb := slices.Clone(rhsContractingAxes), slices.Clone(rhsBatchAxes)
	build := func(sb backends.Builder, in []backends.Op) (backends.Op, error) {
		return sb.DotGeneral(in[0], slices.Clone(lc), slices.Clone(lb), in[1], slices.Clone(rc), slices.Clone(rb))
	}
	if lhs.shape.DType != dtypes.Float32 || rhs.shape.DType != dtypes.Float32 {
		// The axes are the op's arguments: dedupeConstants compares them.
		return b.forward("DotGeneral", []backends.Op{lhsOp, rhsOp}, []any{lc, lb, rc, rb}, build)
	}
	plan, shape, err := planDot(lhs.shape, lc, lb, rhs.shape, rc, rb)
	if err != nil {
		return nil, fmt.Errorf("%w: DotGeneral: %w", ErrBuild, err)
	}
	op, err := build(b.shadowBuilder(), []backends.Op{lhs.shadow, rhs.shadow})
	if err != nil {
		return nil, fmt.Errorf("%w: DotGeneral: %w", ErrBuild, err)
	}
	n := b.newNode(kindDot, "DotGeneral", shape, nodes)
	n.dot, n.shadow = plan, op
	return n, nil
}

// Compile implements backends.Builder: it fuses attention patterns, drops
// unused nodes and cuts the graph into simplego segments and native steps.
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
	b.compiled = true
	if b.shadow != nil {
		if f, ok := b.shadow.(interface{ Finalize() }); ok {
			defer f.Finalize()
		}
	}
	for _, n := range outs {
		n.uses++ // outputs are read by the caller
	}
	dedupeConstants(b.nodes, outs)
	fuseAttention(b.nodes, b.backend.gemm)
	fuseRowOps(b.nodes)
	fuseBF16Operands(b.nodes)

	// Live nodes: those the outputs depend on.
	live := make([]bool, len(b.nodes))
	stack := slices.Clone(outs)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if live[n.id] {
			continue
		}
		live[n.id] = true
		stack = append(stack, n.inputs...)
	}
	fuseNormRotary(b.nodes, live)

	// Constant folding: ops that depend on no parameter (constants, iotas,
	// the causal mask, rotary tables) are computed once, here, by one
	// simplego segment; executions read the cached values.
	isOut := make([]bool, len(b.nodes))
	for _, n := range outs {
		isOut[n.id] = true
	}
	isConst := make([]bool, len(b.nodes))
	var constSeg *segment
	for _, n := range b.nodes {
		if !live[n.id] || n.kind != kindSeg || isOut[n.id] {
			continue
		}
		c := true
		for _, in := range n.inputs {
			c = c && isConst[in.id]
		}
		if !c {
			continue
		}
		isConst[n.id] = true
		if constSeg == nil {
			constSeg = newSegment(b.backend, b.name+"#const")
		}
		if err := constSeg.add(n); err != nil {
			return nil, err
		}
	}

	for _, n := range b.nodes {
		if live[n.id] && !isConst[n.id] {
			if p := planElementwise(n); p != nil {
				n.kind, n.elem = kindElem, p
			} else if p := planGather(n); p != nil {
				n.kind, n.gather = kindGather, p
			}
		}
	}

	var steps []step
	var cur *segment
	for _, n := range b.nodes {
		if !live[n.id] || isConst[n.id] {
			continue
		}
		switch n.kind {
		case kindParam:
			continue
		case kindDot, kindAttn, kindElem, kindRow, kindGather:
			switch n.kind {
			case kindDot:
				b.backend.nativeProducts.Add(1)
				if n.dot.rhsBF16 {
					b.backend.bf16Operands.Add(1)
				}
				// A product whose right operand is a parameter of the
				// graph (a weight: GoMLX passes variables as parameters)
				// runs in bfloat16 when the backend was configured so.
				n.dot.weight = n.inputs[1].kind == kindParam
				if n.dot.weight && b.backend.gemm.bf16 {
					b.backend.bf16Products.Add(1)
				}
			case kindAttn:
				b.backend.fusedAttention.Add(1)
			case kindElem:
				b.backend.nativeElemwise.Add(1)
			case kindRow:
				b.backend.fusedRowOps.Add(1)
			case kindGather:
				b.backend.nativeGathers.Add(1)
			}
			for _, in := range n.inputs {
				export(in)
			}
			steps = append(steps, step{native: n})
			cur = nil
			continue
		}
		if cur == nil {
			cur = newSegment(b.backend, fmt.Sprintf("%s#%d", b.name, len(steps)))
			steps = append(steps, step{seg: cur})
		}
		if err := cur.add(n); err != nil {
			return nil, err
		}
	}
	for _, n := range outs {
		export(n)
	}
	var consts []constValue
	if constSeg != nil && len(constSeg.exports) > 0 {
		ops := make([]backends.Op, len(constSeg.exports))
		for i, n := range constSeg.exports {
			ops[i] = n.op
		}
		exe, err := constSeg.sb.Compile(ops, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: compile constants: %w", ErrBuild, err)
		}
		bufs, err := exe.Execute(nil, nil, 0)
		exe.Finalize()
		if err != nil {
			return nil, fmt.Errorf("%w: evaluate constants: %w", ErrBuild, err)
		}
		for i, n := range constSeg.exports {
			consts = append(consts, constValue{n, bufs[i]})
		}
	}
	var kept []step
	for _, st := range steps {
		if st.seg == nil {
			kept = append(kept, st)
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
		kept = append(kept, st)
	}
	for _, c := range consts {
		b.backend.constantBytes.Add(int64(c.n.shape.Memory()))
	}
	return newExecutable(b, kept, outs, consts), nil
}

// dedupeConstants merges repeated parameter-free ops (the same op, arguments
// and inputs, e.g. each layer's Reshape of one causal mask or rotary table):
// consumers are pointed at the first, so constant folding evaluates and keeps
// one buffer instead of one per layer (28 × 64 MB for an 8192-token mask in
// a 28-layer model). Literal Constants and graph outputs are left alone.
func dedupeConstants(nodes []*node, outs []*node) {
	isOut := map[*node]bool{}
	for _, n := range outs {
		isOut[n] = true
	}
	constish := make([]bool, len(nodes))
	canon := map[*node]*node{}
	first := map[string]*node{}
	var key strings.Builder
	for _, n := range nodes {
		for i, in := range n.inputs {
			if c, ok := canon[in]; ok {
				n.inputs[i] = c
				in.uses--
				c.uses++
			}
		}
		if n.kind != kindSeg {
			continue
		}
		c := true
		for _, in := range n.inputs {
			c = c && constish[in.id]
		}
		constish[n.id] = c
		if !c || n.name == "Constant" || isOut[n] || (n.args == nil && len(n.inputs) > 1) {
			continue // (an op with several inputs and no recorded arguments may hide some)
		}
		key.Reset()
		fmt.Fprintf(&key, "%s|%s|%v|", n.name, n.shape, n.args)
		for _, in := range n.inputs {
			fmt.Fprintf(&key, "%d,", in.id)
		}
		k := key.String()
		if f, ok := first[k]; ok {
			canon[n] = f
			continue
		}
		first[k] = n
	}
}

// constValue is a folded constant: a node and its cached buffer.
type constValue struct {
	n   *node
	buf backends.Buffer
}

func newSegment(b *Backend, name string) *segment {
	return &segment{
		sb:       b.Backend.Builder(name),
		importOp: map[*node]backends.Op{},
		paramOf:  map[backends.Op]*node{},
		exported: map[*node]bool{},
	}
}

// add builds n in segment s (importing its inputs as needed).
func (s *segment) add(n *node) error {
	local := make([]backends.Op, len(n.inputs))
	for i, in := range n.inputs {
		op, err := s.local(in)
		if err != nil {
			return err
		}
		local[i] = op
	}
	op, err := n.build(s.sb, local)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBuild, n.name, err)
	}
	n.seg, n.op = s, op
	return nil
}

// export marks n as read after its segment (by a later segment, a native
// step or the graph outputs).
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
