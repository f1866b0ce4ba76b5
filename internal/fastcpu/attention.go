package fastcpu

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// attnRows is the number of query rows one fused-attention block handles.
const attnRows = 96

// attnPlan is a fused attention found by fuseAttention: the ops
//
//	X = Where(mask, Transpose(DotGeneral(Q, K)) * scale, fill)
//	P = Softmax(X, last axis)            (ReduceMax, Sub, Exp, ReduceSum, Div)
//	O = DotGeneral(P, V)                 (contracting P's last axis)
//
// are computed block by block of rows without materialising X or P; where
// fill is -Inf, key columns after a row's last unmasked one are skipped
// (half of the work under a causal mask).
type attnPlan struct {
	scores, pv *dotPlan
	scale      float32
	fill       float32
	negInfFill bool
	keys       int // S: last axis of X
	// Per row of X (flattened leading axes): Q·K batch and row, and the
	// offset of the row's mask in the mask operand (whose last axis is
	// contiguous or broadcast).
	rowB, rowM []int32
	rowMask    []int32 // index into maskRows
	qRows      []int   // per Q·K row (batch·m + m): its query's offset in Q as given; nil: Q is viewed
	maskRows   []int   // distinct mask row offsets
	maskStep   int     // stride of the mask along the key axis (0: broadcast)
	blocks     []attnBlock
	gemm       *Gemm     // single-threaded; blocks run in parallel
	scratch    sync.Pool // *attnScratch
	// The summary of a mask that is a folded constant, made on first use.
	constMask    sync.Once
	constSummary *maskSummary
}

type attnBlock struct{ r0, r1 int }

// scalarConst returns the value of a float32 rank-0 Constant node.
func scalarConst(n *node) (float32, bool) {
	if n.kind != kindSeg || n.name != "Constant" || n.shape.Rank() != 0 || n.shape.DType != dtypes.Float32 || len(n.args) < 1 {
		return 0, false
	}
	v, ok := n.args[0].([]float32)
	if !ok || len(v) != 1 {
		return 0, false
	}
	return v[0], true
}

func isOp(n *node, name string, inputs, uses int) bool {
	return n.kind == kindSeg && n.name == name && len(n.inputs) == inputs && (uses < 0 || n.uses == uses)
}

// lastAxisReduce reports whether n reduces x over its last axis only.
func lastAxisReduce(n *node, name string, x *node) bool {
	if !isOp(n, name, 1, 1) || n.inputs[0] != x || len(n.args) != 1 {
		return false
	}
	axes, ok := n.args[0].([]int)
	return ok && len(axes) == 1 && (axes[0] == x.shape.Rank()-1 || axes[0] == -1)
}

// fuseAttention rewrites every matching pattern in place: the final
// DotGeneral node becomes a kindAttn node reading Q, K, the mask and V; the
// ops in between become unused.
func fuseAttention(nodes []*node, g *Gemm) {
	workers := g.workers
	for _, out := range nodes {
		if plan, ins := matchAttention(out); plan != nil {
			plan.gemm = g.serial()
			plan.blocks = attnBlocks(plan, workers)
			for _, in := range out.inputs {
				in.uses--
			}
			out.kind, out.name, out.attn, out.inputs = kindAttn, "Attention", plan, ins
			for _, in := range ins {
				in.uses++
			}
		}
	}
}

func matchAttention(out *node) (*attnPlan, []*node) {
	if out.kind != kindDot {
		return nil, nil
	}
	p, v := out.inputs[0], out.inputs[1]
	rank := p.shape.Rank()
	pv := out.dot
	if rank < 2 || p.shape.DType != dtypes.Float32 || pv.lhs.perm != nil || pv.lhs.view.ColStride != 1 ||
		pv.k != p.shape.Dimensions[rank-1] || pv.batch*pv.m*pv.k != p.shape.Size() {
		return nil, nil
	}
	// Softmax: P = Div(E, Reshape(ReduceSum(E))), E = Exp(Sub(X, [Identity](Reshape(ReduceMax(X))))).
	if !isOp(p, "Div", 2, 1) {
		return nil, nil
	}
	e, r1 := p.inputs[0], p.inputs[1]
	if !isOp(e, "Exp", 1, 2) || !isOp(r1, "Reshape", 1, 1) || !lastAxisReduce(r1.inputs[0], "ReduceSum", e) {
		return nil, nil
	}
	d := e.inputs[0]
	if !isOp(d, "Sub", 2, 1) {
		return nil, nil
	}
	x, r2 := d.inputs[0], d.inputs[1]
	if isOp(r2, "Identity", 1, 1) {
		r2 = r2.inputs[0]
	}
	if !isOp(r2, "Reshape", 1, 1) || !lastAxisReduce(r2.inputs[0], "ReduceMax", x) {
		return nil, nil
	}
	// X = Where(mask, Y, fill), Y = T*scale, T = [Transpose](DotGeneral(Q, K)).
	if !isOp(x, "Where", 3, 2) || !x.shape.Equal(p.shape) {
		return nil, nil
	}
	mask, y, fillN := x.inputs[0], x.inputs[1], x.inputs[2]
	fill, ok := scalarConst(fillN)
	if !ok {
		return nil, nil
	}
	plan := &attnPlan{pv: pv, fill: fill, negInfFill: math.IsInf(float64(fill), -1), scale: 1, keys: p.shape.Dimensions[rank-1]}
	t := y
	if isOp(y, "Mul", 2, 1) {
		if c, ok := scalarConst(y.inputs[1]); ok {
			plan.scale, t = c, y.inputs[0]
		} else if c, ok := scalarConst(y.inputs[0]); ok {
			plan.scale, t = c, y.inputs[1]
		}
	}
	perm := make([]int, rank)
	for i := range perm {
		perm[i] = i
	}
	sd := t
	if isOp(t, "Transpose", 1, 1) && len(t.args) == 1 {
		tp, ok := t.args[0].([]int)
		if !ok || len(tp) != rank || tp[rank-1] != rank-1 {
			return nil, nil
		}
		perm, sd = tp, t.inputs[0]
	}
	if sd.kind != kindDot || sd.uses != 1 || sd.shape.Rank() != rank {
		return nil, nil
	}
	sp := sd.dot
	sdDims := sd.shape.Dimensions
	if sp.n != sdDims[rank-1] || sp.n != plan.keys {
		return nil, nil // keys must be the single rhs free axis
	}
	// Leading Q·K output axes: batch axes, then lhs free axes (product sp.m).
	nb := 0
	for size := 1; nb < rank-1 && size < sp.batch; nb++ {
		size *= sdDims[nb]
	}
	if prod(sdDims[:nb]) != sp.batch || prod(sdDims[nb:rank-1]) != sp.m {
		return nil, nil
	}
	// Mask: bool, X-shaped or broadcast (BroadcastInDim with identity axes) from size-1 axes.
	maskSrc, maskStrides := mask, []int(nil)
	if mask.shape.DType != dtypes.Bool {
		return nil, nil
	}
	if isOp(mask, "BroadcastInDim", 1, -1) && len(mask.args) == 2 { // any uses: the attention reads its source
		axes, ok := mask.args[1].([]int)
		src := mask.inputs[0]
		if !ok || len(axes) != rank || src.shape.Rank() != rank {
			return nil, nil
		}
		for i, a := range axes {
			if a != i {
				return nil, nil
			}
		}
		maskSrc = src
	}
	md := maskSrc.shape.Dimensions
	maskStrides = make([]int, rank)
	stride := 1
	for i := rank - 1; i >= 0; i-- {
		switch md[i] {
		case x.shape.Dimensions[i]:
			maskStrides[i] = stride
		case 1:
			maskStrides[i] = 0
		default:
			return nil, nil
		}
		stride *= md[i]
	}
	plan.scores = sp
	if sp.lhs.perm != nil {
		// Each block gathers its query rows anyway: it reads them where
		// they are instead of after a transposed copy of all of Q.
		plan.qRows = rowOffsets(sp.lhs.dims, sp.lhs.perm)
	}
	plan.maskStep = maskStrides[rank-1]
	// Row tables.
	xd := x.shape.Dimensions
	rows := prod(xd[:rank-1])
	plan.rowB, plan.rowM, plan.rowMask = make([]int32, rows), make([]int32, rows), make([]int32, rows)
	maskIDs := map[int]int32{}
	idx := make([]int, rank-1)
	sdIdx := make([]int, rank-1)
	for r := 0; r < rows; r++ {
		mo := 0
		for i := 0; i < rank-1; i++ {
			sdIdx[perm[i]] = idx[i]
			mo += idx[i] * maskStrides[i]
		}
		b, m := 0, 0
		for i := 0; i < nb; i++ {
			b = b*sdDims[i] + sdIdx[i]
		}
		for i := nb; i < rank-1; i++ {
			m = m*sdDims[i] + sdIdx[i]
		}
		id, ok := maskIDs[mo]
		if !ok {
			id = int32(len(plan.maskRows))
			maskIDs[mo] = id
			plan.maskRows = append(plan.maskRows, mo)
		}
		plan.rowB[r], plan.rowM[r], plan.rowMask[r] = int32(b), int32(m), id
		for i := rank - 2; i >= 0; i-- {
			idx[i]++
			if idx[i] < xd[i] {
				break
			}
			idx[i] = 0
		}
	}
	return plan, []*node{sd.inputs[0], sd.inputs[1], maskSrc, v}
}

func prod(dims []int) int {
	p := 1
	for _, d := range dims {
		p *= d
	}
	return p
}

// attnBlocks cuts the rows into blocks of at most attnRows rows sharing
// their Q·K batch and their P·V batch.
func attnBlocks(p *attnPlan, workers int) []attnBlock {
	rows := len(p.rowB)
	size := attnRows
	if rows < size*workers && workers > 1 {
		size = max(mr, roundUp((rows+workers-1)/workers, mr))
	}
	var blocks []attnBlock
	r0 := 0
	for r := 1; r <= rows; r++ {
		if r == rows || r-r0 == size || p.rowB[r] != p.rowB[r0] || r/p.pv.m != r0/p.pv.m {
			blocks = append(blocks, attnBlock{r0, r})
			r0 = r
		}
	}
	return blocks
}

// attnScratch is one worker's memory.
type attnScratch struct {
	q, s []float32
	lim  []int
	inv  []float32 // per row: the softmax normaliser applied after P·V
}

func (r *run) attention(n *node) error {
	p := n.attn
	var data [4][]float32
	for i, in := range n.inputs {
		if i == 2 {
			continue
		}
		f, err := r.float32s(in)
		if err != nil {
			return err
		}
		data[i] = f
	}
	flat, err := r.e.backend.BufferData(r.vals[n.inputs[2].id])
	if err != nil {
		return fmt.Errorf("%w: attention mask: %w", ErrBuild, err)
	}
	mask, ok := flat.([]bool)
	if !ok {
		return fmt.Errorf("%w: attention mask is %T, not []bool", ErrBuild, flat)
	}
	out, oflat, err := r.e.backend.NewSharedBuffer(0, n.shape)
	if err != nil {
		return fmt.Errorf("%w: attention output: %w", ErrBuild, err)
	}
	c := oflat.([]float32)
	// Operand views (transposed copies where the layout needs one).
	var bufs []*[]float32
	view := func(op operandPlan, src []float32) Strided {
		v := op.view
		if op.perm == nil {
			v.Data = src
			return v
		}
		buf := r.e.scratch.Get().(*[]float32)
		if cap(*buf) < len(src) {
			*buf = make([]float32, len(src))
		}
		*buf = (*buf)[:len(src)]
		transposeParallel(r.e.backend.gemm.team, *buf, src, op.dims, op.perm, r.e.backend.gemm.workers)
		bufs = append(bufs, buf)
		v.Data = *buf
		return v
	}
	q := Strided{Data: data[0]} // read through p.qRows
	if p.qRows == nil {
		q = view(p.scores.lhs, data[0])
	}
	k := view(p.scores.rhs, data[1])
	v := view(p.pv.rhs, data[3])

	// A folded constant mask (the causal mask) is summarised once.
	var ms *maskSummary
	if r.e.isConst[n.inputs[2].id] {
		p.constMask.Do(func() { p.constSummary = p.summarize(mask) })
		ms = p.constSummary
	} else {
		ms = p.summarize(mask)
	}

	var next atomic.Int64
	work := func() {
		sc, ok := p.scratch.Get().(*attnScratch)
		if !ok {
			sc = &attnScratch{
				q:   make([]float32, attnRows*p.scores.k),
				s:   make([]float32, attnRows*p.keys),
				lim: make([]int, attnRows),
				inv: make([]float32, attnRows),
			}
		}
		defer p.scratch.Put(sc)
		for {
			i := int(next.Add(1)) - 1
			if i >= len(p.blocks) {
				return
			}
			p.block(p.blocks[ms.order[i]], sc, q, k, v, ms, c)
		}
	}
	r.e.backend.gemm.team.run(min(r.e.backend.gemm.workers, len(p.blocks)), work)
	for _, buf := range bufs {
		r.e.scratch.Put(buf)
	}
	r.done(n, out)
	return nil
}

// maskSummary is the mask and its per-row summaries for one execution.
type maskSummary struct {
	mask   []bool
	lims   []int32
	prefix []bool
	order  []int // blocks, costliest first
}

// summarize returns, for each distinct mask row, its last unmasked key + 1
// and whether the row is a prefix (all keys before that unmasked); and the
// blocks in decreasing order of their work (rows × keys read). Handing the
// costliest blocks out first keeps the workers' finishing times close: in
// causal attention the last rows cost the most, and taken last they left
// one core idle for up to a block's time.
func (p *attnPlan) summarize(mask []bool) *maskSummary {
	lims := make([]int32, len(p.maskRows))
	prefix := make([]bool, len(p.maskRows))
	for id, mo := range p.maskRows {
		l := p.keys
		for l > 0 && !mask[mo+(l-1)*p.maskStep] {
			l--
		}
		pre := true
		for j := 0; j < l && pre; j++ {
			pre = mask[mo+j*p.maskStep]
		}
		lims[id], prefix[id] = int32(l), pre
	}
	cost := make([]int, len(p.blocks))
	order := make([]int, len(p.blocks))
	for i, blk := range p.blocks {
		lim := p.keys
		if p.negInfFill {
			lim = 0
			for r := blk.r0; r < blk.r1; r++ {
				lim = max(lim, int(lims[p.rowMask[r]]))
			}
		}
		cost[i], order[i] = (blk.r1-blk.r0)*lim, i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cost[b] - cost[a] })
	return &maskSummary{mask: mask, lims: lims, prefix: prefix, order: order}
}

// block computes output rows [blk.r0, blk.r1).
func (p *attnPlan) block(blk attnBlock, sc *attnScratch, q, k, v Strided, ms *maskSummary, c []float32) {
	rows := blk.r1 - blk.r0
	depth := p.scores.k
	keys := p.keys
	// Each row's key limit: past its last unmasked key, -Inf fill gives 0.
	lim := 0
	for i := 0; i < rows; i++ {
		l := keys
		if p.negInfFill {
			l = int(ms.lims[p.rowMask[blk.r0+i]])
		}
		sc.lim[i] = l
		lim = max(lim, l)
	}
	// Gather the query rows, then S = Q·K over the first lim keys.
	b := int(p.rowB[blk.r0])
	for i := 0; i < rows; i++ {
		m := int(p.rowM[blk.r0+i])
		dst := sc.q[i*depth : (i+1)*depth]
		if p.qRows != nil {
			base := p.qRows[b*p.scores.m+m]
			copy(dst, q.Data[base:base+depth])
			continue
		}
		base := b*q.BatchStride + m*q.RowStride
		if q.ColStride == 1 {
			copy(dst, q.Data[base:base+depth])
		} else {
			for j := range dst {
				dst[j] = q.Data[base+j*q.ColStride]
			}
		}
	}
	s := sc.s[:rows*lim]
	if lim > 0 {
		kb := k
		kb.Data = k.Data[b*k.BatchStride:]
		p.gemm.MatMul(1, rows, lim, depth, Strided{Data: sc.q, RowStride: depth, ColStride: 1}, kb, s)
	}
	// Masked, scaled softmax of each row.
	simd, wide := p.gemm.SIMD(), p.gemm.level >= isaAVX512
	expSubSum := func(x []float32, mx, scale float32) float32 {
		if simd {
			return expSubSumSIMD(x, mx, scale, wide)
		}
		return expSubSumGo(x, mx, scale)
	}
	for i := 0; i < rows; i++ {
		row := s[i*lim : (i+1)*lim]
		id := p.rowMask[blk.r0+i]
		sc.inv[i] = 1
		if p.negInfFill && ms.prefix[id] {
			// Unmasked prefix: keys [0,l) count, the rest are exp(-Inf) = 0.
			l := sc.lim[i]
			if l == 0 {
				continue // all masked: NaN, written after P·V
			}
			live := row[:l]
			var sum float32
			if p.scale > 0 {
				// One read for the maximum, one pass for exp(x·scale -
				// max·scale); the row is normalised after P·V, on dOut
				// values instead of l.
				var mx float32
				if simd {
					mx = maxSIMD(live, wide)
				} else {
					mx = maxGo(live)
				}
				// Masked keys up to a multiple of 16 (within the row)
				// join as -Inf, whose exp is at most 1.2e-38, so the
				// vector loops cover the row instead of a scalar tail.
				pad := min(roundUp(l, 16), lim)
				for j := l; j < pad; j++ {
					row[j] = negInf
				}
				sum = expSubSum(row[:pad], mx*p.scale, p.scale)
			} else {
				var mx float32
				if simd {
					mx = scaleMaxSIMD(live, p.scale)
				} else {
					mx = scaleMaxGo(live, p.scale)
				}
				sum = expSubSum(live, mx, 1)
			}
			sc.inv[i] = 1 / sum
			clear(row[l:])
			continue
		}
		mo := p.maskRows[id]
		mx := negInf
		if lim < keys {
			mx = p.fill // keys past lim are masked
		}
		for j := range row {
			x := row[j] * p.scale
			if !ms.mask[mo+j*p.maskStep] {
				x = p.fill
			}
			row[j] = x
			mx = max(mx, x)
		}
		if math.IsInf(float64(mx), -1) || math.IsNaN(float64(mx)) {
			sc.lim[i] = 0 // NaN row, as softmax of all -Inf
			continue
		}
		sum := expSubSum(row, mx, 1)
		if lim < keys && !p.negInfFill {
			sum += float32(keys-lim) * float32(math.Exp(float64(p.fill-mx)))
		}
		if simd {
			mulSIMD(row, 1/sum)
		} else {
			mulGo(row, 1/sum)
		}
	}
	// O = P·V over the first lim keys, written straight into the output rows.
	dOut := p.pv.n
	o := c[blk.r0*dOut : blk.r1*dOut]
	if lim == 0 {
		for i := range o {
			o[i] = float32(math.NaN()) // every key masked with -Inf: softmax is NaN
		}
		return
	}
	b2 := blk.r0 / p.pv.m
	vb := v
	vb.Data = v.Data[b2*v.BatchStride:]
	p.gemm.MatMul(1, rows, dOut, lim, Strided{Data: s, RowStride: lim, ColStride: 1}, vb, o)
	for i := 0; i < rows; i++ {
		out := o[i*dOut : (i+1)*dOut]
		switch {
		case sc.lim[i] == 0:
			for j := range out {
				out[j] = float32(math.NaN())
			}
		case sc.inv[i] != 1:
			if simd {
				mulSIMD(out, sc.inv[i])
			} else {
				mulGo(out, sc.inv[i])
			}
		}
	}
}
