package train

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/safetensors"
)

// TrainOptions configure Train.
type TrainOptions struct {
	Epochs   int
	Batch    int // cases per step
	MaxLines int // lines per case (longer cases are cut)
	LR       float64
	// LRFinal is the learning rate at the last step as a fraction of LR:
	// the rate decays linearly over Epochs (0 or 1 = constant). It depends
	// only on the step, so a resumed run follows the same schedule.
	LRFinal     float64
	WeightDecay float64
	// TargetDep is the listwise target of dependency-rubric lines relative
	// to gold lines (times the rubric's decay^hops).
	TargetDep float32
	Seed      uint64
	// Out, when set, receives a checkpoint (model and optimizer state)
	// after every epoch, every SaveEvery steps and when training stops.
	Out       string
	SaveEvery int
	// StopAfter, when > 0, stops training once the optimizer reached this
	// many steps (a checkpoint is written to Out); a resumed run continues
	// exactly where it stopped.
	StopAfter int
	// Log receives a progress line every few seconds and one per epoch.
	Log io.Writer
	// Validate, when set, runs after every epoch; its numbers are logged
	// and stored in the config.
	Validate func(m *linemodel.Model) map[string]float64
}

// Trainer trains a linemodel.Model: one GoMLX graph computes the loss,
// its gradient with respect to the head outputs and CRF parameters (GoMLX
// autodiff, cheap), and the gradient of the layers below written out as
// forward ops (matrix products), since GoMLX's own DotGeneral gradient is
// slow on the pure Go backends. AdamW runs in Go.
type Trainer struct {
	M      *linemodel.Model
	Opt    TrainOptions
	exec   *G.Exec
	m1, m2 [][]float32 // Adam moments, one per parameter
	step   int
	epoch  int
	total  int // steps of the whole run (for the learning rate schedule)
}

// NewTrainer prepares a trainer; backend nil means simplego
// "ops_sequential".
func NewTrainer(m *linemodel.Model, opt TrainOptions, backend backends.Backend) (*Trainer, error) {
	if backend == nil {
		b, err := simplego.New("ops_sequential")
		if err != nil {
			return nil, err
		}
		backend = b
	}
	if opt.Batch <= 0 {
		opt.Batch = 16
	}
	if opt.MaxLines <= 0 {
		opt.MaxLines = 400
	}
	if opt.LR == 0 {
		opt.LR = 2e-3
	}
	t := &Trainer{M: m, Opt: opt}
	cfg := m.Cfg
	exec, err := G.NewExec(backend, func(in []*G.Node) []*G.Node {
		return trainGraph(cfg, in)
	})
	if err != nil {
		return nil, err
	}
	exec.SetMaxCache(64)
	t.exec = exec
	for _, p := range m.P[:m.Cfg.NumParams()] {
		t.m1 = append(t.m1, make([]float32, len(p)))
		t.m2 = append(t.m2, make([]float32, len(p)))
	}
	return t, nil
}

// Step returns the optimizer step count.
func (t *Trainer) Step() int { return t.step }

// Graph inputs before the parameters.
const (
	inX    = iota // [N,F] standardised features, N = B·L rows
	inNb          // [6,N,1] int32 rows of the ±1, ±2, ±3 neighbours (N = none)
	inSeg         // [N,1] int32 definition segment of each row (N = none)
	inInv         // [N,1] 1/size of the row's definition segment (0 = none)
	inMask        // [B,L] valid lines
	inTagF        // [B,L] int32 fused labels
	inTagS        // [B,L] int32 semantic labels
	inTagD        // [B,L] int32 dependency labels
	inTgt         // [B,L] normalised listwise targets
	inCase        // [B] 1 for a real case, 0 for batch padding
	inQ           // [B,linemodel.MaxQueryIDs,1] int32 query buckets
	inQW          // [B,linemodel.MaxQueryIDs] their weights (1/count, 0 = padding)
	inT           // [N,linemodel.MaxLineIDs,1] int32 line buckets
	inTW          // [N,linemodel.MaxLineIDs] their weights
	numInputs
)

var f32 = dtypes.Float32

// poolNb returns Σ_o w·h[row+o] over the neighbour offsets nb[lo:hi] (a
// symmetric set, so the map is its own transpose).
func poolNb(h, nb *G.Node, lo, hi int, w float64) *G.Node {
	H := h.Shape().Dimensions[1]
	hz := G.Concatenate([]*G.Node{h, G.Zeros(h.Graph(), shapes.Make(f32, 1, H))}, 0)
	idx := G.Slice(nb, G.AxisRange(lo, hi))
	return G.MulScalar(G.ReduceSum(G.Gather(hz, idx), 0), w)
}

// shiftRows returns x [B,L,H] moved by o rows along L: out[:,i] = x[:,i+o],
// zero where i+o falls outside.
func shiftRows(x *G.Node, o int) *G.Node {
	dims := x.Shape().Dimensions
	B, L, H := dims[0], dims[1], dims[2]
	a := o
	if a < 0 {
		a = -a
	}
	z := G.Zeros(x.Graph(), shapes.Make(f32, B, a, H))
	if o > 0 {
		return G.Concatenate([]*G.Node{G.Slice(x, G.AxisRange(), G.AxisRange(o, L)), z}, 1)
	}
	return G.Concatenate([]*G.Node{z, G.Slice(x, G.AxisRange(), G.AxisRange(0, L+o))}, 1)
}

// poolShift is poolNb with shifts instead of gathers (much cheaper on the
// Go backends): M·Σ_o w·S_o·M·h with M the valid-line mask, the same
// symmetric map. It uses Slice, so it is only differentiated by hand.
func poolShift(h, mask *G.Node, offs []int, w float64) *G.Node {
	B, L := mask.Shape().Dimensions[0], mask.Shape().Dimensions[1]
	H := h.Shape().Dimensions[1]
	m3 := G.InsertAxes(mask, -1)
	x := G.Mul(G.Reshape(h, B, L, H), m3)
	var sum *G.Node
	for _, o := range offs {
		if o >= L || -o >= L {
			continue
		}
		if s := shiftRows(x, o); sum == nil {
			sum = s
		} else {
			sum = G.Add(sum, s)
		}
	}
	if sum == nil {
		return G.ZerosLike(h)
	}
	return G.Reshape(G.MulScalar(G.Mul(sum, m3), w), B*L, H)
}

// poolDef returns each row's mean over its definition segment (0 outside
// any); the map is symmetric.
func poolDef(h, seg, inv *G.Node) *G.Node {
	dims := h.Shape().Dimensions
	sums := G.ScatterSum(G.Zeros(h.Graph(), shapes.Make(f32, dims[0]+1, dims[1])), seg, h, false, false)
	return G.Mul(G.Gather(sums, seg), inv)
}

// tmm is aᵀ·b and mmT a·wᵀ, the products of the written-out backward
// passes.
func tmm(a, b *G.Node) *G.Node { return G.DotGeneral(a, []int{0}, nil, b, []int{0}, nil) }
func mmT(a, w *G.Node) *G.Node { return G.DotGeneral(a, []int{1}, nil, w, []int{1}, nil) }

func relu(x *G.Node) *G.Node { return G.Max(x, G.ZerosLike(x)) }

// reluGrad passes d where the pre-activation pre was positive.
func reluGrad(d, pre *G.Node) *G.Node {
	return G.Where(G.GreaterThan(pre, G.ZerosLike(pre)), d, G.ZerosLike(d))
}

// linear is x·w + b. It calls DotGeneral directly: the fastgo backend runs
// DotGeneral natively but not the ops G.MatMul lowers to.
func linear(x, w, b *G.Node) *G.Node {
	return G.Add(G.DotGeneral(x, []int{1}, nil, w, []int{0}, nil), G.InsertAxes(b, 0))
}

// forwardGraph holds the nodes of the forward pass the backward pass needs.
type forwardGraph struct {
	u, v                               *G.Node // [N,D] query and line embeddings (per row)
	x, pre1, h1, pre2, h2, z, pre3, h3 *G.Node
	head                               *G.Node   // [N,4]
	att                                *attGraph // nil without attention
	sSem, sDep                         *G.Node   // [B,L]
	gl                                 *G.Node   // [B,L,2] gate logits
	rank                               *G.Node   // [B,L] ranking head
}

// column returns column c of x [N,4] as [N] without Slice (whose gradient
// needs Pad, missing in simplego), so the whole graph can also be
// differentiated by GoMLX (see the gradient test).
func column(x *G.Node, c int) *G.Node {
	oh := make([]float32, linemodel.NumHeads)
	oh[c] = 1
	return G.ReduceSum(G.Mul(x, G.InsertAxes(G.Const(x.Graph(), oh), 0)), 1)
}

// pooler returns the neighbour poolings (±1 and ±2..3) of h: with gathers
// when ref is set (differentiable by GoMLX, for the gradient test), else
// with shifts.
func pooler(in []*G.Node, ref bool) func(h *G.Node, near bool) *G.Node {
	return func(h *G.Node, near bool) *G.Node {
		switch {
		case ref && near:
			return poolNb(h, in[inNb], 0, 2, 0.5)
		case ref:
			return poolNb(h, in[inNb], 2, 6, 0.25)
		case near:
			return poolShift(h, in[inMask], []int{-1, 1}, 0.5)
		default:
			return poolShift(h, in[inMask], []int{-2, 2, -3, 3}, 0.25)
		}
	}
}

// attGraph holds the attention's nodes for the backward pass.
type attGraph struct {
	q, k, v *G.Node // [B,L,A]
	w       *G.Node // [B,L,L] attention weights (rows: queries)
	m3      *G.Node // [B,L,1] valid-row mask
	scale   float64
}

// attend is the forward attention over the lines of each case: queries,
// keys and values are linear maps of h [N,H]; a row attends to the valid
// rows within band lines of it; the output [N,A] is zero on padding rows.
// It is the Go forward pass's attendRows (the same band, the same mask).
func attend(h, mask, wq, wk, wv *G.Node, band int) (*G.Node, *attGraph) {
	g := h.Graph()
	B, L := mask.Shape().Dimensions[0], mask.Shape().Dimensions[1]
	A := wq.Shape().Dimensions[1]
	proj := func(w *G.Node) *G.Node {
		return G.Reshape(G.DotGeneral(h, []int{1}, nil, w, []int{0}, nil), B, L, A)
	}
	a := &attGraph{q: proj(wq), k: proj(wk), v: proj(wv), m3: G.InsertAxes(mask, -1), scale: 1 / math.Sqrt(float64(A))}
	pen := make([]float32, L*L)
	for i := 0; i < L; i++ {
		for j := 0; j < L; j++ {
			if i-j > band || j-i > band {
				pen[i*L+j] = -1e4
			}
		}
	}
	// [1,L,L] band penalty + [B,1,L] padding-key penalty.
	bias := G.Add(G.Reshape(G.Const(g, pen), 1, L, L), G.Reshape(G.MulScalar(G.OneMinus(mask), -1e4), B, 1, L))
	sc := G.Add(G.MulScalar(G.DotGeneral(a.q, []int{2}, []int{0}, a.k, []int{2}, []int{0}), a.scale), bias)
	mx := G.StopGradient(G.ReduceAndKeep(sc, G.ReduceMax, 2))
	ex := G.Exp(G.Sub(sc, mx))
	a.w = G.Div(ex, G.ReduceAndKeep(ex, G.ReduceSum, 2))
	out := G.Mul(G.DotGeneral(a.w, []int{2}, []int{0}, a.v, []int{1}, []int{0}), a.m3) // [B,L,A]
	return G.Reshape(out, B*L, A), a
}

// backward returns the gradients of Wq, Wk, Wv and of h [N,H] given the
// output's gradient dOut [N,A].
func (a *attGraph) backward(dOut, h, wq, wk, wv *G.Node) (dWq, dWk, dWv, dh *G.Node) {
	B, L, A := a.q.Shape().Dimensions[0], a.q.Shape().Dimensions[1], a.q.Shape().Dimensions[2]
	N := B * L
	dO := G.Mul(G.Reshape(dOut, B, L, A), a.m3)
	dV := G.DotGeneral(a.w, []int{1}, []int{0}, dO, []int{1}, []int{0}) // Wᵀ·dO [B,L,A]
	dW := G.DotGeneral(dO, []int{2}, []int{0}, a.v, []int{2}, []int{0}) // dO·Vᵀ [B,L,L]
	dS := G.Mul(a.w, G.Sub(dW, G.ReduceAndKeep(G.Mul(dW, a.w), G.ReduceSum, 2)))
	dS = G.MulScalar(dS, a.scale)
	dQ := G.DotGeneral(dS, []int{2}, []int{0}, a.k, []int{1}, []int{0}) // [B,L,A]
	dK := G.DotGeneral(dS, []int{1}, []int{0}, a.q, []int{1}, []int{0}) // [B,L,A]
	flat := func(x *G.Node) *G.Node { return G.Reshape(x, N, A) }
	dWq, dWk, dWv = tmm(h, flat(dQ)), tmm(h, flat(dK)), tmm(h, flat(dV))
	dh = G.Add(G.Add(mmT(flat(dQ), wq), mmT(flat(dK), wk)), mmT(flat(dV), wv))
	return
}

func buildForward(in []*G.Node, P []*G.Node, band int, ref bool) *forwardGraph {
	pool := pooler(in, ref)
	B, L := in[inMask].Shape().Dimensions[0], in[inMask].Shape().Dimensions[1]
	D := P[linemodel.ParamEmbQ].Shape().Dimensions[1]
	f := &forwardGraph{}
	q := G.ReduceSum(G.Mul(G.Gather(P[linemodel.ParamEmbQ], in[inQ]), G.InsertAxes(in[inQW], -1)), 1) // [B,D]
	f.u = G.Reshape(G.BroadcastToDims(G.InsertAxes(q, 1), B, L, D), B*L, D)
	f.v = G.ReduceSum(G.Mul(G.Gather(P[linemodel.ParamEmbT], in[inT]), G.InsertAxes(in[inTW], -1)), 1) // [N,D]
	f.x = G.Concatenate([]*G.Node{in[inX], f.u, f.v, G.Mul(f.u, f.v)}, 1)
	f.pre1 = linear(f.x, P[linemodel.ParamW1], P[linemodel.ParamB1])
	f.h1 = relu(f.pre1)
	f.pre2 = linear(f.h1, P[linemodel.ParamW2], P[linemodel.ParamB2])
	f.h2 = relu(f.pre2)
	parts := []*G.Node{
		f.h2,
		pool(f.h2, true),
		pool(f.h2, false),
		poolDef(f.h2, in[inSeg], in[inInv]),
	}
	if len(P) > linemodel.ParamWQ {
		var o *G.Node
		o, f.att = attend(f.h2, in[inMask], P[linemodel.ParamWQ], P[linemodel.ParamWK], P[linemodel.ParamWV], band)
		parts = append(parts, o)
	}
	f.z = G.Concatenate(parts, 1)
	f.pre3 = linear(f.z, P[linemodel.ParamW3], P[linemodel.ParamB3])
	f.h3 = relu(f.pre3)
	f.head = linear(f.h3, P[linemodel.ParamWH], P[linemodel.ParamBH])
	f.sSem = G.Reshape(column(f.head, 0), B, L)
	f.sDep = G.Reshape(column(f.head, 1), B, L)
	f.gl = G.Reshape(G.Stack([]*G.Node{column(f.head, 2), column(f.head, 3)}, 1), B, L, 2)
	f.rank = G.Reshape(column(f.head, 4), B, L)
	return f
}

// lossGraph returns the total loss and its parts (fused CRF NLL, listwise
// loss) from the head outputs.
func lossGraph(cfg linemodel.Config, in []*G.Node, P []*G.Node, sSem, sDep, gl, rank *G.Node) (total, nllF, lw *G.Node) {
	mask, caseW := in[inMask], in[inCase]
	nCases := G.Max(G.ReduceAllSum(caseW), G.ScalarOne(mask.Graph(), f32))
	gate := G.Softmax(gl, -1)                                                                        // [B,L,2]
	gSem := G.ReduceSum(G.Mul(gate, G.Reshape(G.Const(mask.Graph(), []float32{1, 0}), 1, 1, 2)), -1) // [B,L]
	fused := G.Add(G.Mul(gSem, sSem), G.Mul(G.OneMinus(gSem), sDep))
	em := func(s *G.Node) *G.Node {
		s3 := G.InsertAxes(s, -1)
		return G.Concatenate([]*G.Node{G.ZerosLike(s3), s3}, -1)
	}
	nll := func(s, tags *G.Node, k int) *G.Node {
		per := crf.NLLGraph(em(s), mask, P[linemodel.ParamTransF+3*k], P[linemodel.ParamStartF+3*k], P[linemodel.ParamEndF+3*k], tags)
		return G.Div(G.ReduceAllSum(G.Mul(per, caseW)), nCases)
	}
	nllF = nll(fused, in[inTagF], 0)
	total = G.Add(nllF, G.MulScalar(G.Add(nll(sSem, in[inTagS], 1), nll(sDep, in[inTagD], 2)), cfg.Lambda))
	// Gate balance: the negative entropy of the mean gate over valid lines.
	m3 := G.InsertAxes(mask, -1)
	mean := G.Div(G.ReduceSum(G.Mul(gate, m3), 0, 1), G.Max(G.ReduceAllSum(mask), G.ScalarOne(mask.Graph(), f32)))
	negEnt := G.ReduceAllSum(G.Mul(mean, G.Log(G.Max(mean, G.Scalar(mask.Graph(), f32, 1e-8)))))
	total = G.Add(total, G.MulScalar(negEnt, cfg.GateReg))
	// Listwise: cross-entropy between the softmax of the ranking scores
	// over a case's lines and its normalised gold-weighted targets.
	s := G.Add(rank, G.MulScalar(G.OneMinus(mask), -1e4))
	mx := G.StopGradient(G.ReduceAndKeep(s, G.ReduceMax, 1))
	logZ := G.Add(mx, G.Log(G.ReduceAndKeep(G.Exp(G.Sub(s, mx)), G.ReduceSum, 1)))
	lw = G.Div(G.Neg(G.ReduceAllSum(G.Mul(in[inTgt], G.Sub(s, logZ)))), nCases)
	total = G.Add(total, G.MulScalar(lw, cfg.Listwise))
	return total, nllF, lw
}

// trainGraph returns [loss, nllF, listwise, grads of every parameter...].
func trainGraph(cfg linemodel.Config, in []*G.Node) []*G.Node {
	P := in[numInputs:]
	f := buildForward(in, P, cfg.AttnBand, false)
	pool := pooler(in, false)
	total, nllF, lw := lossGraph(cfg, in, P, f.sSem, f.sDep, f.gl, f.rank)
	wrt := []*G.Node{f.sSem, f.sDep, f.gl, f.rank}
	for i := linemodel.ParamTransF; i <= linemodel.ParamEndD; i++ {
		wrt = append(wrt, P[i])
	}
	gr := G.Gradient(total, wrt...)
	N := f.x.Shape().Dimensions[0]
	dHead := G.Concatenate([]*G.Node{
		G.Reshape(gr[0], N, 1), G.Reshape(gr[1], N, 1), G.Reshape(gr[2], N, 2), G.Reshape(gr[3], N, 1),
	}, 1)
	grads := make([]*G.Node, cfg.NumParams())
	grads[linemodel.ParamWH], grads[linemodel.ParamBH] = tmm(f.h3, dHead), G.ReduceSum(dHead, 0)
	d3 := reluGrad(mmT(dHead, P[linemodel.ParamWH]), f.pre3)
	grads[linemodel.ParamW3], grads[linemodel.ParamB3] = tmm(f.z, d3), G.ReduceSum(d3, 0)
	dz := mmT(d3, P[linemodel.ParamW3])
	H2 := cfg.Hidden[1]
	part := func(k int) *G.Node { return G.Slice(dz, G.AxisRange(), G.AxisRange(k*H2, (k+1)*H2)) }
	dh2 := G.Add(G.Add(part(0), pool(part(1), true)),
		G.Add(pool(part(2), false), poolDef(part(3), in[inSeg], in[inInv])))
	if f.att != nil {
		dO := G.Slice(dz, G.AxisRange(), G.AxisRange(4*H2, 4*H2+cfg.Attn))
		var dh *G.Node
		grads[linemodel.ParamWQ], grads[linemodel.ParamWK], grads[linemodel.ParamWV], dh =
			f.att.backward(dO, f.h2, P[linemodel.ParamWQ], P[linemodel.ParamWK], P[linemodel.ParamWV])
		dh2 = G.Add(dh2, dh)
	}
	d2 := reluGrad(dh2, f.pre2)
	grads[linemodel.ParamW2], grads[linemodel.ParamB2] = tmm(f.h1, d2), G.ReduceSum(d2, 0)
	d1 := reluGrad(mmT(d2, P[linemodel.ParamW2]), f.pre1)
	grads[linemodel.ParamW1], grads[linemodel.ParamB1] = tmm(f.x, d1), G.ReduceSum(d1, 0)
	// Embeddings: split the input gradient into its u, v and u⊙v parts and
	// scatter it back to the buckets.
	dx := mmT(d1, P[linemodel.ParamW1])
	F, D := in[inX].Shape().Dimensions[1], cfg.Embed
	cols := func(k int) *G.Node { return G.Slice(dx, G.AxisRange(), G.AxisRange(F+k*D, F+(k+1)*D)) }
	du := G.Add(cols(0), G.Mul(cols(2), f.v))
	dv := G.Add(cols(1), G.Mul(cols(2), f.u))
	B, L := in[inMask].Shape().Dimensions[0], in[inMask].Shape().Dimensions[1]
	dq := G.ReduceSum(G.Reshape(du, B, L, D), 1) // [B,D]
	zeros := G.Zeros(dx.Graph(), shapes.Make(f32, linemodel.NumBuckets, D))
	grads[linemodel.ParamEmbQ] = G.ScatterSum(zeros, in[inQ], G.Mul(G.InsertAxes(dq, 1), G.InsertAxes(in[inQW], -1)), false, false)
	grads[linemodel.ParamEmbT] = G.ScatterSum(zeros, in[inT], G.Mul(G.InsertAxes(dv, 1), G.InsertAxes(in[inTW], -1)), false, false)
	for i := linemodel.ParamTransF; i <= linemodel.ParamEndD; i++ {
		grads[i] = gr[4+i-linemodel.ParamTransF]
	}
	return append([]*G.Node{total, nllF, lw}, grads...)
}

// batchInputs packs cases into the graph inputs (see the in* constants).
// Each case is cut to MaxLines lines; L is the longest case rounded up to
// a multiple of 32 so an Exec sees few shapes.
func (t *Trainer) batchInputs(exs []*Example) []any {
	B, F := t.Opt.Batch, len(t.M.Mean)
	L := 1
	for _, ex := range exs {
		L = max(L, min(ex.N, t.Opt.MaxLines))
	}
	L = min((L+31)/32*32, max(32, (t.Opt.MaxLines+31)/32*32))
	N := B * L
	x := make([]float32, N*F)
	nb := make([]int32, 6*N)
	seg := make([]int32, N)
	inv := make([]float32, N)
	mask := make([]float32, B*L)
	tags := [3][]int32{make([]int32, N), make([]int32, N), make([]int32, N)}
	tgt := make([]float32, N)
	caseW := make([]float32, B)
	qids := make([]int32, B*linemodel.MaxQueryIDs)
	qw := make([]float32, B*linemodel.MaxQueryIDs)
	tids := make([]int32, N*linemodel.MaxLineIDs)
	tw := make([]float32, N*linemodel.MaxLineIDs)
	for i := range nb {
		nb[i] = int32(N)
	}
	for i := range seg {
		seg[i] = int32(N)
	}
	offs := [6]int{-1, 1, -2, 2, -3, 3}
	for b, ex := range exs {
		if b >= B {
			break
		}
		caseW[b] = 1
		n := min(ex.N, L)
		base := b * L
		idWeights(qids[b*linemodel.MaxQueryIDs:(b+1)*linemodel.MaxQueryIDs], qw[b*linemodel.MaxQueryIDs:(b+1)*linemodel.MaxQueryIDs], ex.QIDs)
		if len(ex.TIDs) >= n*linemodel.MaxLineIDs {
			for i := 0; i < n; i++ {
				r := base + i
				idWeights(tids[r*linemodel.MaxLineIDs:(r+1)*linemodel.MaxLineIDs], tw[r*linemodel.MaxLineIDs:(r+1)*linemodel.MaxLineIDs], ex.TIDs[i*linemodel.MaxLineIDs:(i+1)*linemodel.MaxLineIDs])
			}
		}
		copy(x[base*F:(base+n)*F], t.M.Standardise(ex.X[:n*F]))
		tg := ex.Targets(t.Opt.TargetDep)
		sum := float32(0)
		first := map[int32]int{}
		count := map[int32]int{}
		for i := 0; i < n; i++ {
			r := base + i
			mask[r] = 1
			for k, o := range offs {
				if j := i + o; j >= 0 && j < n {
					nb[k*N+r] = int32(base + j)
				}
			}
			if d := ex.Def[i]; d >= 0 {
				if _, ok := first[d]; !ok {
					first[d] = r
				}
				seg[r] = int32(first[d])
				count[d]++
			}
			lab := ex.Lab[i]
			tags[0][r] = b2i(lab != 0)
			tags[1][r] = b2i(lab&(LabGold|LabSem) != 0)
			tags[2][r] = b2i(lab&LabDep != 0)
			sum += tg[i]
		}
		for i := 0; i < n; i++ {
			if d := ex.Def[i]; d >= 0 {
				inv[base+i] = 1 / float32(count[d])
			}
			if sum > 0 {
				tgt[base+i] = tg[i] / sum
			}
		}
	}
	args := []any{
		tensors.FromFlatDataAndDimensions(x, N, F),
		tensors.FromFlatDataAndDimensions(nb, 6, N, 1),
		tensors.FromFlatDataAndDimensions(seg, N, 1),
		tensors.FromFlatDataAndDimensions(inv, N, 1),
		tensors.FromFlatDataAndDimensions(mask, B, L),
		tensors.FromFlatDataAndDimensions(tags[0], B, L),
		tensors.FromFlatDataAndDimensions(tags[1], B, L),
		tensors.FromFlatDataAndDimensions(tags[2], B, L),
		tensors.FromFlatDataAndDimensions(tgt, B, L),
		tensors.FromFlatDataAndDimensions(caseW, B),
		tensors.FromFlatDataAndDimensions(qids, B, linemodel.MaxQueryIDs, 1),
		tensors.FromFlatDataAndDimensions(qw, B, linemodel.MaxQueryIDs),
		tensors.FromFlatDataAndDimensions(tids, N, linemodel.MaxLineIDs, 1),
		tensors.FromFlatDataAndDimensions(tw, N, linemodel.MaxLineIDs),
	}
	for i, sh := range t.M.Cfg.ParamShapes()[:t.M.Cfg.NumParams()] {
		args = append(args, tensors.FromFlatDataAndDimensions(t.M.P[i], sh...))
	}
	return args
}

// idWeights copies the non-zero bucket ids of src into ids with weight
// 1/count each (the mean embedding); the rest stay id 0, weight 0.
func idWeights(ids []int32, w []float32, src []uint16) {
	k := 0
	for _, id := range src {
		if id != 0 && int(id) < linemodel.NumBuckets && k < len(ids) {
			ids[k] = int32(id)
			k++
		}
	}
	for i := 0; i < k; i++ {
		w[i] = 1 / float32(k)
	}
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// StepLoss holds the losses of one step.
type StepLoss struct {
	Total, Fused, Listwise float64
}

// TrainStep runs one optimisation step on up to Batch examples and returns
// the losses before the update.
func (t *Trainer) TrainStep(exs []*Example) (StepLoss, error) {
	outs, err := t.exec.Exec(t.batchInputs(exs)...)
	if err != nil {
		return StepLoss{}, err
	}
	defer func() {
		for _, o := range outs {
			o.FinalizeAll()
		}
	}()
	sc := func(i int) float64 { return float64(tensors.MustCopyFlatData[float32](outs[i])[0]) }
	loss := StepLoss{Total: sc(0), Fused: sc(1), Listwise: sc(2)}
	if math.IsNaN(loss.Total) || math.IsInf(loss.Total, 0) {
		return loss, fmt.Errorf("linemodel: step %d: loss is %v", t.step+1, loss.Total)
	}
	t.step++
	const b1, b2, eps = 0.9, 0.999, 1e-8
	c1 := 1 - math.Pow(b1, float64(t.step))
	c2 := 1 - math.Pow(b2, float64(t.step))
	lr := t.Opt.LR
	if f := t.Opt.LRFinal; f > 0 && f != 1 && t.total > 0 {
		lr *= 1 - (1-f)*math.Min(1, float64(t.step-1)/float64(t.total))
	}
	for pi, p := range t.M.P[:t.M.Cfg.NumParams()] {
		g := tensors.MustCopyFlatData[float32](outs[3+pi])
		m1, m2 := t.m1[pi], t.m2[pi]
		decay := pi <= linemodel.ParamWH && pi%2 == 0 || pi >= linemodel.ParamEmbQ // weight matrices, embeddings and the attention maps
		for i := range p {
			gi := float64(g[i])
			m1[i] = float32(b1*float64(m1[i]) + (1-b1)*gi)
			m2[i] = float32(b2*float64(m2[i]) + (1-b2)*gi*gi)
			upd := (float64(m1[i]) / c1) / (math.Sqrt(float64(m2[i])/c2) + eps)
			if decay {
				upd += t.Opt.WeightDecay * float64(p[i])
			}
			p[i] -= float32(lr * upd)
		}
	}
	return loss, nil
}

// Train runs the remaining steps over exs: epochs of shuffled batches (the
// order depends only on the seed and the epoch number, so a resumed run
// sees the same batches), skipping the steps a resumed checkpoint already
// took.
func (t *Trainer) Train(exs []Example) error {
	logf := func(format string, a ...any) {
		if t.Opt.Log != nil {
			fmt.Fprintf(t.Opt.Log, format, a...)
		}
	}
	B := t.Opt.Batch
	perEpoch := len(exs) / B
	if perEpoch == 0 {
		return fmt.Errorf("linemodel: %d examples, fewer than one batch of %d", len(exs), B)
	}
	t.total = perEpoch * t.Opt.Epochs
	save := func() error {
		if t.Opt.Out == "" {
			return nil
		}
		return t.Save(t.Opt.Out)
	}
	for t.epoch = t.step / perEpoch; t.epoch < t.Opt.Epochs; t.epoch++ {
		batches := epochBatches(exs, B, t.Opt.Seed, t.epoch)
		start := time.Now()
		last := start
		sum, sumF, sumL, cnt := 0.0, 0.0, 0.0, 0
		for s := t.step - t.epoch*perEpoch; s < perEpoch; s++ {
			if t.Opt.StopAfter > 0 && t.step >= t.Opt.StopAfter {
				return save()
			}
			loss, err := t.TrainStep(batches[s])
			if err != nil {
				return err
			}
			sum += loss.Total
			sumF += loss.Fused
			sumL += loss.Listwise
			cnt++
			if time.Since(last) > 10*time.Second {
				last = time.Now()
				logf("epoch %d step %d/%d loss %.4f (crf %.4f listwise %.4f) %.1f steps/s\n", t.epoch+1, s+1, perEpoch,
					sum/float64(cnt), sumF/float64(cnt), sumL/float64(cnt), float64(cnt)/time.Since(start).Seconds())
			}
			if t.Opt.SaveEvery > 0 && t.step%t.Opt.SaveEvery == 0 {
				if err := save(); err != nil {
					return err
				}
			}
		}
		t.M.Cfg.Epochs = t.epoch + 1
		t.M.Cfg.Step = t.step
		c := math.Max(1, float64(cnt))
		msg := fmt.Sprintf("epoch %d done: loss %.4f (crf %.4f listwise %.4f), %d steps, %s", t.epoch+1, sum/c, sumF/c, sumL/c, cnt, time.Since(start).Round(time.Millisecond))
		if t.Opt.Validate != nil {
			v := t.Opt.Validate(t.M)
			t.M.Cfg.Val = v
			msg += fmt.Sprintf(", val recall %.4f hit %.4f", v["recall"], v["hit"])
		}
		logf("%s\n", msg)
		if err := save(); err != nil {
			return err
		}
	}
	return nil
}

// epochBatches returns the batches of one epoch: a shuffle of exs (seeded
// by seed and epoch), cut into groups of 8 batches whose cases are sorted
// by length so a batch pads little, and the batches shuffled again. It
// depends only on its arguments, so a resumed run sees the same batches.
func epochBatches(exs []Example, B int, seed uint64, epoch int) [][]*Example {
	rng := rand.New(rand.NewPCG(seed, uint64(epoch)))
	perm := rng.Perm(len(exs))
	perm = perm[:len(perm)/B*B]
	const group = 8
	for g := 0; g < len(perm); g += group * B {
		chunk := perm[g:min(len(perm), g+group*B)]
		sort.SliceStable(chunk, func(a, b int) bool { return exs[chunk[a]].N < exs[chunk[b]].N })
	}
	batches := make([][]*Example, len(perm)/B)
	for i := range batches {
		batches[i] = make([]*Example, B)
		for j := range batches[i] {
			batches[i][j] = &exs[perm[i*B+j]]
		}
	}
	rng.Shuffle(len(batches), func(a, b int) { batches[a], batches[b] = batches[b], batches[a] })
	return batches
}

type trainState struct {
	Step int `json:"step"`
}

// Save writes the model and the optimizer state (optim.safetensors,
// state.json) to dir.
func (t *Trainer) Save(dir string) error {
	t.M.Cfg.Step = t.step
	if err := t.M.Save(dir); err != nil {
		return err
	}
	var ts []safetensors.Tensor
	for i := range t.m1 {
		ts = append(ts,
			safetensors.NewFloat32Tensor(fmt.Sprintf("m1.%d", i), []int{len(t.m1[i])}, t.m1[i]),
			safetensors.NewFloat32Tensor(fmt.Sprintf("m2.%d", i), []int{len(t.m2[i])}, t.m2[i]))
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "optim.safetensors"), ts, nil); err != nil {
		return err
	}
	b, _ := json.Marshal(trainState{Step: t.step})
	return os.WriteFile(filepath.Join(dir, "state.json"), b, 0o644)
}

// Resume loads the optimizer state written by Save from dir (the model
// itself must be loaded with linemodel.Load and passed to NewTrainer).
func (t *Trainer) Resume(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return err
	}
	var st trainState
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	f, err := safetensors.Open(filepath.Join(dir, "optim.safetensors"))
	if err != nil {
		return err
	}
	defer f.Close()
	for i := range t.m1 {
		m1, err := f.Float32(fmt.Sprintf("m1.%d", i))
		if err != nil {
			return err
		}
		m2, err := f.Float32(fmt.Sprintf("m2.%d", i))
		if err != nil {
			return err
		}
		if len(m1) != len(t.m1[i]) || len(m2) != len(t.m2[i]) {
			return fmt.Errorf("linemodel: optimizer state %d has the wrong size", i)
		}
		// Copy: the file's buffers are released on Close.
		copy(t.m1[i], m1)
		copy(t.m2[i], m2)
	}
	t.step = st.Step
	return nil
}
