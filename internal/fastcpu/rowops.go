package fastcpu

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// rowPlan is a chain of float32 row-wise ops found by fuseRowOps and run as
// one native pass over the rows (the last axis) of its first input:
//
//	RMSNorm: Mul(Mul(x, Rsqrt(Reshape(Mul(ReduceSum(Mul(x,x), last), c)) + eps)), Reshape(w))
//	Rotary:  Add(Mul(x, cos), Mul(Concatenate(Neg(Slice(x, hi)), Slice(x, lo)), sin))
//	SwiGLU:  Mul(Mul(g, Logistic(g)), up)
//	RMSNormRotary: Rotary of an RMSNorm read by nothing else
//
// Each is the graph that backbone (and HF's Qwen3) writes; unfused, every
// step is a pass over memory and the slices and concatenation run on
// simplego. The fused kernels round each step to float32 in the order the
// graph does, so Rotary gives the graph's bits exactly, and so does RMSNorm
// with the pure Go kernels (the AVX2 sum of squares adds in eight lanes);
// SwiGLU uses the native logistic of elementwise.go.
type rowPlan struct {
	op    string
	width int   // length of a row (the last axis)
	dims  []int // dimensions of the output (and of x)
	// RMSNorm: mean scale (1/width as the graph's constant) and epsilon.
	scale, eps float32
	// Rotary: strides of the cos/sin tables over the output axes (0 where a
	// table axis is broadcast); tables have the output's rank.
	tstrides []int
}

// fuseRowOps rewrites every matching chain in place: the chain's last node
// becomes a kindRow node reading the chain's inputs; the nodes in between
// become unused.
func fuseRowOps(nodes []*node) {
	for _, out := range nodes {
		var plan *rowPlan
		var ins []*node
		if plan, ins = matchRMSNorm(out); plan == nil {
			if plan, ins = matchRotary(out); plan == nil {
				plan, ins = matchSwiGLU(out)
			}
		}
		if plan == nil {
			continue
		}
		for _, in := range out.inputs {
			in.uses--
		}
		out.kind, out.name, out.row, out.inputs = kindRow, plan.op, plan, ins
		for _, in := range ins {
			in.uses++
		}
	}
}

// fuseNormRotary merges a Rotary row op whose input is an RMSNorm row op
// read by no other live node (Qwen3's query and key norms) into one pass
// that keeps the normalised row aside. live is updated: the RMSNorm is no
// longer computed.
func fuseNormRotary(nodes []*node, live []bool) {
	readers := make([]int, len(nodes))
	for _, n := range nodes {
		if live[n.id] {
			for _, in := range n.inputs {
				readers[in.id]++
			}
		}
	}
	for _, out := range nodes {
		if !live[out.id] || out.kind != kindRow || out.row.op != "Rotary" {
			continue
		}
		norm := out.inputs[0]
		if norm.kind != kindRow || norm.row.op != "RMSNorm" || readers[norm.id] != 1 {
			continue
		}
		plan := *out.row
		plan.op, plan.scale, plan.eps = "RMSNormRotary", norm.row.scale, norm.row.eps
		out.name, out.row = plan.op, &plan
		out.inputs = append([]*node{norm.inputs[0], norm.inputs[1]}, out.inputs[1:]...)
		norm.uses--
		for _, in := range norm.inputs {
			in.uses++
		}
		live[norm.id] = false
	}
}

func isF32(n *node) bool { return n.shape.DType == dtypes.Float32 }

// operands returns the two inputs of a binary node, first the one for which
// pick is true; ok is false when neither is.
func operands(n *node, pick func(*node) bool) (a, b *node, ok bool) {
	switch {
	case pick(n.inputs[0]):
		return n.inputs[0], n.inputs[1], true
	case pick(n.inputs[1]):
		return n.inputs[1], n.inputs[0], true
	}
	return nil, nil, false
}

// rowShaped reports whether r has x's dimensions with the last one 1
// (a per-row value kept for broadcasting).
func rowShaped(r, x *node) bool {
	rank := x.shape.Rank()
	if r.shape.Rank() != rank || r.shape.Dimensions[rank-1] != 1 {
		return false
	}
	for a := 0; a < rank-1; a++ {
		if r.shape.Dimensions[a] != x.shape.Dimensions[a] {
			return false
		}
	}
	return true
}

func matchRMSNorm(out *node) (*rowPlan, []*node) {
	if !isOp(out, "Mul", 2, -1) || !isF32(out) || out.shape.Rank() < 1 {
		return nil, nil
	}
	rank := out.shape.Rank()
	width := out.shape.Dimensions[rank-1]
	// wr = Reshape(w) to [1,...,1,width]; n1 = Mul(x, rs).
	isGain := func(n *node) bool {
		if !isOp(n, "Reshape", 1, -1) || n.shape.Rank() != rank || n.inputs[0].shape.Size() != width || !isF32(n) {
			return false
		}
		for a := 0; a < rank-1; a++ {
			if n.shape.Dimensions[a] != 1 {
				return false
			}
		}
		return n.shape.Dimensions[rank-1] == width
	}
	wr, n1, ok := operands(out, isGain)
	if !ok || !isOp(n1, "Mul", 2, 1) {
		return nil, nil
	}
	rs, x, ok := operands(n1, func(n *node) bool { return isOp(n, "Rsqrt", 1, 1) })
	if !ok || !isF32(x) || !x.shape.Equal(out.shape) || !rowShaped(rs, x) {
		return nil, nil
	}
	add := rs.inputs[0]
	if !isOp(add, "Add", 2, 1) {
		return nil, nil
	}
	var eps float32
	r, epsN, ok := operands(add, func(n *node) bool { return isOp(n, "Reshape", 1, 1) })
	if !ok {
		return nil, nil
	}
	if eps, ok = scalarConst(epsN); !ok || !rowShaped(r, x) {
		return nil, nil
	}
	mean := r.inputs[0]
	if !isOp(mean, "Mul", 2, 1) {
		return nil, nil
	}
	sum, cN, ok := operands(mean, func(n *node) bool { return isOp(n, "ReduceSum", 1, 1) })
	if !ok {
		return nil, nil
	}
	scale, ok := scalarConst(cN)
	if !ok {
		return nil, nil
	}
	sq := sum.inputs[0]
	if !lastAxisReduce(sum, "ReduceSum", sq) || !isOp(sq, "Mul", 2, 1) || sq.inputs[0] != x || sq.inputs[1] != x {
		return nil, nil
	}
	return &rowPlan{op: "RMSNorm", width: width, dims: x.shape.Dimensions, scale: scale, eps: eps},
		[]*node{x, wr.inputs[0]}
}

// sliceOf reports whether s is Slice(x) taking [lo, hi) of x's last axis
// with unit strides and everything of the other axes.
func sliceOf(s, x *node, lo, hi int) bool {
	if !isOp(s, "Slice", 1, 1) || s.inputs[0] != x || len(s.args) != 3 {
		return false
	}
	starts, ok1 := s.args[0].([]int)
	limits, ok2 := s.args[1].([]int)
	strides, ok3 := s.args[2].([]int)
	rank := x.shape.Rank()
	if !ok1 || !ok2 || !ok3 || len(starts) != rank || len(limits) != rank || (len(strides) != rank && len(strides) != 0) {
		return false
	}
	for a := 0; a < rank; a++ {
		from, to := 0, x.shape.Dimensions[a]
		if a == rank-1 {
			from, to = lo, hi
		}
		if starts[a] != from || limits[a] != to || (len(strides) > 0 && strides[a] != 1) {
			return false
		}
	}
	return true
}

func matchRotary(out *node) (*rowPlan, []*node) {
	if !isOp(out, "Add", 2, -1) || !isF32(out) || out.shape.Rank() < 1 {
		return nil, nil
	}
	rank := out.shape.Rank()
	d := out.shape.Dimensions[rank-1]
	if d%2 != 0 {
		return nil, nil
	}
	h := d / 2
	isRot := func(n *node) bool {
		return isOp(n, "Concatenate", 2, 1) && len(n.args) == 1 && (n.args[0] == any(rank-1) || n.args[0] == any(-1))
	}
	hasRot := func(n *node) bool {
		if !isOp(n, "Mul", 2, 1) {
			return false
		}
		_, _, ok := operands(n, isRot)
		return ok
	}
	mRot, mX, ok := operands(out, hasRot)
	if !ok || !isOp(mX, "Mul", 2, 1) {
		return nil, nil
	}
	rot, sin, _ := operands(mRot, isRot)
	neg, lo := rot.inputs[0], rot.inputs[1]
	if !isOp(neg, "Neg", 1, 1) {
		return nil, nil
	}
	hi := neg.inputs[0]
	if !isOp(lo, "Slice", 1, 1) {
		return nil, nil
	}
	x := lo.inputs[0]
	if !x.shape.Equal(out.shape) || !sliceOf(lo, x, 0, h) || !sliceOf(hi, x, h, d) {
		return nil, nil
	}
	_, cos, ok := operands(mX, func(n *node) bool { return n == x })
	if !ok {
		return nil, nil
	}
	tstrides, ok := tableStrides(cos, out)
	if !ok || !sin.shape.Equal(cos.shape) {
		return nil, nil
	}
	return &rowPlan{op: "Rotary", width: d, dims: out.shape.Dimensions, tstrides: tstrides}, []*node{x, cos, sin}
}

// tableStrides returns the strides of t over out's axes when t broadcasts to
// out with a full last axis.
func tableStrides(t, out *node) ([]int, bool) {
	rank := out.shape.Rank()
	if !isF32(t) || t.shape.Rank() != rank || t.shape.Dimensions[rank-1] != out.shape.Dimensions[rank-1] {
		return nil, false
	}
	st := make([]int, rank)
	stride := 1
	for a := rank - 1; a >= 0; a-- {
		switch t.shape.Dimensions[a] {
		case out.shape.Dimensions[a]:
			st[a] = stride
		case 1:
		default:
			return nil, false
		}
		stride *= t.shape.Dimensions[a]
	}
	return st, true
}

func matchSwiGLU(out *node) (*rowPlan, []*node) {
	if !isOp(out, "Mul", 2, -1) || !isF32(out) || out.shape.Rank() < 1 {
		return nil, nil
	}
	isGated := func(n *node) bool {
		if !isOp(n, "Mul", 2, 1) {
			return false
		}
		lg, g, ok := operands(n, func(m *node) bool { return isOp(m, "Logistic", 1, 1) })
		return ok && lg.inputs[0] == g
	}
	gm, up, ok := operands(out, isGated)
	if !ok || !up.shape.Equal(out.shape) {
		return nil, nil
	}
	_, g, _ := operands(gm, func(m *node) bool { return isOp(m, "Logistic", 1, 1) })
	if !g.shape.Equal(out.shape) || !isF32(g) || !isF32(up) {
		return nil, nil
	}
	rank := out.shape.Rank()
	return &rowPlan{op: "SwiGLU", width: out.shape.Dimensions[rank-1], dims: out.shape.Dimensions}, []*node{g, up}
}

// rowOp runs a kindRow node: rows are split over the workers.
func (r *run) rowOp(n *node) error {
	p := n.row
	ins, out, dst, err := r.rowIO(n)
	if err != nil {
		return err
	}
	rows := len(dst) / max(1, p.width)
	simd := r.e.backend.gemm.SIMD()
	splitRows(r.e.backend.gemm.team, rows, len(dst), r.e.backend.gemm.workers, func(r0, r1 int) {
		p.rows(r0, r1, dst, ins, simd)
	})
	r.done(n, out)
	return nil
}

// rows computes output rows [r0, r1).
func (p *rowPlan) rows(r0, r1 int, dst []float32, ins [][]float32, simd bool) {
	w := p.width
	switch p.op {
	case "RMSNorm":
		x, gain := ins[0], ins[1][:w]
		for r := r0; r < r1; r++ {
			p.rmsNorm(dst[r*w:(r+1)*w], x[r*w:(r+1)*w], gain, simd)
		}
	case "Rotary", "RMSNormRotary":
		x, cos, sin := ins[0], ins[1], ins[2]
		var normed, gain []float32
		if p.op == "RMSNormRotary" {
			gain, cos, sin = ins[1][:w], ins[2], ins[3]
			normed = make([]float32, w)
		}
		h := w / 2
		rank := len(p.dims)
		for r := r0; r < r1; r++ {
			// Offset of row r in the tables.
			t, rem := 0, r
			for a := rank - 2; a >= 0; a-- {
				t += (rem % p.dims[a]) * p.tstrides[a]
				rem /= p.dims[a]
			}
			xr, out := x[r*w:(r+1)*w], dst[r*w:(r+1)*w]
			if normed != nil {
				p.rmsNorm(normed, xr, gain, simd)
				xr = normed
			}
			c, s := cos[t:t+w], sin[t:t+w]
			if simd && rotarySIMD(out, xr, c, s) == w {
				continue
			}
			for j := 0; j < h; j++ {
				out[j] = float32(xr[j]*c[j]) + float32(-xr[j+h]*s[j])
			}
			for j := h; j < w; j++ {
				out[j] = float32(xr[j]*c[j]) + float32(xr[j-h]*s[j])
			}
		}
	case "SwiGLU":
		g, up := ins[0], ins[1]
		for r := r0; r < r1; r++ {
			gr, ur, out := g[r*w:(r+1)*w], up[r*w:(r+1)*w], dst[r*w:(r+1)*w]
			if simd {
				logisticSIMD(out, gr)
			} else {
				logistic(out, gr)
			}
			done := 0
			if simd {
				done = gluSIMD(out, gr, ur)
			}
			for j := done; j < w; j++ {
				out[j] = float32(gr[j]*out[j]) * ur[j]
			}
		}
	}
}

// rmsNorm writes the RMS-normalised row x, times gain, into out.
func (p *rowPlan) rmsNorm(out, x, gain []float32, simd bool) {
	var sum float32
	done := 0
	if simd {
		sum, done = sumSquaresSIMD(x)
	}
	for _, v := range x[done:] {
		sum += float32(v * v)
	}
	rs := float32(1 / math.Sqrt(float64(float32(sum*p.scale)+p.eps)))
	done = 0
	if simd {
		done = scaleGainSIMD(out, x, gain, rs)
	}
	for j := done; j < len(x); j++ {
		out[j] = float32(x[j]*rs) * gain[j]
	}
}
