package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gomlx/gomlx/backends"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/prunekit/pruner/internal/linemodel"
)

// AttnEncoderOptions configure TrainAttnEncoder, the experiment that asks
// whether a self-attention layer over a code unit's words pays for its
// cost over the bag of words at the same data, width and optimizer.
type AttnEncoderOptions struct {
	Dim, Epochs int
	// Attn adds one self-attention layer (with learned positions and a
	// residual) over a unit's first UnitWords words; false is the bag of
	// words trained the same way (the ablation).
	Attn bool
	// Batch pairs per step, each ranked among Cands units of its file.
	Batch, Cands, UnitWords, QueryWords int
	LR, Temp                            float64
	Seed                                uint64
}

// DefaultAttnEncoderOptions are the experiment's options.
var DefaultAttnEncoderOptions = AttnEncoderOptions{
	Dim: 64, Epochs: 2, Attn: true, Batch: 32, Cands: 16, UnitWords: 48, QueryWords: 16,
	LR: 3e-3, Temp: 20, Seed: 1,
}

// Parameters of the attention encoder, in graph input order after the data.
const (
	aeEQ  = iota // [V,D] natural-language table
	aeEC         // [V,D] code table
	aePos        // [UnitWords,D] positions
	aeWQ         // [D,D]
	aeWK
	aeWV
	aeNumParams
)

// Data inputs of the training graph.
const (
	aeInQ  = iota // [B·Lq,D] the query words' vectors (gathered in Go)
	aeInQW        // [B,Lq] their idf (0 = padding)
	aeInU         // [B·C·Lu,D] the unit words' vectors
	aeInUW        // [B·C,Lu] their idf (0 = padding)
	aeInUM        // [B·C,Lu] valid words
	aeInCM        // [B,C] valid candidates (the positive is candidate 0)
	aeNumIn
)

// attnEnc is the experiment's model: its parameters as flat float32s.
type attnEnc struct {
	o   AttnEncoderOptions
	V   int
	idf []float32
	P   [][]float32
	dim [][]int
}

func newAttnEnc(V int, idf []float32, o AttnEncoderOptions) *attnEnc {
	D, L := o.Dim, o.UnitWords
	m := &attnEnc{o: o, V: V, idf: idf}
	rng := rand.New(rand.NewPCG(o.Seed, 11))
	m.dim = [][]int{{V, D}, {V, D}, {L, D}, {D, D}, {D, D}, {D, D}}
	for k, d := range m.dim {
		p := make([]float32, d[0]*d[1])
		sd := 1 / math.Sqrt(float64(D))
		switch k {
		case aePos:
			sd = 0.02
		case aeWQ, aeWK, aeWV:
			sd = 0.05
		}
		for i := range p {
			p[i] = float32(rng.NormFloat64() * sd)
		}
		m.P = append(m.P, p)
	}
	// Both tables start equal, as the bag encoder's do: an untrained
	// encoder is a random projection of the tf-idf cosine.
	copy(m.P[aeEC], m.P[aeEQ])
	return m
}

// encodeUnits is the code side: word embeddings (plus positions and one
// attention layer with a residual, with o.Attn), summed with idf weights.
// x0 [N·Lu,D] holds the words' vectors, w and mask [N,Lu]; it returns
// the unnormalized [N,D] and what the backward pass needs. The tables stay
// out of the graph: passing two [V,D] tables in each step (and scattering
// their gradients back) cost more than the model.
func (m *attnEnc) encodeUnits(x0, w, mask *G.Node, P []*G.Node) (u, x *G.Node, att *attGraph) {
	N, L := w.Shape().Dimensions[0], w.Shape().Dimensions[1]
	D := m.o.Dim
	x = x0
	h := x
	if m.o.Attn {
		x = G.Add(x, G.Reshape(G.BroadcastToDims(G.InsertAxes(P[aePos], 0), N, L, D), N*L, D))
		var out *G.Node
		out, att = attend(x, mask, P[aeWQ], P[aeWK], P[aeWV], L)
		h = G.Add(x, out)
	}
	u = G.ReduceSum(G.Mul(G.Reshape(h, N, L, D), G.InsertAxes(w, -1)), 1)
	return u, x, att
}

func unitNorm(v *G.Node) *G.Node {
	return G.Div(v, G.Sqrt(G.AddScalar(G.ReduceAndKeep(G.Mul(v, v), G.ReduceSum, -1), 1e-12)))
}

// trainGraph returns the loss and the parameters' gradients.
func (m *attnEnc) trainGraph(in []*G.Node) []*G.Node {
	P := append([]*G.Node{aeEQ: nil, aeEC: nil}, in[aeNumIn:]...)
	B, C := in[aeInCM].Shape().Dimensions[0], in[aeInCM].Shape().Dimensions[1]
	Lq := in[aeInQW].Shape().Dimensions[1]
	D := m.o.Dim
	N, L := B*C, m.o.UnitWords
	g := in[0].Graph()
	qe := G.Reshape(in[aeInQ], B, Lq, D)
	q := G.ReduceSum(G.Mul(qe, G.InsertAxes(in[aeInQW], -1)), 1) // [B,D]
	u, x, att := m.encodeUnits(in[aeInU], in[aeInUW], in[aeInUM], P)
	logits := G.MulScalar(G.ReduceSum(G.Mul(G.InsertAxes(unitNorm(q), 1), G.Reshape(unitNorm(u), B, C, D)), -1), m.o.Temp)
	logits = G.Add(logits, G.MulScalar(G.OneMinus(in[aeInCM]), -1e4))
	mx := G.StopGradient(G.ReduceAndKeep(logits, G.ReduceMax, 1))
	lse := G.Add(G.Log(G.ReduceSum(G.Exp(G.Sub(logits, mx)), 1)), G.Reshape(mx, B))
	oh := make([]float32, C)
	oh[0] = 1
	pos := G.ReduceSum(G.Mul(logits, G.InsertAxes(G.Const(g, oh), 0)), 1)
	loss := G.ReduceMean(G.Sub(lse, pos))
	gr := G.Gradient(loss, q, u)
	dq, du := gr[0], gr[1] // [B,D], [N,D]
	grads := make([]*G.Node, aeNumParams)
	// The tables' gradients stay per word occurrence ([B·Lq,D] and
	// [N·L,D]): a step touches a few thousand of the V rows, and a dense
	// [V,D] gradient (and a dense Adam step over it) cost more than the
	// model itself. scatterRows adds them up by word.
	grads[aeEQ] = G.Reshape(G.Mul(G.InsertAxes(dq, 1), G.InsertAxes(in[aeInQW], -1)), B*Lq, D)
	// u = Σ_l w_l·h_l: dh_l = w_l·du.
	dh := G.Reshape(G.Mul(G.InsertAxes(du, 1), G.InsertAxes(in[aeInUW], -1)), N*L, D)
	dx := dh
	if att != nil {
		var dxa *G.Node
		grads[aeWQ], grads[aeWK], grads[aeWV], dxa = att.backward(dh, x, P[aeWQ], P[aeWK], P[aeWV])
		dx = G.Add(dx, dxa)
		grads[aePos] = G.ReduceSum(G.Reshape(dx, N, L, D), 0)
	} else {
		grads[aePos] = G.ZerosLike(P[aePos])
		grads[aeWQ], grads[aeWK], grads[aeWV] = G.ZerosLike(P[aeWQ]), G.ZerosLike(P[aeWK]), G.ZerosLike(P[aeWV])
	}
	grads[aeEC] = dx
	return append([]*G.Node{loss}, grads...)
}

// encodeGraph returns the unit vectors of a batch of units.
func (m *attnEnc) encodeGraph(in []*G.Node) *G.Node {
	u, _, _ := m.encodeUnits(in[0], in[1], in[2], append([]*G.Node{aeEQ: nil, aeEC: nil}, in[3:]...))
	return unitNorm(u)
}

// params returns the graph's parameters: the tables are gathered in Go.
func (m *attnEnc) params() []any {
	var out []any
	for k := aePos; k < aeNumParams; k++ {
		out = append(out, tensors.FromFlatDataAndDimensions(m.P[k], m.dim[k]...))
	}
	return out
}

// rows gathers the rows ids of table k as an [len(ids),D] tensor.
func (m *attnEnc) rows(k int, ids []int32) *tensors.Tensor {
	D := m.o.Dim
	out := make([]float32, len(ids)*D)
	for i, id := range ids {
		copy(out[i*D:(i+1)*D], m.P[k][int(id)*D:int(id+1)*D])
	}
	return tensors.FromFlatDataAndDimensions(out, len(ids), D)
}

// stepArgs returns the training graph's inputs for a batch: B queries of
// QueryWords word ids (qIDs, idf qW) and B·Cands units (uIDs, uW, uM from
// unitInputs) with their candidate mask cm [B·Cands].
func (m *attnEnc) stepArgs(qIDs []int32, qW []float32, uIDs []int32, uW, uM, cm []float32) []any {
	C, Lq, L := m.o.Cands, m.o.QueryWords, m.o.UnitWords
	B := len(qIDs) / Lq
	args := []any{
		m.rows(aeEQ, qIDs), tensors.FromFlatDataAndDimensions(qW, B, Lq),
		m.rows(aeEC, uIDs), tensors.FromFlatDataAndDimensions(uW, B*C, L),
		tensors.FromFlatDataAndDimensions(uM, B*C, L), tensors.FromFlatDataAndDimensions(cm, B, C),
	}
	return append(args, m.params()...)
}

// unitInputs packs units (word id lists) into ids [N·L] (their vectors are
// gathered by rows), idf weights and masks [N,L]; a nil unit is padding.
func (m *attnEnc) unitInputs(units [][]int32, N int) (ids []int32, w, mask []float32) {
	L := m.o.UnitWords
	ids, w, mask = make([]int32, N*L), make([]float32, N*L), make([]float32, N*L)
	for n, u := range units {
		for l, id := range u[:min(len(u), L)] {
			ids[n*L+l], w[n*L+l], mask[n*L+l] = id, m.idf[id], 1
		}
	}
	return
}

// TrainAttnEncoder trains the experiment's encoder on d's train pairs with
// Adam and reports the held-out pairs' ranking after each epoch, with the
// same protocol as TrainPairEncoder's (evalRank).
func TrainAttnEncoder(ctx context.Context, d *PairData, o AttnEncoderOptions, backend backends.Backend, logf func(string, ...any)) (*linemodel.AttnEncoder, EncoderEval, error) {
	m, ev, err := trainAttnEnc(ctx, d, o, backend, logf)
	if err != nil {
		return nil, ev, err
	}
	e, err := m.encoder(d.Words)
	return e, ev, err
}

// encoder returns the trained model in the library's form (int8 tables).
// The bag (Attn false) never read its positions and attention weights: it
// is written with them zero, which makes the library's forward pass the
// bag's.
func (m *attnEnc) encoder(words []string) (*linemodel.AttnEncoder, error) {
	extra := [][]float32{m.P[aePos], m.P[aeWQ], m.P[aeWK], m.P[aeWV]}
	if !m.o.Attn {
		for k, p := range extra {
			extra[k] = make([]float32, len(p))
		}
	}
	return linemodel.NewAttnEncoder(words, m.idf, m.P[aeEQ], m.P[aeEC], extra[0], extra[1], extra[2], extra[3], m.o.Dim, m.o.UnitWords)
}

func trainAttnEnc(ctx context.Context, d *PairData, o AttnEncoderOptions, backend backends.Backend, logf func(string, ...any)) (*attnEnc, EncoderEval, error) {
	m := newAttnEnc(len(d.Words), d.IDF, o)
	logf("attention encoder: tf-idf cosine: held-out %s", evalTFIDF(d))
	exec, err := G.NewExec(backend, func(in []*G.Node) []*G.Node { return m.trainGraph(in) })
	if err != nil {
		return nil, EncoderEval{}, err
	}
	enc, err := G.NewExec(backend, func(in []*G.Node) []*G.Node { return []*G.Node{m.encodeGraph(in)} })
	if err != nil {
		return nil, EncoderEval{}, err
	}
	type ref struct{ f, p int }
	var pairs []ref
	for fi, f := range d.train {
		for pi := range f.pairs {
			pairs = append(pairs, ref{fi, pi})
		}
	}
	B, C, Lq := o.Batch, o.Cands, o.QueryWords
	opt := make([]adam, len(m.P))
	for k, p := range m.P {
		opt[k] = adam{make([]float32, len(p)), make([]float32, len(p))}
	}
	sums := make([]*rowSum, len(m.P))
	sums[aeEQ], sums[aeEC] = newRowSum(m.V, o.Dim), newRowSum(m.V, o.Dim)
	rng := rand.New(rand.NewPCG(o.Seed, 12))
	steps := o.Epochs * (len(pairs) / B)
	step := 0
	var last EncoderEval
	for ep := 0; ep < o.Epochs; ep++ {
		rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		lossSum, nLoss := 0.0, 0
		for b0 := 0; b0+B <= len(pairs); b0 += B {
			if err := ctx.Err(); err != nil {
				return m, last, err
			}
			qIDs, qW := make([]int32, B*Lq), make([]float32, B*Lq)
			cm := make([]float32, B*C)
			units := make([][]int32, B*C)
			for bi, r := range pairs[b0 : b0+B] {
				f := &d.train[r.f]
				p := f.pairs[r.p]
				for l, id := range p.q[:min(len(p.q), Lq)] {
					qIDs[bi*Lq+l], qW[bi*Lq+l] = id, d.IDF[id]
				}
				units[bi*C], cm[bi*C] = f.units[p.unit], 1
				// The other units of the file, at random.
				others := rng.Perm(len(f.units))
				c := 1
				for _, u := range others {
					if c == C {
						break
					}
					if int32(u) == p.unit || len(f.units[u]) == 0 {
						continue
					}
					units[bi*C+c], cm[bi*C+c] = f.units[u], 1
					c++
				}
			}
			uIDs, uW, uM := m.unitInputs(units, B*C)
			outs, err := exec.Exec(m.stepArgs(qIDs, qW, uIDs, uW, uM, cm)...)
			if err != nil {
				return m, last, err
			}
			loss := float64(tensors.MustCopyFlatData[float32](outs[0])[0])
			if math.IsNaN(loss) {
				return m, last, fmt.Errorf("attention encoder: step %d: loss is NaN", step)
			}
			lossSum += loss
			nLoss++
			step++
			c1, c2 := 1-math.Pow(adamB1, float64(step)), 1-math.Pow(adamB2, float64(step))
			lr := o.LR * (1 - 0.9*float64(step-1)/float64(max(steps, 1)))
			sums[aeEQ].add(qIDs, qW, tensors.MustCopyFlatData[float32](outs[1+aeEQ]))
			sums[aeEC].add(uIDs, uM, tensors.MustCopyFlatData[float32](outs[1+aeEC]))
			for k, p := range m.P {
				if r := sums[k]; r != nil {
					opt[k].rows(p, r, lr, c1, c2)
					r.reset()
					continue
				}
				opt[k].step(p, 0, tensors.MustCopyFlatData[float32](outs[1+k]), lr, c1, c2)
			}
			for _, t := range outs {
				t.FinalizeAll()
			}
			if step%200 == 0 {
				logf("attention encoder: epoch %d step %d/%d loss %.4f", ep+1, step, steps, lossSum/float64(nLoss))
				lossSum, nLoss = 0, 0
			}
		}
		last = m.eval(enc, d)
		logf("attention encoder (attn %v, width %d, %d train pairs): epoch %d held-out %s", o.Attn, o.Dim, d.TrainPairs, ep+1, last)
	}
	return m, last, nil
}

// eval ranks the held-out pairs as evalEncoder does.
func (m *attnEnc) eval(enc *G.Exec, d *PairData) EncoderEval {
	D, L := m.o.Dim, m.o.UnitWords
	const NB = 256
	return evalRank(d.val, func(f *encFile, cands []int32) func(p encPair) []float32 {
		vecs := make([]float32, len(cands)*D)
		for c0 := 0; c0 < len(cands); c0 += NB {
			units := make([][]int32, NB)
			for j := c0; j < min(c0+NB, len(cands)); j++ {
				units[j-c0] = f.units[cands[j]]
			}
			ids, w, mask := m.unitInputs(units, NB)
			args := []any{m.rows(aeEC, ids), tensors.FromFlatDataAndDimensions(w, NB, L), tensors.FromFlatDataAndDimensions(mask, NB, L)}
			out := enc.MustExec(append(args, m.params()...)...)[0]
			v := tensors.MustCopyFlatData[float32](out)
			out.FinalizeAll()
			copy(vecs[c0*D:], v[:(min(c0+NB, len(cands))-c0)*D])
		}
		return func(p encPair) []float32 {
			q := make([]float32, D)
			for _, id := range p.q {
				row := m.P[aeEQ][int(id)*D : int(id+1)*D]
				for t := range q {
					q[t] += m.idf[id] * row[t]
				}
			}
			out := make([]float32, len(cands))
			for j := range cands {
				out[j] = dot(q, vecs[j*D:(j+1)*D])
			}
			return out
		}
	})
}

// rowSum adds up per-occurrence gradients of a [V,D] table by row: rows
// lists the rows touched in first-seen order, and sum[i*D:(i+1)*D] is the
// gradient of rows[i]. slot maps a row to its index while a step lasts
// and is reset by reset, so a step costs what it touches, not V·D.
type rowSum struct {
	D    int
	slot []int32
	rows []int32
	sum  []float32
}

func newRowSum(V, D int) *rowSum {
	r := &rowSum{D: D, slot: make([]int32, V)}
	for i := range r.slot {
		r.slot[i] = -1
	}
	return r
}

// add adds the gradient g ([len(ids)·D]) of the occurrences ids; an
// occurrence with weight 0 (padding) is skipped.
func (r *rowSum) add(ids []int32, weight []float32, g []float32) {
	D := r.D
	for t, id := range ids {
		if weight[t] == 0 {
			continue
		}
		s := r.slot[id]
		if s < 0 {
			s = int32(len(r.rows))
			r.slot[id] = s
			r.rows = append(r.rows, id)
			r.sum = append(r.sum, make([]float32, D)...)
		}
		dst := r.sum[int(s)*D : int(s+1)*D]
		for j, v := range g[t*D : (t+1)*D] {
			dst[j] += v
		}
	}
}

func (r *rowSum) reset() {
	for _, id := range r.rows {
		r.slot[id] = -1
	}
	r.rows, r.sum = r.rows[:0], r.sum[:0]
}

// dense returns the sum as a [V,D] table (for tests).
func (r *rowSum) dense(V int) []float32 {
	out := make([]float32, V*r.D)
	for i, id := range r.rows {
		copy(out[int(id)*r.D:], r.sum[i*r.D:(i+1)*r.D])
	}
	return out
}

// adam is Adam with bias correction. Tables are updated lazily (only the
// rows a step touched, as TensorFlow's LazyAdam does): a dense update of
// both [V,D] tables each step was most of a step's time.
type adam struct {
	m1, m2 []float32
}

const adamB1, adamB2, adamEps = 0.9, 0.999, 1e-8

// step updates p[off:off+len(g)] by its gradient g.
func (a *adam) step(p []float32, off int, g []float32, lr, c1, c2 float64) {
	m1, m2, p := a.m1[off:off+len(g)], a.m2[off:off+len(g)], p[off:off+len(g)]
	for i, gi := range g {
		m1[i] = adamB1*m1[i] + (1-adamB1)*gi
		m2[i] = adamB2*m2[i] + (1-adamB2)*gi*gi
		p[i] -= float32(lr * (float64(m1[i]) / c1) / (math.Sqrt(float64(m2[i])/c2) + adamEps))
	}
}

// rows updates the rows r touched.
func (a *adam) rows(p []float32, r *rowSum, lr, c1, c2 float64) {
	for i, id := range r.rows {
		a.step(p, int(id)*r.D, r.sum[i*r.D:(i+1)*r.D], lr, c1, c2)
	}
}

// EvalAttnEncoder ranks d's held-out pairs with a trained encoder as the
// library runs it (int8 tables, linemodel.UnitEncoder), by
// TrainAttnEncoder's protocol: a query reads its first queryWords words.
// d must have been loaded with the vocabulary e was trained on.
func EvalAttnEncoder(d *PairData, e *linemodel.AttnEncoder, queryWords int) (EncoderEval, error) {
	if !slices.Equal(d.Words, e.Words) {
		return EncoderEval{}, fmt.Errorf("attention encoder: its %d words are not the pairs' %d", len(e.Words), len(d.Words))
	}
	D := e.Dim
	ue := e.NewUnitEncoder()
	return evalRank(d.val, func(f *encFile, cands []int32) func(p encPair) []float32 {
		vecs := make([]float32, len(cands)*D)
		for j, c := range cands {
			v := vecs[j*D : (j+1)*D]
			ue.Encode(v, f.units[c])
			linemodel.Normalize(v)
		}
		return func(p encPair) []float32 {
			q := make([]float32, D)
			for _, id := range p.q[:min(len(p.q), queryWords)] {
				e.AddQuery(q, id)
			}
			out := make([]float32, len(cands))
			for j := range cands {
				out[j] = dot(q, vecs[j*D:(j+1)*D])
			}
			return out
		}
	}), nil
}
