package fastcpu

import (
	"fmt"
	"os"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	mlctx "github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/prunekit/pruner/backbone"
)

func TestDumpGraph(t *testing.T) {
	if os.Getenv("DUMP") == "" {
		t.Skip()
	}
	cfg := backbone.Config{HiddenSize: 16, NumLayers: 1, NumHeads: 4, NumKVHeads: 2, HeadDim: 8, IntermediateSize: 48, VocabSize: 10, RopeTheta: 1e6, RMSNormEps: 1e-6}
	ctx := mlctx.New()
	for n, dims := range cfg.ExpectedShapes() {
		size := 1
		for _, d := range dims {
			size *= d
		}
		dot := len(n) - 1
		for n[dot] != '.' {
			dot--
		}
		scope := "/backbone/" + replaceDots(n[:dot])
		ctx.InAbsPath(scope).VariableWithValue(n[dot+1:], tensors.FromFlatDataAndDimensions(make([]float32, size), dims...))
	}
	be, _ := New("")
	var g *Graph
	e, err := mlctx.NewExec(be, ctx.Reuse(), func(ctx *mlctx.Context, ids *Node) *Node {
		g = ids.Graph()
		return backbone.Forward(ctx.In("backbone"), cfg, ids, cfg.NumLayers)[0]
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Exec(tensors.FromFlatDataAndDimensions(make([]int32, 6), 1, 6))
	for _, n := range g.Nodes() {
		var ins []int
		for _, i := range n.Inputs() {
			ins = append(ins, int(i.Id()))
		}
		fmt.Println(n.Id(), n.Type(), n.Shape(), ins)
	}
	_ = backends.OpTypeAbs
}

func replaceDots(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '.' {
			b[i] = '/'
		}
	}
	return string(b)
}
