package crf

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/prunekit/pruner/backbone"
)

// GELU is the exact (erf) GELU of torch.nn.GELU().
func GELU(x *Node) *Node {
	return Mul(MulScalar(x, 0.5), OnePlus(Erf(MulScalar(x, 1/math.Sqrt2))))
}

// mlp is the head shape shared by the emission head and the gating network:
// Sequential(LayerNorm, Linear, GELU, Dropout, Linear) with tensors at
// indices 0, 1 and 4.
func mlp(ctx *context.Context, x *Node, bottleneck, out int) *Node {
	in := x.Shape().Dimensions[x.Rank()-1]
	h := backbone.LayerNorm(ctx.In("0"), x, backbone.LayerNormEps)
	h = GELU(backbone.Linear(ctx.In("1"), h, in, bottleneck, true))
	return backbone.Linear(ctx.In("4"), h, bottleneck, out, true)
}

// EmissionHead computes the per-token CRF emissions of K rubrics from fused
// features x [B,S,E]: [B,S,K,2], where [...,k,0] scores "prune" and
// [...,k,1] "keep" (outputs 2k and 2k+1 of the head, as the LaMR fork's
// view(B, L, K, 2)). ctx is scoped at "compression_head"; the weights live
// in feature_extractor/{0,1,4}.
func EmissionHead(ctx *context.Context, x *Node, bottleneck, numRubrics int) *Node {
	e := mlp(ctx.In("feature_extractor"), x, bottleneck, 2*numRubrics)
	dims := x.Shape().Dimensions
	return Reshape(e, dims[0], dims[1], numRubrics, 2)
}

// GatingType selects how the gating network turns logits into weights.
type GatingType string

// Gating types of the LaMR fork's config (`gating_type`).
const (
	GatingSoftmax GatingType = "softmax"
	GatingSigmoid GatingType = "sigmoid"
)

// Gates computes the per-token rubric weights [B,S,K] of the LaMR gating
// network (scope "gating_network", tensors at indices 0, 1, 4). Softmax gates
// sum to one; sigmoid gates are normalised by their sum, clamped at 1e-6, as
// the fork does.
func Gates(ctx *context.Context, x *Node, bottleneck, numRubrics int, kind GatingType) *Node {
	logits := mlp(ctx, x, bottleneck, numRubrics)
	if kind == GatingSigmoid {
		s := Sigmoid(logits)
		sum := ReduceAndKeep(s, ReduceSum, -1)
		return Div(s, Max(sum, Scalar(x.Graph(), dtypes.Float32, 1e-6)))
	}
	return Softmax(logits, -1)
}

// FuseEmissions returns Σ_k gate_k · emissions_k: [B,S,2] from emissions
// [B,S,K,2] and gates [B,S,K].
func FuseEmissions(emissions, gates *Node) *Node {
	return ReduceSum(Mul(emissions, InsertAxes(gates, -1)), 2)
}
