package fastcpu

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// operandPlan says how to view one DotGeneral operand as a batch of
// matrices: directly with strides, or after a transposing copy (perm non-nil).
type operandPlan struct {
	dims []int // operand dimensions
	perm []int // transposition to the canonical layout; nil when viewed in place
	view Strided
}

// dotPlan is a DotGeneral lowered to Gemm.MatMul(batch, m, n, k, ...).
type dotPlan struct {
	batch, m, n, k int
	lhs, rhs       operandPlan
	rhsBF16        bool // rhs is read as bfloat16 (see fuseBF16Operands)
	weight         bool // rhs is a graph parameter: bfloat16 products with the "bf16" configuration
}

// fuseBF16Operands lets products read bfloat16 weights as they are stored:
// a DotGeneral whose rhs is ConvertDType(bfloat16 → float32) of a value
// viewed in place reads the bfloat16 value instead, and Gemm widens it while
// packing (exactly, as the conversion does). No float32 copy of the weight
// is kept: packing widens it into the product's pooled buffers (at most
// maxSharedB values, or per-task blocks).
func fuseBF16Operands(nodes []*node) {
	for _, n := range nodes {
		if n.kind != kindDot || n.dot.rhsBF16 || n.dot.rhs.perm != nil {
			continue
		}
		c := n.inputs[1]
		if c.kind != kindSeg || c.name != "ConvertDType" || len(c.inputs) != 1 ||
			c.shape.DType != dtypes.Float32 || c.inputs[0].shape.DType != dtypes.BFloat16 {
			continue
		}
		c.uses--
		n.inputs[1] = c.inputs[0]
		n.inputs[1].uses++
		n.dot.rhsBF16 = true
	}
}

// planDot validates a DotGeneral and lowers it. The output shape follows
// XLA: batch axes (lhs order), lhs free axes, rhs free axes.
func planDot(lhs shapes.Shape, lhsC, lhsB []int, rhs shapes.Shape, rhsC, rhsB []int) (*dotPlan, shapes.Shape, error) {
	norm := func(axes []int, rank int, what string) ([]int, error) {
		out := make([]int, len(axes))
		for i, a := range axes {
			if a < 0 {
				a += rank
			}
			if a < 0 || a >= rank {
				return nil, fmt.Errorf("%s axis %d out of range for rank %d", what, axes[i], rank)
			}
			out[i] = a
		}
		return out, nil
	}
	var err error
	if lhsC, err = norm(lhsC, lhs.Rank(), "lhs contracting"); err != nil {
		return nil, shapes.Invalid(), err
	}
	if lhsB, err = norm(lhsB, lhs.Rank(), "lhs batch"); err != nil {
		return nil, shapes.Invalid(), err
	}
	if rhsC, err = norm(rhsC, rhs.Rank(), "rhs contracting"); err != nil {
		return nil, shapes.Invalid(), err
	}
	if rhsB, err = norm(rhsB, rhs.Rank(), "rhs batch"); err != nil {
		return nil, shapes.Invalid(), err
	}
	if len(lhsC) != len(rhsC) || len(lhsB) != len(rhsB) {
		return nil, shapes.Invalid(), fmt.Errorf("axes counts differ: lhs contracting %v batch %v, rhs contracting %v batch %v", lhsC, lhsB, rhsC, rhsB)
	}
	ld, rd := lhs.Dimensions, rhs.Dimensions
	p := &dotPlan{batch: 1, m: 1, n: 1, k: 1}
	var outDims []int
	for i := range lhsB {
		if ld[lhsB[i]] != rd[rhsB[i]] {
			return nil, shapes.Invalid(), fmt.Errorf("batch axes %d of %s and %d of %s differ", lhsB[i], lhs, rhsB[i], rhs)
		}
		p.batch *= ld[lhsB[i]]
		outDims = append(outDims, ld[lhsB[i]])
	}
	for i := range lhsC {
		if ld[lhsC[i]] != rd[rhsC[i]] {
			return nil, shapes.Invalid(), fmt.Errorf("contracting axes %d of %s and %d of %s differ", lhsC[i], lhs, rhsC[i], rhs)
		}
		p.k *= ld[lhsC[i]]
	}
	lhsF, err := freeAxes(lhs.Rank(), lhsC, lhsB)
	if err != nil {
		return nil, shapes.Invalid(), fmt.Errorf("lhs: %w", err)
	}
	rhsF, err := freeAxes(rhs.Rank(), rhsC, rhsB)
	if err != nil {
		return nil, shapes.Invalid(), fmt.Errorf("rhs: %w", err)
	}
	for _, a := range lhsF {
		p.m *= ld[a]
		outDims = append(outDims, ld[a])
	}
	for _, a := range rhsF {
		p.n *= rd[a]
		outDims = append(outDims, rd[a])
	}
	m, n, k := p.m, p.n, p.k
	// lhs as [B,M,K] (or in place as [B,K,M]).
	p.lhs.dims = slices.Clone(ld)
	switch mk, km := slices.Concat(lhsB, lhsF, lhsC), slices.Concat(lhsB, lhsC, lhsF); {
	case isIdentity(mk):
		p.lhs.view = Strided{BatchStride: m * k, RowStride: k, ColStride: 1}
	case isIdentity(km):
		p.lhs.view = Strided{BatchStride: m * k, RowStride: 1, ColStride: m}
	default:
		p.lhs.perm = mk
		p.lhs.view = Strided{BatchStride: m * k, RowStride: k, ColStride: 1}
	}
	// rhs as [B,K,N] (or in place as [B,N,K]).
	p.rhs.dims = slices.Clone(rd)
	switch kn, nk := slices.Concat(rhsB, rhsC, rhsF), slices.Concat(rhsB, rhsF, rhsC); {
	case isIdentity(kn):
		p.rhs.view = Strided{BatchStride: k * n, RowStride: n, ColStride: 1}
	case isIdentity(nk):
		p.rhs.view = Strided{BatchStride: k * n, RowStride: 1, ColStride: k}
	default:
		p.rhs.perm = kn
		p.rhs.view = Strided{BatchStride: k * n, RowStride: n, ColStride: 1}
	}
	return p, shapes.Make(dtypes.Float32, outDims...), nil
}

// freeAxes returns, in increasing order, the axes that are neither
// contracting nor batch; it rejects repeated axes.
func freeAxes(rank int, contracting, batch []int) ([]int, error) {
	used := make([]bool, rank)
	for _, a := range slices.Concat(contracting, batch) {
		if used[a] {
			return nil, fmt.Errorf("axis %d used twice", a)
		}
		used[a] = true
	}
	var free []int
	for a := 0; a < rank; a++ {
		if !used[a] {
			free = append(free, a)
		}
	}
	return free, nil
}

func isIdentity(perm []int) bool {
	for i, p := range perm {
		if i != p {
			return false
		}
	}
	return true
}

// transpose writes into dst the array src (dimensions dims) with its axes
// permuted: dst axis i is src axis perm[i].
func transpose(dst, src []float32, dims, perm []int) {
	transposeRows(dst, src, dims, perm, 0, -1)
}

// transposeParallel is transpose split over up to workers goroutines by
// destination rows (copies of a few MB are memory-bound, but one core does
// not saturate the memory bus).
func transposeParallel(t *team, dst, src []float32, dims, perm []int, workers int) {
	rows := len(dst)
	if len(dims) > 0 && dims[perm[len(perm)-1]] > 0 {
		rows = len(dst) / dims[perm[len(perm)-1]]
	}
	if rows == 0 || len(dst) == 0 {
		transpose(dst, src, dims, perm)
		return
	}
	splitRows(t, rows, len(dst), workers, func(r0, r1 int) {
		transposeRows(dst, src, dims, perm, r0, r1)
	})
}

// transposeRows does transpose for destination rows [r0, r1) (a row is the
// last destination axis; r1 < 0: to the end).
func transposeRows(dst, src []float32, dims, perm []int, r0, r1 int) {
	rank := len(dims)
	if rank == 0 {
		copy(dst, src)
		return
	}
	srcStrides := make([]int, rank)
	stride := 1
	for a := rank - 1; a >= 0; a-- {
		srcStrides[a] = stride
		stride *= dims[a]
	}
	outDims := make([]int, rank)
	strides := make([]int, rank) // source stride of each destination axis
	for i, a := range perm {
		outDims[i] = dims[a]
		strides[i] = srcStrides[a]
	}
	size := stride
	last := outDims[rank-1]
	if size == 0 || last == 0 {
		return
	}
	if r1 < 0 || r1 > size/last {
		r1 = size / last
	}
	ls := strides[rank-1]
	// Odometer over the leading destination axes, started at row r0.
	idx := make([]int, rank)
	off := 0
	rem := r0
	for a := rank - 2; a >= 0; a-- {
		idx[a] = rem % outDims[a]
		rem /= outDims[a]
		off += idx[a] * strides[a]
	}
	// Swapping the last two axes (e.g. keys [S, D] into Kᵀ [D, S]): the
	// rows of 16 consecutive destination rows are filled a column at a
	// time from 16 contiguous source values, so each source line is read
	// once instead of once per destination row.
	tiled := rank >= 2 && ls != 1 && strides[rank-2] == 1
	for o := r0; o < r1; o++ {
		row := dst[o*last : (o+1)*last]
		switch {
		case tiled && idx[rank-2]+16 <= outDims[rank-2] && o+16 <= r1:
			rows := dst[o*last : (o+16)*last]
			for j, s := 0, off; j < last; j, s = j+1, s+ls {
				v := src[s : s+16]
				for i, x := range v {
					rows[i*last+j] = x
				}
			}
			// Advance 15 rows here, the 16th below.
			idx[rank-2] += 15
			off += 15 * strides[rank-2]
			o += 15
		case ls == 1:
			// The last axis stays last (e.g. heads moved around whole
			// vectors): a row is one contiguous copy.
			copy(row, src[off:off+last])
		default:
			s := off
			for j := range row {
				row[j] = src[s]
				s += ls
			}
		}
		for a := rank - 2; a >= 0; a-- {
			idx[a]++
			off += strides[a]
			if idx[a] < outDims[a] {
				break
			}
			off -= strides[a] * outDims[a]
			idx[a] = 0
		}
	}
}

// rowOffsets returns, for a transposition of an array (dimensions dims)
// that keeps its last axis last, the source offset of every destination
// row; nil when the last axis moves.
func rowOffsets(dims, perm []int) []int {
	rank := len(dims)
	if rank == 0 || perm[rank-1] != rank-1 {
		return nil
	}
	srcStrides := make([]int, rank)
	stride := 1
	for a := rank - 1; a >= 0; a-- {
		srcStrides[a] = stride
		stride *= dims[a]
	}
	rows := 1
	for _, a := range perm[:rank-1] {
		rows *= dims[a]
	}
	offs := make([]int, 0, rows)
	idx := make([]int, rank-1)
	off := 0
	for range rows {
		offs = append(offs, off)
		for i := rank - 2; i >= 0; i-- {
			a := perm[i]
			idx[i]++
			off += srcStrides[a]
			if idx[i] < dims[a] {
				break
			}
			off -= srcStrides[a] * dims[a]
			idx[i] = 0
		}
	}
	return offs
}
