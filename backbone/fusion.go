package backbone

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// LayerNormEps is torch.nn.LayerNorm's default epsilon, used by every
// LayerNorm of the SWE-Pruner head.
const LayerNormEps = 1e-5

// LayerNorm normalises the last axis with torch.nn.LayerNorm semantics (biased
// variance, eps inside the square root) and the "weight"/"bias" variables of ctx.
func LayerNorm(ctx *context.Context, x *Node, eps float64) *Node {
	dim := x.Shape().Dimensions[x.Rank()-1]
	g := x.Graph()
	mean := ReduceAndKeep(x, ReduceMean, -1)
	centred := Sub(x, mean)
	variance := ReduceAndKeep(Square(centred), ReduceMean, -1)
	normed := Div(centred, Sqrt(AddScalar(variance, eps)))
	w := ExpandLeftToRank(Weight(ctx, g, "weight", dim), x.Rank())
	b := ExpandLeftToRank(Weight(ctx, g, "bias", dim), x.Rank())
	return Add(Mul(normed, w), b)
}

// Fusion concatenates the captured hidden states along the feature axis and
// runs SWE-Pruner's fusion blocks over them: for each block i, a
// torch.nn.MultiheadAttention (scope fusion_layers/{i}: packed in_proj_weight
// and in_proj_bias, out_proj) without causal mask, residual, then
// fusion_norms/{i} LayerNorm. validMask [B,S] (bool) marks real tokens so pads
// are never attended to. ctx is scoped at the model root ("model").
func Fusion(ctx *context.Context, hidden []*Node, validMask *Node, numHeads, numLayers int) *Node {
	x := Concatenate(hidden, -1)
	e := x.Shape().Dimensions[2]
	if numHeads <= 0 || e%numHeads != 0 {
		panicf("fusion: feature size %d is not divisible by num_heads %d", e, numHeads)
	}
	for i := 0; i < numLayers; i++ {
		attn := multiHeadAttention(ctx.In("fusion_layers").In(fmt.Sprint(i)), x, validMask, numHeads)
		x = LayerNorm(ctx.In("fusion_norms").In(fmt.Sprint(i)), Add(attn, x), LayerNormEps)
	}
	return x
}

// multiHeadAttention reproduces torch.nn.MultiheadAttention(x, x, x) in eval
// mode with a key padding mask.
func multiHeadAttention(ctx *context.Context, x, validMask *Node, numHeads int) *Node {
	g := x.Graph()
	dims := x.Shape().Dimensions
	b, s, e := dims[0], dims[1], dims[2]
	hd := e / numHeads
	bias := Weight(ctx, g, "in_proj_bias", 3*e)
	var qkv *Node
	if BF16Products(ctx) {
		qkv = dotBF16(ConvertDType(x, dtypes.BFloat16), []int{2}, weightBF16(ctx, g, "in_proj_weight", 3*e, e), []int{1})
	} else {
		qkv = DotGeneral(x, []int{2}, nil, Weight(ctx, g, "in_proj_weight", 3*e, e), []int{1}, nil)
	}
	qkv = Add(qkv, ExpandLeftToRank(bias, 3)) // [b,s,3e]
	split := func(i int) *Node {
		part := Slice(qkv, AxisRange(), AxisRange(), AxisRange(i*e, (i+1)*e))
		return Reshape(part, b, s, numHeads, hd)
	}
	q, k, v := split(0), split(1), split(2)
	scores := einsum(ctx, "bqhd,bkhd->bhqk", q, k)
	scores = MulScalar(scores, 1/math.Sqrt(float64(hd)))
	mask := BroadcastToDims(Reshape(validMask, b, 1, 1, s), b, numHeads, s, s)
	scores = Where(mask, scores, Infinity(g, dtypes.Float32, -1))
	probs := Softmax(scores, -1)
	attn := Reshape(einsum(ctx, "bhqk,bkhd->bqhd", probs, v), b, s, e)
	return Linear(ctx.In("out_proj"), attn, e, e, true)
}

// Token ids of "yes" and "no" in the Qwen3 vocabulary; the document score is
// read from their embedding rows (tied LM head).
const (
	TokenYes = 9693
	TokenNo  = 2152
)

// DocLogits returns [B,2] = (l_yes, l_no): the final hidden state of each
// row's last real token (index lastIdx [B] int32) dotted with the tied
// embedding rows of "yes" and "no". ctx is scoped at the backbone.
func DocLogits(ctx *context.Context, cfg Config, last, lastIdx *Node) *Node {
	g := last.Graph()
	s := last.Shape().Dimensions[1]
	// A one-hot contraction picks each row's last token exactly (1·z + Σ 0·x).
	pick := OneHot(lastIdx, s, dtypes.Float32) // [b,s]
	z := Einsum("bs,bsh->bh", pick, last)
	rows := EmbeddingRows(ctx.In("embed_tokens"), g, "weight", cfg.VocabSize, cfg.HiddenSize,
		Const(g, [][]int32{{TokenYes}, {TokenNo}})) // [2,h]
	return DotGeneral(z, []int{1}, nil, rows, []int{1}, nil)
}
