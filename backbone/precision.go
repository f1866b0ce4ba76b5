package backbone

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// ParamBF16Products is the context parameter (bool, default false) that
// makes the model's products — every projection, the MLP, the heads and both
// attention products (Q·Kᵀ and P·V) of the decoder and of the fusion blocks —
// multiply bfloat16 operands in the graph and widen the results to float32.
// Norms, rotary, softmax, masks and residuals stay float32. It is the fast
// path of accelerators that multiply bfloat16 natively with float32
// accumulation (XLA on a GPU: tensor cores); backends that round the weight
// products themselves (the Go backend's bf16 configuration) leave it unset.
const ParamBF16Products = "bf16_products"

// BF16Products reports whether ctx asks for bfloat16 products
// (ParamBF16Products).
func BF16Products(ctx *context.Context) bool {
	return context.GetParamOr(ctx, ParamBF16Products, false)
}

// weightBF16 is Weight as bfloat16: a bfloat16 checkpoint's matrix as
// stored, a float32 one rounded in the graph.
func weightBF16(ctx *context.Context, g *Graph, name string, dims ...int) *Node {
	if v := stored(ctx, g, name, dims); v != nil {
		return v
	}
	return ConvertDType(Weight(ctx, g, name, dims...), dtypes.BFloat16)
}

// dotBF16 contracts bfloat16 operands (no batch axes) and returns float32.
func dotBF16(lhs *Node, lhsContracting []int, rhs *Node, rhsContracting []int) *Node {
	return ConvertDType(DotGeneral(lhs, lhsContracting, nil, rhs, rhsContracting, nil), dtypes.Float32)
}

// einsum is Einsum over float32 operands, in bfloat16 when ctx asks for
// bfloat16 products (the result is float32 either way).
func einsum(ctx *context.Context, equation string, a, b *Node) *Node {
	if !BF16Products(ctx) {
		return Einsum(equation, a, b)
	}
	return ConvertDType(Einsum(equation, ConvertDType(a, dtypes.BFloat16), ConvertDType(b, dtypes.BFloat16)), dtypes.Float32)
}

// ParamQueryBlock is the context parameter (int, default 0: off) that makes
// the decoder's causal attention run over blocks of this many queries, each
// against only the keys it may see, so the masked half of the score matrix
// is neither computed nor stored. It is for backends that run the graph as
// written (XLA); the Go backend fuses the one-block form itself.
const ParamQueryBlock = "attention_query_block"

// QueryBlock returns ctx's ParamQueryBlock.
func QueryBlock(ctx *context.Context) int {
	return context.GetParamOr(ctx, ParamQueryBlock, 0)
}
