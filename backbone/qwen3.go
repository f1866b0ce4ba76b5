package backbone

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Weight returns the variable `name` in ctx's scope as a float32 node of g,
// requiring the given shape. A variable stored as bfloat16 (as loaders keep
// a bfloat16 checkpoint's matrices, at half the memory) is converted in the
// graph, exactly; backends may fuse the conversion into the product that
// reads it. With ctx.Reuse() set (as the loaders do), a misspelled or
// missing weight panics while the graph is built, naming the scope; callers
// recover at the API boundary.
func Weight(ctx *context.Context, g *Graph, name string, dims ...int) *Node {
	if v := stored(ctx, g, name, dims); v != nil {
		return ConvertDType(v, dtypes.Float32)
	}
	return ctx.VariableWithShape(name, shapes.Make(dtypes.Float32, dims...)).ValueGraph(g)
}

// stored returns the variable `name` as stored when it is bfloat16 (nil
// otherwise), checking its dimensions.
func stored(ctx *context.Context, g *Graph, name string, dims []int) *Node {
	v := ctx.GetVariable(name)
	if v == nil || v.Shape().DType != dtypes.BFloat16 {
		return nil
	}
	if want := shapes.Make(dtypes.BFloat16, dims...); !v.Shape().Equal(want) {
		panicf("backbone: variable %s/%s has shape %s, want %s", ctx.Scope(), name, v.Shape(), want)
	}
	return v.ValueGraph(g)
}

// EmbeddingRows gathers rows of the [vocab, hidden] table `name` in ctx's
// scope at indices (as Gather takes them) as float32. A bfloat16 table is
// gathered first and only the gathered rows are converted.
func EmbeddingRows(ctx *context.Context, g *Graph, name string, vocab, hidden int, indices *Node) *Node {
	if v := stored(ctx, g, name, []int{vocab, hidden}); v != nil {
		return ConvertDType(Gather(v, indices), dtypes.Float32)
	}
	return Gather(Weight(ctx, g, name, vocab, hidden), indices)
}

// Linear applies x·Wᵀ (+ b when bias is true) with PyTorch's [out, in] weight
// layout, read from ctx's "weight" (and "bias") variables.
func Linear(ctx *context.Context, x *Node, in, out int, bias bool) *Node {
	var y *Node
	if BF16Products(ctx) {
		w := weightBF16(ctx, x.Graph(), "weight", out, in)
		y = dotBF16(ConvertDType(x, dtypes.BFloat16), []int{x.Rank() - 1}, w, []int{1})
	} else {
		w := Weight(ctx, x.Graph(), "weight", out, in)
		y = DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{1}, nil)
	}
	if bias {
		y = Add(y, ExpandLeftToRank(Weight(ctx, x.Graph(), "bias", out), y.Rank()))
	}
	return y
}

// RMSNorm normalises the last axis as HF Qwen3 does: w · x · rsqrt(mean(x²)+eps).
func RMSNorm(ctx *context.Context, x *Node, eps float64) *Node {
	dim := x.Shape().Dimensions[x.Rank()-1]
	w := Weight(ctx, x.Graph(), "weight", dim)
	variance := ReduceAndKeep(Square(x), ReduceMean, -1)
	normed := Mul(x, Rsqrt(AddScalar(variance, eps)))
	return Mul(normed, ExpandLeftToRank(w, x.Rank()))
}

// InvFreq returns HF's float32 rotary inverse frequencies, rounded twice as
// transformers does (1 / float32(θ^float32(2i/d))), so angles match the
// reference bit for bit at long positions.
func InvFreq(theta float64, headDim int) []float32 {
	inv := make([]float32, headDim/2)
	for i := range inv {
		exp := float32(2*i) / float32(headDim)
		p := float32(math.Pow(float64(float32(theta)), float64(exp)))
		inv[i] = 1 / p
	}
	return inv
}

// RotaryTables returns cos and sin tables of shape [seqLen, headDim] in the
// rotate_half layout (the frequency block repeated twice). Angles are float32
// products as in HF; cos and sin are evaluated in float64 and rounded.
func RotaryTables(theta float64, headDim, seqLen int) (cos, sin []float32) {
	inv := InvFreq(theta, headDim)
	half := headDim / 2
	cos = make([]float32, seqLen*headDim)
	sin = make([]float32, seqLen*headDim)
	for p := 0; p < seqLen; p++ {
		for i := 0; i < half; i++ {
			angle := float64(float32(p) * inv[i])
			c, s := float32(math.Cos(angle)), float32(math.Sin(angle))
			row := p * headDim
			cos[row+i], cos[row+half+i] = c, c
			sin[row+i], sin[row+half+i] = s, s
		}
	}
	return cos, sin
}

// applyRotary rotates x [B,S,heads,D] with tables cos, sin [S,D].
func applyRotary(x, cos, sin *Node) *Node {
	d := x.Shape().Dimensions[3]
	x1 := Slice(x, AxisRange(), AxisRange(), AxisRange(), AxisRange(0, d/2))
	x2 := Slice(x, AxisRange(), AxisRange(), AxisRange(), AxisRange(d/2, d))
	rotated := Concatenate([]*Node{Neg(x2), x1}, 3)
	c := InsertAxes(cos, 0, 1) // [1,S,1,D]
	s := InsertAxes(sin, 0, 1)
	c = Reshape(c, 1, cos.Shape().Dimensions[0], 1, d)
	s = Reshape(s, 1, sin.Shape().Dimensions[0], 1, d)
	return Add(Mul(x, c), Mul(rotated, s))
}

// Tables holds per-sequence-length constants the decoder needs.
type Tables struct {
	Cos, Sin *Node // [S, head_dim]
}

// NewTables builds the rotary tables for sequence length seqLen as graph constants.
func NewTables(g *Graph, cfg Config, seqLen int) Tables {
	cos, sin := RotaryTables(cfg.RopeTheta, cfg.HeadDim, seqLen)
	// ConstTensor: Const would inspect a Go slice element by element.
	return Tables{
		Cos: ConstTensor(g, tensors.FromFlatDataAndDimensions(cos, seqLen, cfg.HeadDim)),
		Sin: ConstTensor(g, tensors.FromFlatDataAndDimensions(sin, seqLen, cfg.HeadDim)),
	}
}

// Forward runs the Qwen3 decoder over token ids [B,S] (right-padded; the
// causal mask keeps pads from influencing real positions) and returns the
// hidden states at the requested indices of HF's `hidden_states` tuple: index
// 0 is the embedding output, i in 1..L-1 the raw output of layer i-1, and L
// the final-normed output (= last_hidden_state). ctx must be scoped at the
// backbone (e.g. "model/backbone"); weights live in sub-scopes named after the
// checkpoint tensors (embed_tokens, layers/{i}/self_attn/q_proj, ...).
func Forward(ctx *context.Context, cfg Config, ids *Node, capture ...int) []*Node {
	g := ids.Graph()
	if ids.Rank() != 2 {
		panicf("backbone.Forward: ids must be [batch, seq], got %s", ids.Shape())
	}
	batch, seqLen := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	for _, c := range capture {
		if c < 0 || c > cfg.NumLayers {
			panicf("backbone.Forward: hidden state index %d out of range [0,%d]", c, cfg.NumLayers)
		}
	}
	want := make(map[int]*Node, len(capture))
	for _, c := range capture {
		want[c] = nil
	}
	tables := NewTables(g, cfg, seqLen)
	causal := causalMask(g, seqLen)

	x := EmbeddingRows(ctx.In("embed_tokens"), g, "weight", cfg.VocabSize, cfg.HiddenSize, Reshape(ids, batch, seqLen, 1))
	if _, ok := want[0]; ok {
		want[0] = x
	}
	layers := ctx.In("layers")
	for i := 0; i < cfg.NumLayers; i++ {
		x = decoderLayer(layers.In(fmt.Sprint(i)), cfg, x, tables, causal)
		if i == cfg.NumLayers-1 {
			x = RMSNorm(ctx.In("norm"), x, cfg.RMSNormEps)
		}
		if _, ok := want[i+1]; ok {
			want[i+1] = x
		}
	}
	out := make([]*Node, len(capture))
	for j, c := range capture {
		out[j] = want[c]
	}
	return out
}

// causalMask is true where query position q may attend key position s (s ≤ q).
// It is a constant built in Go: comparing two [S,S] Iotas would make a
// backend that evaluates constants (fastgo, simplego) materialise 8 bytes
// per entry of intermediates, 512 MB at S = 8192, for a 64 MB mask.
func causalMask(g *Graph, seqLen int) *Node {
	mask := make([]bool, seqLen*seqLen)
	for q := 0; q < seqLen; q++ {
		row := mask[q*seqLen : (q+1)*seqLen]
		for s := 0; s <= q; s++ {
			row[s] = true
		}
	}
	return ConstTensor(g, tensors.FromFlatDataAndDimensions(mask, seqLen, seqLen))
}

func decoderLayer(ctx *context.Context, cfg Config, x *Node, t Tables, causal *Node) *Node {
	h := RMSNorm(ctx.In("input_layernorm"), x, cfg.RMSNormEps)
	x = Add(x, selfAttention(ctx.In("self_attn"), cfg, h, t, causal))
	h = RMSNorm(ctx.In("post_attention_layernorm"), x, cfg.RMSNormEps)
	mlp := ctx.In("mlp")
	gate := Linear(mlp.In("gate_proj"), h, cfg.HiddenSize, cfg.IntermediateSize, false)
	up := Linear(mlp.In("up_proj"), h, cfg.HiddenSize, cfg.IntermediateSize, false)
	act := Mul(Mul(gate, Sigmoid(gate)), up)
	return Add(x, Linear(mlp.In("down_proj"), act, cfg.IntermediateSize, cfg.HiddenSize, false))
}

// causalAttention attends queries qg [b,q,kv,group,d] to keys and values
// [b,s,kv,d] (positions q are the last q of the s) under the [q,s] mask and
// returns [b,q,kv,group,d].
func causalAttention(ctx *context.Context, qg, k, v, causal *Node) *Node {
	dims := qg.Shape().Dimensions
	b, nq, hkv, group, d := dims[0], dims[1], dims[2], dims[3], dims[4]
	s := k.Shape().Dimensions[1]
	scores := einsum(ctx, "bqkgd,bskd->bkgqs", qg, k) // [b,kv,group,q,s]
	scores = MulScalar(scores, 1/math.Sqrt(float64(d)))
	mask := BroadcastToDims(Reshape(causal, 1, 1, 1, nq, s), b, hkv, group, nq, s)
	scores = Where(mask, scores, Infinity(qg.Graph(), dtypes.Float32, -1))
	probs := Softmax(scores, -1)
	return einsum(ctx, "bkgqs,bskd->bqkgd", probs, v) // [b,q,kv,group,d]
}

// causalBlocks is causalAttention over blocks of blk queries, each against
// only the keys up to its last position: the masked-out triangle above the
// blocks is never computed (at 8 blocks, 56% of the products and of the
// score memory). The skipped keys carry probability exactly 0, so results
// equal causalAttention's up to the order of float32 sums.
func causalBlocks(ctx *context.Context, qg, k, v, causal *Node, blk int) *Node {
	s := qg.Shape().Dimensions[1]
	var parts []*Node
	for lo := 0; lo < s; lo += blk {
		hi := min(lo+blk, s)
		q := Slice(qg, AxisRange(), AxisRange(lo, hi))
		kk := Slice(k, AxisRange(), AxisRange(0, hi))
		vv := Slice(v, AxisRange(), AxisRange(0, hi))
		m := Slice(causal, AxisRange(lo, hi), AxisRange(0, hi))
		parts = append(parts, causalAttention(ctx, q, kk, vv, m))
	}
	return Concatenate(parts, 1)
}

func selfAttention(ctx *context.Context, cfg Config, h *Node, t Tables, causal *Node) *Node {
	dims := h.Shape().Dimensions
	b, s := dims[0], dims[1]
	hq, hkv, d := cfg.NumHeads, cfg.NumKVHeads, cfg.HeadDim
	group := hq / hkv
	q := Reshape(Linear(ctx.In("q_proj"), h, cfg.HiddenSize, hq*d, false), b, s, hq, d)
	k := Reshape(Linear(ctx.In("k_proj"), h, cfg.HiddenSize, hkv*d, false), b, s, hkv, d)
	v := Reshape(Linear(ctx.In("v_proj"), h, cfg.HiddenSize, hkv*d, false), b, s, hkv, d)
	q = applyRotary(RMSNorm(ctx.In("q_norm"), q, cfg.RMSNormEps), t.Cos, t.Sin)
	k = applyRotary(RMSNorm(ctx.In("k_norm"), k, cfg.RMSNormEps), t.Cos, t.Sin)

	// Query head j uses kv head j/group: grouping q as [b,s,kv,group,d] avoids
	// materialising repeated K and V.
	qg := Reshape(q, b, s, hkv, group, d)
	var attn *Node
	if blk := QueryBlock(ctx); blk > 0 && blk < s {
		attn = causalBlocks(ctx, qg, k, v, causal, blk)
	} else {
		attn = causalAttention(ctx, qg, k, v, causal)
	}
	attn = Reshape(attn, b, s, hq*d)
	return Linear(ctx.In("o_proj"), attn, hq*d, cfg.HiddenSize, false)
}
