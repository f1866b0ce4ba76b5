package smoke

import (
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	b, err := simplego.New("")
	require.NoError(t, err)
	ctx := context.New()
	ctx.In("model").In("x").VariableWithValue("weight", tensors.FromValue([][]float32{{1, 2}, {3, 4}}))
	ctx = ctx.Reuse()
	e, err := context.NewExec(b, ctx, func(ctx *context.Context, x *Node) *Node {
		w := ctx.In("model").In("x").GetVariable("weight").ValueGraph(x.Graph())
		return Dot(x, w)
	})
	require.NoError(t, err)
	out, err := e.Exec(tensors.FromValue([][]float32{{1, 1}}))
	require.NoError(t, err)
	t.Log(out[0].Value(), dtypes.Float32)
}
