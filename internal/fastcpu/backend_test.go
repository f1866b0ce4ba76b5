package fastcpu

import (
	"fmt"
	"math"
	"math/rand"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/stretchr/testify/require"
)

func backendsUnderTest(t *testing.T) (fast *Backend, plain backends.Backend) {
	t.Helper()
	fast, err := New("")
	require.NoError(t, err)
	plain, err = simplego.New("ops_sequential")
	require.NoError(t, err)
	t.Cleanup(func() { fast.Finalize(); plain.Finalize() })
	return fast, plain
}

// runBoth executes fn on both backends with the same inputs and returns the
// flat float32 outputs.
func runBoth[F ExecGraphFn](t *testing.T, fast, plain backends.Backend, fn F, inputs ...any) (got, want [][]float32) {
	t.Helper()
	for i, b := range []backends.Backend{fast, plain} {
		e := MustNewExec(b, fn)
		ins := make([]any, len(inputs))
		for j, in := range inputs {
			c, err := in.(*tensors.Tensor).LocalClone() // a tensor lives on one backend
			require.NoError(t, err)
			ins[j] = c
		}
		outs := e.MustExec(ins...)
		var flats [][]float32
		for _, o := range outs {
			flats = append(flats, tensors.MustCopyFlatData[float32](o))
		}
		if i == 0 {
			got = flats
		} else {
			want = flats
		}
		e.Finalize()
	}
	return got, want
}

func randTensor(r *rand.Rand, dims ...int) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(randSlice(r, shapes.Make(dtypes.Float32, dims...).Size()), dims...)
}

func requireAllClose(t *testing.T, want, got []float32, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if math.IsNaN(w) {
			require.Truef(t, math.IsNaN(g), "%s: element %d: want NaN, got %g", what, i, g)
			continue
		}
		require.InDeltaf(t, w, g, tol*(1+math.Abs(w)), "%s: element %d", what, i)
	}
}

// TestDotGeneralMatchesSimplego compares products with every axis layout the
// lowering distinguishes (in-place views, transposed copies, batch axes,
// several contracting and free axes) against simplego.
func TestDotGeneralMatchesSimplego(t *testing.T) {
	fast, plain := backendsUnderTest(t)
	r := rand.New(rand.NewSource(5))
	cases := []struct {
		lhs, rhs       []int
		lc, lb, rc, rb []int
	}{
		{[]int{7, 5}, []int{5, 9}, []int{1}, nil, []int{0}, nil},
		{[]int{7, 5}, []int{9, 5}, []int{1}, nil, []int{1}, nil},
		{[]int{5, 7}, []int{5, 9}, []int{0}, nil, []int{0}, nil},
		{[]int{2, 13, 33}, []int{17, 33}, []int{2}, nil, []int{1}, nil},
		{[]int{3, 6, 4, 5}, []int{3, 7, 4, 5}, []int{3}, []int{0, 2}, []int{3}, []int{0, 2}},
		{[]int{3, 5, 2, 4}, []int{4, 3, 5}, []int{1, 3}, nil, []int{2, 0}, nil},
		{[]int{2, 3, 11, 19}, []int{2, 3, 19, 23}, []int{3}, []int{0, 1}, []int{2}, []int{0, 1}},
		{[]int{1, 9, 2, 2, 8}, []int{1, 9, 2, 8}, []int{4}, []int{0, 2}, []int{3}, []int{0, 2}},
		{[]int{4}, []int{4}, []int{0}, nil, []int{0}, nil},
		{[]int{6, 1}, []int{1, 6}, []int{1}, nil, []int{0}, nil},
		{[]int{37, 300}, []int{300, 41}, []int{1}, nil, []int{0}, nil},
	}
	before := fast.Stats().NativeProducts
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v.%v", c.lhs, c.rhs), func(t *testing.T) {
			got, want := runBoth(t, fast, plain, func(x, y *Node) *Node {
				return DotGeneral(x, c.lc, c.lb, y, c.rc, c.rb)
			}, randTensor(r, c.lhs...), randTensor(r, c.rhs...))
			requireAllClose(t, want[0], got[0], 1e-5, "DotGeneral")
		})
	}
	require.Greater(t, fast.Stats().NativeProducts, before)
}

// attentionGraph builds masked attention as backbone and fusion code does:
// grouped-query einsums, scale, Where with a broadcast mask, Softmax.
func attentionGraph(fill float64, scale float64, group int) func(q, k, v *Node, mask *Node) *Node {
	return func(q, k, v, mask *Node) *Node {
		dims := q.Shape().Dimensions // [b, s, heads, d]
		b, s, h, d := dims[0], dims[1], dims[2], dims[3]
		kv := h / group
		qg := Reshape(q, b, s, kv, group, d)
		scores := Einsum("bqkgd,bskd->bkgqs", qg, k)
		scores = MulScalar(scores, scale)
		m := BroadcastToDims(Reshape(mask, mask.Shape().Dimensions[0], 1, 1, s, s), b, kv, group, s, s)
		scores = Where(m, scores, Scalar(q.Graph(), dtypes.Float32, fill))
		probs := Softmax(scores, -1)
		out := Einsum("bkgqs,bskd->bqkgd", probs, v)
		return Reshape(out, b, s, h*d)
	}
}

// TestAttentionFusionMatchesSimplego runs the fused attention against
// simplego's unfused ops on odd shapes with causal, padding, random and
// fully masked rows, -Inf and finite fills, and checks the fusion happened.
func TestAttentionFusionMatchesSimplego(t *testing.T) {
	fast, plain := backendsUnderTest(t)
	r := rand.New(rand.NewSource(11))
	type maskKind int
	const (
		causal maskKind = iota
		padding
		random
		someRowsEmpty
	)
	for _, c := range []struct {
		b, s, h, group, d int
		mask              maskKind
		fill              float64
	}{
		{1, 7, 4, 2, 8, causal, math.Inf(-1)},
		{2, 13, 2, 1, 5, padding, math.Inf(-1)},
		{1, 100, 4, 2, 64, causal, math.Inf(-1)},
		{1, 211, 3, 3, 17, random, math.Inf(-1)},
		{2, 33, 2, 2, 9, someRowsEmpty, math.Inf(-1)},
		{1, 50, 2, 1, 12, causal, -1e4},
		{1, 97, 2, 2, 16, random, -30},
		{1, 300, 8, 4, 32, causal, math.Inf(-1)},
	} {
		name := fmt.Sprintf("b%d_s%d_h%d_g%d_d%d_mask%d_fill%g", c.b, c.s, c.h, c.group, c.d, c.mask, c.fill)
		t.Run(name, func(t *testing.T) {
			kv := c.h / c.group
			mb := 1
			if c.mask == padding || c.mask == someRowsEmpty {
				mb = c.b
			}
			mask := make([]bool, mb*c.s*c.s)
			for bi := 0; bi < mb; bi++ {
				valid := c.s - bi*3
				for qi := 0; qi < c.s; qi++ {
					for si := 0; si < c.s; si++ {
						var m bool
						switch c.mask {
						case causal:
							m = si <= qi
						case padding:
							m = si < valid
						case random:
							m = r.Intn(3) > 0
						case someRowsEmpty:
							m = si <= qi && qi%5 != 0
						}
						mask[(bi*c.s+qi)*c.s+si] = m
					}
				}
			}
			before := fast.Stats().FusedAttention
			got, want := runBoth(t, fast, plain, attentionGraph(c.fill, 1/math.Sqrt(float64(c.d)), c.group),
				randTensor(r, c.b, c.s, c.h, c.d), randTensor(r, c.b, c.s, kv, c.d), randTensor(r, c.b, c.s, kv, c.d),
				tensors.FromFlatDataAndDimensions(mask, mb, c.s, c.s))
			require.Equal(t, before+1, fast.Stats().FusedAttention, "attention was not fused")
			requireAllClose(t, want[0], got[0], 2e-5, name)
		})
	}
}

// TestSoftmaxRowKernels compares the SIMD row kernels with the Go ones.
func TestSoftmaxRowKernels(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2+FMA here: the Go row kernels are the only ones")
	}
	widths := []bool{false}
	if hasAVX512 {
		widths = append(widths, true)
	} else {
		t.Log("no AVX-512 here: only the 8-lane kernels are compared")
	}
	r := rand.New(rand.NewSource(2))
	for _, wide := range widths {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 64, 1000} {
			x := randSlice(r, n)
			for i := range x {
				x[i] *= 20
			}
			require.Equal(t, maxGo(x), maxSIMD(x, wide), "max n=%d wide=%v", n, wide)
			a, b := append([]float32(nil), x...), append([]float32(nil), x...)
			ma, mb := scaleMaxGo(a, 0.37), scaleMaxSIMD(b, 0.37)
			require.Equal(t, ma, mb, "scaled max n=%d", n)
			require.Equal(t, a, b, "scaled n=%d", n)
			for _, scale := range []float32{1, 0.37} {
				a, b := append([]float32(nil), x...), append([]float32(nil), x...)
				mx := maxGo(x) * scale
				sa, sb := expSubSumGo(a, mx, scale), expSubSumSIMD(b, mx, scale, wide)
				require.InDelta(t, sa, sb, 1e-5*float64(sa), "sum n=%d scale=%g wide=%v", n, scale, wide)
				// The Go exponent is exact in float64; the SIMD one rounds
				// x·scale-mx (once, or twice in the scalar tail: an absolute
				// error of up to an ulp of |x·scale| and of the difference,
				// which is the relative error of the result) and adds the
				// polynomial's 1e-7 (3e-7: two ulps near 1).
				tol := make([]float64, n)
				for i := range a {
					tol[i] = 3e-7 + 1.2e-7*(math.Abs(float64(x[i]*scale))+math.Abs(float64(x[i]*scale-mx)))
					require.InDelta(t, a[i], b[i], tol[i]*float64(a[i])+1e-37, "exp n=%d i=%d scale=%g wide=%v", n, i, scale, wide)
				}
				mulGo(a, 1/sa)
				mulSIMD(b, 1/sb)
				for i := range a {
					require.InDelta(t, a[i], b[i], (tol[i]+1e-5)*float64(a[i])+1e-37, "normalised n=%d i=%d", n, i)
				}
			}
		}
		// Far below the maximum, exp flushes to (almost) zero instead of misbehaving.
		x := []float32{0, -100, -1000, float32(math.Inf(-1)), -87, -88, -89, -50, -90, -1e30, -3, -7, -200, -86, -60, -95}
		expSubSumSIMD(x, 0, 1, wide)
		require.InDelta(t, 1, x[0], 1e-7)
		for _, v := range x[1:] {
			require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0, "exp gave %g", v)
			require.Less(t, v, float32(0.05))
		}
	}
}

func TestLogisticKernels(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2+FMA here: the Go kernel is the only one")
	}
	r := rand.New(rand.NewSource(4))
	for _, n := range []int{0, 1, 7, 8, 9, 100, 1001} {
		x := randSlice(r, n)
		for i := range x {
			x[i] *= 30
		}
		if n > 3 {
			x[0], x[1], x[2] = 200, -200, 0
		}
		a, b := make([]float32, n), make([]float32, n)
		logistic(a, x)
		logisticSIMD(b, x)
		for i := range a {
			require.InDelta(t, a[i], b[i], 3e-7, "n=%d x=%g", n, x[i])
		}
	}
}

// TestConcurrentExecution runs one compiled graph (products, fused
// attention, native elementwise ops, folded constants) from several
// goroutines at once; results must equal a sequential run.
func TestConcurrentExecution(t *testing.T) {
	fast, _ := backendsUnderTest(t)
	r := rand.New(rand.NewSource(9))
	const b, s, h, d = 1, 128, 4, 32 // 16384 outputs: elementwise ops run natively
	causal := make([]bool, s*s)
	for q := 0; q < s; q++ {
		for k := 0; k <= q; k++ {
			causal[q*s+k] = true
		}
	}
	e := MustNewExec(fast, func(q, k, v, mask *Node) *Node {
		att := attentionGraph(math.Inf(-1), 0.25, 2)(q, k, v, mask)
		gate := Mul(att, Sigmoid(att))
		return Add(gate, OnePlus(IotaFull(q.Graph(), gate.Shape())))
	})
	defer e.Finalize()
	inputs := []*tensors.Tensor{randTensor(r, b, s, h, d), randTensor(r, b, s, h/2, d), randTensor(r, b, s, h/2, d),
		tensors.FromFlatDataAndDimensions(causal, 1, s, s)}
	args := func() []any {
		out := make([]any, len(inputs))
		for i, in := range inputs {
			c, err := in.LocalClone()
			require.NoError(t, err)
			out[i] = c
		}
		return out
	}
	want := tensors.MustCopyFlatData[float32](e.MustExec(args()...)[0])
	var wg sync.WaitGroup
	results := make([][]float32, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				results[i] = tensors.MustCopyFlatData[float32](e.MustExec(args()...)[0])
			}
		}()
	}
	wg.Wait()
	for _, got := range results {
		require.Equal(t, want, got)
	}

	// With the mask a constant, the executions share its summary, made by
	// whichever runs first: all of them start together.
	ec := MustNewExec(fast, func(q, k, v *Node) *Node {
		mask := Const(q.Graph(), tensors.FromFlatDataAndDimensions(causal, 1, s, s))
		att := attentionGraph(math.Inf(-1), 0.25, 2)(q, k, v, mask)
		gate := Mul(att, Sigmoid(att))
		return Add(gate, OnePlus(IotaFull(q.Graph(), gate.Shape())))
	})
	defer ec.Finalize()
	fused := fast.Stats().FusedAttention
	require.NoError(t, ec.PreCompile(args()[:3]...)) // compile once; no execution yet
	require.Equal(t, fused+1, fast.Stats().FusedAttention, "attention over a constant mask was not fused")
	for i := range results {
		results[i] = nil
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = tensors.MustCopyFlatData[float32](ec.MustExec(args()[:3]...)[0])
		}()
	}
	wg.Wait()
	for _, got := range results {
		require.Equal(t, want, got)
	}
}

// TestNativeElementwiseMatchesSimplego checks the natively run elementwise
// ops and last-axis sums, with every broadcasting form, against simplego.
func TestNativeElementwiseMatchesSimplego(t *testing.T) {
	fast, plain := backendsUnderTest(t)
	r := rand.New(rand.NewSource(13))
	const b, s, h = 2, 97, 129 // 25026 elements: above elemMinSize
	before := fast.Stats().NativeElemwise
	got, want := runBoth(t, fast, plain, func(x, rowScale, colScale, y *Node) []*Node {
		sq := Mul(x, x)
		sum := ReduceSum(sq, -1)                                        // native last-axis sum
		normed := Mul(x, Rsqrt(AddScalar(Reshape(sum, b, s, 1), 1e-3))) // row broadcast
		gated := Mul(normed, Sigmoid(y))                                // same shapes, logistic
		out := Div(Sub(Add(gated, colScale), MulScalar(x, 0.5)), AddScalar(Abs(rowScale), 1))
		return []*Node{out, sum, Sub(Scalar(x.Graph(), dtypes.Float32, 2), x), TransposeAllDims(gated, 2, 0, 1)}
	}, randTensor(r, b, s, h), randTensor(r, b, s, 1), randTensor(r, 1, 1, h), randTensor(r, b, s, h))
	for i := range want {
		requireAllClose(t, want[i], got[i], 1e-6, fmt.Sprintf("output %d", i))
	}
	t.Logf("%d ops ran natively", fast.Stats().NativeElemwise-before)
	require.GreaterOrEqual(t, fast.Stats().NativeElemwise-before, int64(9))
}

// BenchmarkFusedAttention times one fused causal attention of the shape of
// a Qwen3-0.6B layer at 512 tokens (16 query heads, 8 KV heads, head
// dimension 128), its transposes included.
func BenchmarkFusedAttention(b *testing.B) {
	fast, err := New("")
	require.NoError(b, err)
	defer fast.Finalize()
	r := rand.New(rand.NewSource(1))
	const s, h, group, d = 512, 16, 2, 128
	mask := make([]bool, s*s)
	for q := range s {
		for k := 0; k <= q; k++ {
			mask[q*s+k] = true
		}
	}
	e := MustNewExec(fast, attentionGraph(math.Inf(-1), 1/math.Sqrt(d), group))
	defer e.Finalize()
	ins := []any{randTensor(r, 1, s, h, d), randTensor(r, 1, s, h/group, d), randTensor(r, 1, s, h/group, d),
		tensors.FromFlatDataAndDimensions(mask, 1, s, s)}
	e.MustExec(ins...)[0].MustFinalizeAll()
	for b.Loop() {
		e.MustExec(ins...)[0].MustFinalizeAll()
	}
}
