package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
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
	aeInQ  = iota // [B,Lq,1] int32 query word ids
	aeInQW        // [B,Lq] their idf (0 = padding)
	aeInU         // [B·C·Lu,1] int32 unit word ids
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
// ids [N·Lu,1], w and mask [N,Lu]; it returns the unnormalized [N,D] and
// what the backward pass needs.
func (m *attnEnc) encodeUnits(ids, w, mask *G.Node, P []*G.Node) (u, x *G.Node, att *attGraph) {
	N, L := w.Shape().Dimensions[0], w.Shape().Dimensions[1]
	D := m.o.Dim
	x = G.Gather(P[aeEC], ids) // [N·L,D]
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
	P := in[aeNumIn:]
	B, C := in[aeInCM].Shape().Dimensions[0], in[aeInCM].Shape().Dimensions[1]
	Lq := in[aeInQW].Shape().Dimensions[1]
	D := m.o.Dim
	N, L := B*C, m.o.UnitWords
	g := in[0].Graph()
	qe := G.Reshape(G.Gather(P[aeEQ], G.Reshape(in[aeInQ], B*Lq, 1)), B, Lq, D)
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
	zeros := G.Zeros(g, shapes.Make(f32, m.V, D))
	grads[aeEQ] = G.ScatterSum(zeros, in[aeInQ], G.Mul(G.InsertAxes(dq, 1), G.InsertAxes(in[aeInQW], -1)), false, false)
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
	grads[aeEC] = G.ScatterSum(zeros, in[aeInU], dx, false, false)
	return append([]*G.Node{loss}, grads...)
}

// encodeGraph returns the unit vectors of a batch of units.
func (m *attnEnc) encodeGraph(in []*G.Node) *G.Node {
	u, _, _ := m.encodeUnits(in[0], in[1], in[2], in[3:])
	return unitNorm(u)
}

func (m *attnEnc) params() []any {
	out := make([]any, len(m.P))
	for k, p := range m.P {
		out[k] = tensors.FromFlatDataAndDimensions(p, m.dim[k]...)
	}
	return out
}

// unitInputs packs units (word id lists) into ids [N·L,1], idf weights and
// masks [N,L]; a nil unit is padding.
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
func TrainAttnEncoder(ctx context.Context, d *PairData, o AttnEncoderOptions, backend backends.Backend, logf func(string, ...any)) (EncoderEval, error) {
	m := newAttnEnc(len(d.Words), d.IDF, o)
	logf("attention encoder: tf-idf cosine: held-out %s", evalTFIDF(d))
	exec, err := G.NewExec(backend, func(in []*G.Node) []*G.Node { return m.trainGraph(in) })
	if err != nil {
		return EncoderEval{}, err
	}
	enc, err := G.NewExec(backend, func(in []*G.Node) []*G.Node { return []*G.Node{m.encodeGraph(in)} })
	if err != nil {
		return EncoderEval{}, err
	}
	type ref struct{ f, p int }
	var pairs []ref
	for fi, f := range d.train {
		for pi := range f.pairs {
			pairs = append(pairs, ref{fi, pi})
		}
	}
	B, C, Lq, L := o.Batch, o.Cands, o.QueryWords, o.UnitWords
	m1 := make([][]float32, len(m.P))
	m2 := make([][]float32, len(m.P))
	for k, p := range m.P {
		m1[k], m2[k] = make([]float32, len(p)), make([]float32, len(p))
	}
	rng := rand.New(rand.NewPCG(o.Seed, 12))
	steps := o.Epochs * (len(pairs) / B)
	step := 0
	var last EncoderEval
	for ep := 0; ep < o.Epochs; ep++ {
		rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		lossSum, nLoss := 0.0, 0
		for b0 := 0; b0+B <= len(pairs); b0 += B {
			if err := ctx.Err(); err != nil {
				return last, err
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
			args := []any{
				tensors.FromFlatDataAndDimensions(qIDs, B, Lq, 1), tensors.FromFlatDataAndDimensions(qW, B, Lq),
				tensors.FromFlatDataAndDimensions(uIDs, B*C*L, 1), tensors.FromFlatDataAndDimensions(uW, B*C, L),
				tensors.FromFlatDataAndDimensions(uM, B*C, L), tensors.FromFlatDataAndDimensions(cm, B, C),
			}
			outs, err := exec.Exec(append(args, m.params()...)...)
			if err != nil {
				return last, err
			}
			loss := float64(tensors.MustCopyFlatData[float32](outs[0])[0])
			if math.IsNaN(loss) {
				return last, fmt.Errorf("attention encoder: step %d: loss is NaN", step)
			}
			lossSum += loss
			nLoss++
			step++
			const b1, b2, eps = 0.9, 0.999, 1e-8
			c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
			lr := o.LR * (1 - 0.9*float64(step-1)/float64(max(steps, 1)))
			for k, p := range m.P {
				gk := tensors.MustCopyFlatData[float32](outs[1+k])
				a, s := m1[k], m2[k]
				for i, gi := range gk {
					a[i] = b1*a[i] + (1-b1)*gi
					s[i] = b2*s[i] + (1-b2)*gi*gi
					p[i] -= float32(lr * (float64(a[i]) / c1) / (math.Sqrt(float64(s[i])/c2) + eps))
				}
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
	return last, nil
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
			args := []any{tensors.FromFlatDataAndDimensions(ids, NB*L, 1), tensors.FromFlatDataAndDimensions(w, NB, L), tensors.FromFlatDataAndDimensions(mask, NB, L)}
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
