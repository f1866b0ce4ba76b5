package crf

import (
	"fmt"
	"math/bits"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// identityOffDiagonal stands in for log(0) off the diagonal of the identity
// of the (max, +)/(log-sum-exp, +) semiring. It is finite so that
// log-sum-exp over a row never sees only -Inf (which would give NaN values
// and gradients), yet so negative that exp() of it is exactly 0 in float32
// and float64 whatever the path scores.
const identityOffDiagonal = -1e30

// LogPartitionGraph returns log Z per sample, shape [B], for emissions
// [B, L, T], mask [B, L] (bool or numeric, non-zero = valid; nil = all
// valid; position 0 always counts), transitions [T, T] read with the
// [Training] convention Transitions[next][prev], start and end [T]. It is
// differentiable with respect to emissions, transitions, start and end.
//
// The forward recursion is written as a product of per-step T×T matrices in
// the log-sum-exp semiring, multiplied as a balanced tree: the graph has
// O(log L) depth and O(L·T³·B) work, and its gradient stays linear in L. It
// uses only Gather, Where, Reshape, broadcasting arithmetic and reductions,
// whose gradients the pure Go backend supports (no Slice, whose gradient
// needs Pad). Masked steps contribute the semiring identity, i.e. they leave
// the forward scores unchanged, as in [LogPartition]. Half-precision inputs
// are computed in float32; the result has the emissions' dtype.
//
// Like every GoMLX graph-building function it panics on invalid shapes; the
// panic is turned into an error by the executor running the graph.
func LogPartitionGraph(emissions, mask, transitions, start, end *Node) *Node {
	in := prepareGraphInputs(emissions, mask, transitions, start, end)
	return in.restore(in.logPartition())
}

// GoldScoreGraph returns the score of the gold tag paths tags [B, L]
// (integer) per sample, shape [B], with the [Training] convention and the
// reference's masking rules (see [GoldScore]). Arguments are as in
// [LogPartitionGraph].
func GoldScoreGraph(emissions, mask, transitions, start, end, tags *Node) *Node {
	in := prepareGraphInputs(emissions, mask, transitions, start, end)
	return in.restore(in.goldScore(tags))
}

// NLLGraph returns the per-sample normalised negative log-likelihood
// (log Z − gold score) / max(1, k), shape [B], with k the number of valid
// positions of each sample — the reference's training loss before the batch
// mean. Arguments are as in [LogPartitionGraph] and [GoldScoreGraph]; it is
// differentiable with respect to emissions, transitions, start and end.
func NLLGraph(emissions, mask, transitions, start, end, tags *Node) *Node {
	in := prepareGraphInputs(emissions, mask, transitions, start, end)
	nll := Sub(in.logPartition(), in.goldScore(tags))
	n := Max(ReduceSum(in.validF, 1), ScalarOne(in.g, in.dtype))
	return in.restore(Div(nll, n))
}

// graphInputs are the validated inputs converted to the compute dtype.
type graphInputs struct {
	g                 *Graph
	b, l, t           int
	dtype, outDType   dtypes.DType
	em                *Node // [B, L, T]
	trans, start, end *Node // [T, T], [T], [T]
	valid             *Node // [B, L] bool, position 0 forced on
	validF            *Node // [B, L] float
	first             *Node // [B, L] bool, true at position 0
}

func prepareGraphInputs(emissions, mask, transitions, start, end *Node) *graphInputs {
	if emissions.Rank() != 3 {
		panicf("emissions must be [B, L, T], got %s", emissions.Shape())
	}
	dims := emissions.Shape().Dimensions
	in := &graphInputs{g: emissions.Graph(), b: dims[0], l: dims[1], t: dims[2], outDType: emissions.DType()}
	if !in.outDType.IsFloat() {
		panicf("emissions must be floating point, got %s", in.outDType)
	}
	in.dtype = in.outDType
	if in.dtype == dtypes.Float16 || in.dtype == dtypes.BFloat16 {
		in.dtype = dtypes.Float32
	}
	if !transitions.Shape().Equal(shapes.Make(transitions.DType(), in.t, in.t)) {
		panicf("transitions must be [%d, %d], got %s", in.t, in.t, transitions.Shape())
	}
	for _, v := range []*Node{start, end} {
		if v.Rank() != 1 || v.Shape().Dimensions[0] != in.t {
			panicf("start/end must be [%d], got %s", in.t, v.Shape())
		}
	}
	in.em = ConvertDType(emissions, in.dtype)
	in.trans = ConvertDType(transitions, in.dtype)
	in.start = ConvertDType(start, in.dtype)
	in.end = ConvertDType(end, in.dtype)

	in.first = Equal(Iota(in.g, shapes.Make(dtypes.Int32, in.b, in.l), 1), ScalarZero(in.g, dtypes.Int32))
	if mask == nil {
		in.valid = OnesLike(in.first)
	} else {
		if !mask.Shape().Equal(shapes.Make(mask.DType(), in.b, in.l)) {
			panicf("mask must be [%d, %d], got %s", in.b, in.l, mask.Shape())
		}
		m := mask
		if m.DType() != dtypes.Bool {
			m = NotEqual(m, ZerosLike(m))
		}
		in.valid = LogicalOr(m, in.first)
	}
	in.validF = ConvertDType(in.valid, in.dtype)
	return in
}

func (in *graphInputs) restore(x *Node) *Node {
	if x.DType() != in.outDType {
		return ConvertDType(x, in.outDType)
	}
	return x
}

// logSumExpAxes reduces x over axes with the usual max shift; the shift is a
// constant for differentiation, which leaves the gradient exact.
func logSumExpAxes(x *Node, axes ...int) *Node {
	m := StopGradient(ReduceAndKeep(x, ReduceMax, axes...))
	s := Log(ReduceSum(Exp(Sub(x, m)), axes...))
	return Add(s, StopGradient(ReduceMax(x, axes...)))
}

// identity returns the semiring identity [T, T] broadcast to dims.
func (in *graphInputs) identity(dims ...int) *Node {
	id := make([]float64, in.t*in.t)
	for i := range id {
		if i%(in.t+1) != 0 {
			id[i] = identityOffDiagonal
		}
	}
	lead := make([]int, len(dims))
	for i := range lead {
		lead[i] = 1
	}
	lead[len(dims)-2], lead[len(dims)-1] = in.t, in.t
	c := ConvertDType(Reshape(Const(in.g, id), lead...), in.dtype)
	return BroadcastToDims(c, dims...)
}

// indices returns a constant [len(idx), 1] int32 index tensor for Gather.
func (in *graphInputs) indices(idx []int32) *Node {
	return Reshape(Const(in.g, idx), len(idx), 1)
}

func (in *graphInputs) logPartition() *Node {
	b, l, t := in.b, in.l, in.t
	emT := TransposeAllDims(in.em, 1, 0, 2) // [L, B, T]
	alpha0 := Add(Reshape(Gather(emT, in.indices([]int32{0})), b, t), Reshape(in.start, 1, t))
	if l == 1 {
		return logSumExpAxes(Add(alpha0, Reshape(in.end, 1, t)), 1)
	}

	// Step matrices M_i[b, j, p] = trans[j, p] + em[b, i, j]; position 0 and
	// masked positions are the identity.
	steps := Add(Reshape(emT, l, b, t, 1), Reshape(in.trans, 1, 1, t, t))
	use := TransposeAllDims(LogicalAnd(in.valid, LogicalNot(in.first)), 1, 0) // [L, B]
	steps = Where(use, steps, in.identity(l, b, t, t))

	// Pad to a power of two with identities so every tree level pairs up.
	n := 1 << bits.Len(uint(l-1))
	if n > l {
		idx := make([]int32, n)
		pad := make([]bool, n)
		for i := range idx {
			if i < l {
				idx[i] = int32(i)
			} else {
				pad[i] = true
			}
		}
		steps = Gather(steps, in.indices(idx))
		steps = Where(Const(in.g, pad), in.identity(n, b, t, t), steps)
	}
	for ; n > 1; n /= 2 {
		even := make([]int32, n/2)
		odd := make([]int32, n/2)
		for i := range even {
			even[i], odd[i] = int32(2*i), int32(2*i+1)
		}
		// The later step multiplies from the left.
		steps = logMatMul(Gather(steps, in.indices(odd)), Gather(steps, in.indices(even)))
	}
	prod := Reshape(steps, b, t, t) // [B, next, prev]
	x := Add(Add(prod, Reshape(alpha0, b, 1, t)), Reshape(in.end, 1, t, 1))
	return logSumExpAxes(x, 1, 2)
}

// logMatMul multiplies batches of matrices [N, B, T, T] in the log-sum-exp
// semiring: C[.., j, k] = logsumexp_p(A[.., j, p] + B[.., p, k]).
func logMatMul(a, b *Node) *Node {
	d := a.Shape().Dimensions
	n, bs, t := d[0], d[1], d[2]
	x := Add(Reshape(a, n, bs, t, t, 1), Reshape(b, n, bs, 1, t, t))
	return logSumExpAxes(x, 3)
}

func (in *graphInputs) goldScore(tags *Node) *Node {
	b, l, t := in.b, in.l, in.t
	if !tags.DType().IsInt() || !tags.Shape().Equal(shapes.Make(tags.DType(), b, l)) {
		panicf("tags must be integer [%d, %d], got %s", b, l, tags.Shape())
	}
	y := OneHot(tags, t, in.dtype) // [B, L, T]
	firstF := ConvertDType(in.first, in.dtype)

	emis := Mul(ReduceSum(Mul(in.em, y), 2), in.validF)
	starts := Mul(ReduceSum(Mul(y, Reshape(in.start, 1, 1, t)), 2), firstF)

	// One-hot of the previous tag, via a Gather along L (tags carry no
	// gradient, so its cost does not matter).
	prevIdx := make([]int32, l)
	for i := 1; i < l; i++ {
		prevIdx[i] = int32(i - 1)
	}
	yPrev := TransposeAllDims(Gather(TransposeAllDims(y, 1, 0, 2), in.indices(prevIdx)), 1, 0, 2)
	// rows[b, i, p] = trans[y_i, p]
	rows := ReduceSum(Mul(Reshape(y, b, l, t, 1), Reshape(in.trans, 1, 1, t, t)), 2)
	stepF := Mul(in.validF, Sub(OnesLike(firstF), firstF))
	transScore := Mul(ReduceSum(Mul(rows, yPrev), 2), stepF)

	// End score of tags[k-1], k = number of valid positions.
	k := ReduceSum(ConvertDType(in.valid, dtypes.Int32), 1) // [B]
	pos := Iota(in.g, shapes.Make(dtypes.Int32, b, l), 1)
	lastF := ConvertDType(Equal(pos, Reshape(Sub(k, OnesLike(k)), b, 1)), in.dtype)
	ends := Mul(ReduceSum(Mul(y, Reshape(in.end, 1, 1, t)), 2), lastF)

	return ReduceSum(Add(Add(emis, starts), Add(transScore, ends)), 1)
}

// panicf aborts graph building the GoMLX way, with an error wrapping
// ErrShape that the executor returns to its caller.
func panicf(format string, args ...any) {
	panic(fmt.Errorf("%w: "+format, append([]any{ErrShape}, args...)...))
}
