package fastcpu

import (
	"math/rand"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/stretchr/testify/require"
)

// TestNativeGatherMatchesSimplego looks rows up (as backbone.EmbeddingRows
// does) with int32 and int64 indices, out-of-range ones included (XLA clamps
// them to the first or last row), from float32 and bfloat16 tables, and
// requires simplego's values and a native lowering.
func TestNativeGatherMatchesSimplego(t *testing.T) {
	fast, plain := backendsUnderTest(t)
	r := rand.New(rand.NewSource(5))
	const rows, width = 37, 129
	table := randTensor(r, rows, width)
	half := make([]bfloat16.BFloat16, rows*width)
	for i := range half {
		half[i] = bfloat16.FromFloat32(float32(r.NormFloat64()))
	}
	for _, tc := range []struct {
		name string
		dims []int
		bf16 bool
		i64  bool
	}{
		{"int32 [2,5,1]", []int{2, 5, 1}, false, false},
		{"int64 [7,1]", []int{7, 1}, false, true},
		{"bf16 int32 [3,300,1]", []int{3, 300, 1}, true, false},
		{"bf16 int64 [1,1]", []int{1, 1}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 1
			for _, d := range tc.dims {
				n *= d
			}
			idx32 := make([]int32, n)
			idx64 := make([]int64, n)
			for i := range idx32 {
				v := int64(r.Intn(rows+10) - 5) // some below 0, some past the end
				if i == 0 && n > 1 {
					v = 1 << 40 // far out of range (int32: wraps to 0)
				}
				idx32[i], idx64[i] = int32(v), v
			}
			var ids *tensors.Tensor
			if tc.i64 {
				ids = tensors.FromFlatDataAndDimensions(idx64, tc.dims...)
			} else {
				ids = tensors.FromFlatDataAndDimensions(idx32, tc.dims...)
			}
			before := fast.Stats().NativeGathers
			got, want := runBoth(t, fast, plain, func(tab, ids *Node) *Node {
				if tc.bf16 {
					return ConvertDType(Gather(Const(tab.Graph(), tensors.FromFlatDataAndDimensions(half, rows, width)), ids), dtypes.Float32)
				}
				return Gather(tab, ids)
			}, table, ids)
			require.Equal(t, want, got)
			require.Len(t, got[0], n*width)
			require.Equal(t, int64(1), fast.Stats().NativeGathers-before, "gather not lowered natively")
		})
	}

	// No indices: simplego v0.26 panics here; fastgo returns [0, width].
	e := MustNewExec(fast, func(tab, ids *Node) *Node { return Gather(tab, ids) })
	defer e.Finalize()
	out := e.MustExec(table, tensors.FromFlatDataAndDimensions([]int32{}, 0, 1))[0]
	require.Equal(t, []int{0, width}, out.Shape().Dimensions)
}
