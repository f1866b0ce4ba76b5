package fastcpu

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	mlctx "github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/backbone"
)

// rmsNorm, rotary and swiGLU are written as backbone (and HF's Qwen3) write
// them; fuseRowOps must recognise exactly these graphs.
func rmsNorm(x, w *Node, eps float64) *Node {
	variance := ReduceAndKeep(Square(x), ReduceMean, -1)
	return Mul(Mul(x, Rsqrt(AddScalar(variance, eps))), ExpandLeftToRank(w, x.Rank()))
}

func rotary(x, cos, sin *Node) *Node {
	d := x.Shape().Dimensions[3]
	x1 := Slice(x, AxisRange(), AxisRange(), AxisRange(), AxisRange(0, d/2))
	x2 := Slice(x, AxisRange(), AxisRange(), AxisRange(), AxisRange(d/2, d))
	rotated := Concatenate([]*Node{Neg(x2), x1}, 3)
	s := cos.Shape().Dimensions[0]
	c := Reshape(cos, 1, s, 1, d)
	sn := Reshape(sin, 1, s, 1, d)
	return Add(Mul(x, c), Mul(rotated, sn))
}

func swiGLU(g, up *Node) *Node { return Mul(Mul(g, Sigmoid(g)), up) }

func requireBitEqual(t *testing.T, want, got []float32, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("%s: element %d: got %g, want %g", what, i, got[i], want[i])
		}
	}
}

// TestRowFusionsMatchSimplego checks that rotary gives simplego's bits
// exactly, RMSNorm too with the pure Go kernels (the AVX2 sum of squares
// adds in another order), and SwiGLU agrees within the native logistic's error, with
// the SIMD and the pure Go kernels, on shapes above and below the size from
// which rows are split over workers; and that near misses are left unfused
// and still computed right.
func TestRowFusionsMatchSimplego(t *testing.T) {
	plain, err := simplego.New("ops_sequential")
	require.NoError(t, err)
	t.Cleanup(plain.Finalize)
	for _, config := range []string{"", "purego"} {
		for _, c := range []struct{ b, s, h, d, inter int }{
			{1, 5, 2, 8, 12},
			{2, 37, 4, 64, 300},
			{1, 130, 3, 128, 1000},
			{1, 9, 2, 20, 21}, // rows that are not a multiple of 8 (rotary halves of 10)
		} {
			name := fmt.Sprintf("%s/b%d_s%d_h%d_d%d", config, c.b, c.s, c.h, c.d)
			t.Run(name, func(t *testing.T) {
				fast, err := New(config)
				require.NoError(t, err)
				defer fast.Finalize()
				r := rand.New(rand.NewSource(int64(c.s)))
				cosV, sinV := make([]float32, c.s*c.d), make([]float32, c.s*c.d)
				for i := range cosV {
					a := r.Float64() * 100
					cosV[i], sinV[i] = float32(math.Cos(a)), float32(math.Sin(a))
				}
				fn := func(x, w, g, up, y *Node) []*Node {
					gr := x.Graph()
					normed := rmsNorm(x, w, 1e-6)
					rot := rotary(x, Reshape(Const(gr, cosV), c.s, c.d), Reshape(Const(gr, sinV), c.s, c.d))
					// Near misses: the sum of squares of another tensor, a gated product
					// whose gate reads another tensor.
					variance := ReduceAndKeep(Mul(x, y), ReduceMean, -1)
					miss1 := Mul(Mul(x, Rsqrt(AddScalar(Abs(variance), 1e-6))), ExpandLeftToRank(w, x.Rank()))
					miss2 := Mul(Mul(g, Sigmoid(up)), up)
					return []*Node{normed, rot, swiGLU(g, up), miss1, miss2}
				}
				before := fast.Stats().FusedRowOps
				got, want := runBoth(t, fast, plain, fn,
					randTensor(r, c.b, c.s, c.h, c.d), randTensor(r, c.d),
					randTensor(r, c.b, c.s, c.inter), randTensor(r, c.b, c.s, c.inter),
					randTensor(r, c.b, c.s, c.h, c.d))
				require.Equal(t, before+3, fast.Stats().FusedRowOps, "RMSNorm, rotary and SwiGLU should each fuse once")
				if config == "purego" {
					requireBitEqual(t, want[0], got[0], "RMSNorm")
				} else {
					requireAllClose(t, want[0], got[0], 1e-6, "RMSNorm")
				}
				requireBitEqual(t, want[1], got[1], "rotary")
				requireAllClose(t, want[2], got[2], 1e-6, "SwiGLU")
				requireAllClose(t, want[3], got[3], 1e-6, "near miss: RMSNorm of another tensor")
				requireAllClose(t, want[4], got[4], 1e-6, "near miss: gate of another tensor")
			})
		}
	}
}

// TestRowFusionsConcurrent runs one compiled graph with fused row ops and a
// product on a bfloat16 weight (B packed once, shared by the workers) from
// several goroutines: executions share nothing but the compiled plan.
func TestRowFusionsConcurrent(t *testing.T) {
	fast, err := New("")
	require.NoError(t, err)
	defer fast.Finalize()
	r := rand.New(rand.NewSource(5))
	wq := make([]bfloat16.BFloat16, 96*64)
	for i := range wq {
		wq[i] = bfloat16.FromFloat32(float32(r.NormFloat64()))
	}
	x, w, wqT := randTensor(r, 1, 300, 2, 64), randTensor(r, 64), tensors.FromFlatDataAndDimensions(wq, 96, 64)
	e := MustNewExec(fast, func(x, w, wq *Node) *Node {
		normed := Reshape(rmsNorm(x, w, 1e-6), 600, 64)
		lin := DotGeneral(normed, []int{1}, nil, ConvertDType(wq, dtypes.Float32), []int{1}, nil) // [600, 96]
		return swiGLU(lin, lin)
	})
	defer e.Finalize()
	before := fast.Stats()
	want := tensors.MustCopyFlatData[float32](e.MustExec(x, w, wqT)[0])
	require.Equal(t, before.BF16Operands+1, fast.Stats().BF16Operands)
	require.Equal(t, before.FusedRowOps+2, fast.Stats().FusedRowOps)
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			for j := 0; j < 20; j++ {
				got := tensors.MustCopyFlatData[float32](e.MustExec(x, w, wqT)[0])
				for k := range got {
					if got[k] != want[k] {
						errs <- fmt.Errorf("run %d: element %d: %g != %g", j, k, got[k], want[k])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for i := 0; i < 8; i++ {
		require.NoError(t, <-errs)
	}
}

// TestBackboneFusesEveryRowOp builds the Qwen3 decoder of package backbone
// on fastgo and checks that each layer's four RMSNorms, two rotaries and
// SwiGLU (and the final norm) were fused, and that the hidden states agree
// with simplego.
func TestBackboneFusesEveryRowOp(t *testing.T) {
	testBackboneFusions(t, 2, 23)
}

// TestFoldedConstantsDoNotGrowWithLayers checks that the constants a
// compiled decoder keeps (the causal mask, the rotary tables) are kept once,
// however many layers read them: each layer's Reshape of the same constant
// is merged (dedupeConstants), and the attention reads the mask without its
// broadcast.
func TestFoldedConstantsDoNotGrowWithLayers(t *testing.T) {
	const seq = 100
	one := testBackboneFusions(t, 1, seq)
	four := testBackboneFusions(t, 4, seq)
	require.Equal(t, one, four, "constant bytes for 1 and 4 layers")
	// The [1,1,1,S,S] mask and two [1,S,1,D] tables (plus a few scalars).
	require.Less(t, four, int64(seq*seq+2*seq*16*4+1024))
}

// testBackboneFusions runs a random backbone with the given layers on both
// backends, checks the fusions and the outputs, and returns the bytes of
// constants fastgo kept.
func testBackboneFusions(t *testing.T, layers, seq int) int64 {
	t.Helper()
	plain, err := simplego.New("ops_sequential")
	require.NoError(t, err)
	t.Cleanup(plain.Finalize)
	fast, err := New("")
	require.NoError(t, err)
	t.Cleanup(fast.Finalize)
	cfg := backbone.Config{VocabSize: 64, HiddenSize: 32, NumLayers: layers, NumHeads: 4, NumKVHeads: 2, HeadDim: 16,
		IntermediateSize: 48, RopeTheta: backbone.DefaultRopeTheta, RMSNormEps: backbone.DefaultRMSNormEps}
	r := rand.New(rand.NewSource(3))
	ids := make([]int32, 2*seq)
	for i := range ids {
		ids[i] = int32(r.Intn(cfg.VocabSize))
	}
	var outs [2][]float32
	var constBytes int64
	for i, b := range []backends.Backend{fast, plain} {
		ctx := mlctx.New()
		for name, dims := range cfg.ExpectedShapes() {
			size := 1
			for _, d := range dims {
				size *= d
			}
			v := randSlice(rand.New(rand.NewSource(int64(len(name)*131+size))), size)
			dot := strings.LastIndexByte(name, '.')
			ctx.InAbsPath("/backbone/"+strings.ReplaceAll(name[:dot], ".", "/")).
				VariableWithValue(name[dot+1:], tensors.FromFlatDataAndDimensions(v, dims...))
		}
		ctx = ctx.Reuse()
		e, err := mlctx.NewExec(b, ctx, func(ctx *mlctx.Context, ids *Node) *Node {
			return backbone.Forward(ctx.In("backbone"), cfg, ids, cfg.NumLayers)[0]
		})
		require.NoError(t, err)
		before, beforeBytes := fast.Stats().FusedRowOps, fast.Stats().ConstantBytes
		res, err := e.Exec(tensors.FromFlatDataAndDimensions(ids, 2, seq))
		require.NoError(t, err)
		outs[i] = tensors.MustCopyFlatData[float32](res[0])
		if b == backends.Backend(fast) {
			// Per layer: two RMSNorms, the query and key RMSNorm+rotary, SwiGLU.
			require.Equal(t, int64(5*cfg.NumLayers+1), fast.Stats().FusedRowOps-before)
			constBytes = fast.Stats().ConstantBytes - beforeBytes
		}
		e.Finalize()
	}
	requireAllClose(t, outs[1], outs[0], 1e-4, "hidden states")
	return constBytes
}

// TestBF16WeightsMatchSimplego multiplies by bfloat16 weights converted in
// the graph (as backbone.Linear does for a bfloat16 checkpoint): fastgo reads
// the bfloat16 values directly and must agree with simplego's explicit
// conversion, with the SIMD and the pure Go packers.
func TestBF16WeightsMatchSimplego(t *testing.T) {
	plain, err := simplego.New("ops_sequential")
	require.NoError(t, err)
	t.Cleanup(plain.Finalize)
	for _, config := range []string{"", "purego"} {
		fast, err := New(config)
		require.NoError(t, err)
		r := rand.New(rand.NewSource(17))
		const m, k, n = 70, 300, 90
		w := make([]bfloat16.BFloat16, n*k)
		for i := range w {
			w[i] = bfloat16.FromFloat32(float32(r.NormFloat64()))
		}
		before := fast.Stats().BF16Operands
		got, want := runBoth(t, fast, plain, func(x, w *Node) []*Node {
			wf := ConvertDType(w, dtypes.Float32)
			lin := DotGeneral(x, []int{1}, nil, wf, []int{1}, nil)   // x·Wᵀ: weights viewed in place
			other := DotGeneral(wf, []int{1}, nil, x, []int{1}, nil) // W·xᵀ: W is the lhs here
			return []*Node{lin, other, ReduceSum(wf)}
		}, randTensor(r, m, k), tensors.FromFlatDataAndDimensions(w, n, k))
		require.Equal(t, before+1, fast.Stats().BF16Operands, config)
		for i := range want {
			requireAllClose(t, want[i], got[i], 2e-4, fmt.Sprintf("%s output %d", config, i)) // float32 sums of 300 products, in another order
		}
		fast.Finalize()
	}
}

// TestDedupeKeepsDifferentProducts: two parameter-free products over the
// same inputs and of the same shape but with other axes (A·A and A·Aᵀ, run
// by simplego as float64) must not be merged by dedupeConstants.
func TestDedupeKeepsDifferentProducts(t *testing.T) {
	fast, plain := backendsUnderTest(t)
	r := rand.New(rand.NewSource(23))
	got, want := runBoth(t, fast, plain, func(x *Node) []*Node {
		g := x.Graph()
		a := Add(Iota(g, shapes.Make(dtypes.Float64, 3, 3), 0), MulScalar(Iota(g, shapes.Make(dtypes.Float64, 3, 3), 1), 10))
		ab := DotGeneral(a, []int{1}, nil, a, []int{0}, nil)
		abT := DotGeneral(a, []int{1}, nil, a, []int{1}, nil)
		return []*Node{Add(x, ConvertDType(ab, dtypes.Float32)), Add(x, ConvertDType(abT, dtypes.Float32))}
	}, randTensor(r, 3, 3))
	for i := range want {
		requireAllClose(t, want[i], got[i], 1e-6, fmt.Sprintf("output %d", i))
	}
}
