package fastcpu

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// layout builds a Strided view of batch×rows×cols data stored either row-major
// or column-major per batch entry.
func layout(data []float32, rows, cols int, colMajor bool) Strided {
	if colMajor {
		return Strided{Data: data, BatchStride: rows * cols, RowStride: 1, ColStride: rows}
	}
	return Strided{Data: data, BatchStride: rows * cols, RowStride: cols, ColStride: 1}
}

func randSlice(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// naive is the float64 reference product.
func naive(batch, m, n, k int, a, b Strided) []float64 {
	out := make([]float64, batch*m*n)
	for bi := 0; bi < batch; bi++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					s += float64(a.at(bi, i, p)) * float64(b.at(bi, p, j))
				}
				out[(bi*m+i)*n+j] = s
			}
		}
	}
	return out
}

func requireClose(t *testing.T, want []float64, got []float32, k int, what string) {
	t.Helper()
	require.Len(t, got, len(want))
	tol := 1e-5 * float64(k+1) * 4 // float32 accumulation of k N(0,1)·N(0,1) terms
	for i := range want {
		if d := math.Abs(want[i] - float64(got[i])); !(d <= tol) {
			require.Failf(t, "mismatch", "%s: element %d: want %g got %g (|diff| %g > %g)", what, i, want[i], got[i], d, tol)
		}
	}
}

func TestMatMulRandomShapes(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	shapes := [][4]int{ // batch, m, n, k
		{1, 1, 1, 1}, {1, 5, 7, 3}, {1, 6, 16, 1}, {1, 7, 17, 9}, {2, 13, 33, 257}, {3, 1, 40, 20},
		{1, 145, 19, 300}, {1, 150, 3100, 5}, {4, 31, 15, 64}, {1, 64, 64, 513}, {2, 300, 1, 7},
		{1, 0, 5, 5}, {1, 5, 5, 0}, {1, 100, 3100, 300}, {1, 450, 40, 700},
		// Wide (12×32) tiles with rows and columns left over for the 6×16 kernel.
		{1, 12, 32, 4}, {1, 25, 80, 33}, {2, 30, 47, 260}, {1, 157, 96, 3},
	}
	for range 12 {
		shapes = append(shapes, [4]int{1 + r.Intn(3), 1 + r.Intn(200), 1 + r.Intn(200), 1 + r.Intn(600)})
	}
	kernels := map[string]*Gemm{
		"default": NewGemm(),
		"avx2":    NewGemm(WithoutAVX512()),
		"purego":  NewGemm(WithPureGo()),
		"1worker": NewGemm(WithWorkers(1)),
		"3worker": NewGemm(WithWorkers(3)),
	}
	t.Logf("micro-kernels available: AVX2 %v, AVX-512 %v", hasSIMD, hasAVX512)
	for _, s := range shapes {
		batch, m, n, k := s[0], s[1], s[2], s[3]
		for _, aT := range []bool{false, true} {
			for _, bT := range []bool{false, true} {
				a := layout(randSlice(r, batch*m*k), m, k, aT)
				b := layout(randSlice(r, batch*k*n), k, n, bT)
				want := naive(batch, m, n, k, a, b)
				half := b
				half.BF16 = toBF16(b.Data)
				wide := b
				wide.Data = make([]float32, len(half.BF16))
				for i, h := range half.BF16 {
					wide.Data[i] = bf16ToF32(h)
				}
				half.Data = nil
				wantHalf := naive(batch, m, n, k, a, wide)
				// A row-major B whose rows go on past column n (a view of
				// a wider matrix, as attention's Kᵀ is): the AVX-512 path
				// may read past n to fill a tile, and must drop what it
				// reads there.
				var padded Strided
				var wantPadded []float64
				if !bT {
					ldb := n + 37
					padded = Strided{Data: randSlice(r, batch*k*ldb), BatchStride: k * ldb, RowStride: ldb, ColStride: 1}
					wantPadded = naive(batch, m, n, k, a, padded)
				}
				for name, g := range kernels {
					what := fmt.Sprintf("%s b=%d m=%d n=%d k=%d aT=%v bT=%v", name, batch, m, n, k, aT, bT)
					c := randSlice(r, batch*m*n) // garbage in C must be overwritten
					g.MatMul(batch, m, n, k, a, b, c)
					requireClose(t, want, c, k, what)
					g.MatMul(batch, m, n, k, a, half, c)
					requireClose(t, wantHalf, c, k, what+" bf16")
					if padded.Data != nil {
						g.MatMul(batch, m, n, k, a, padded, c)
						requireClose(t, wantPadded, c, k, what+" padded B")
					}
				}
			}
		}
	}
}

// TestKernelsAgree checks the assembly micro-kernel against the pure Go one
// directly, including accumulation into C.
func TestKernelsAgree(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2+FMA on this machine")
	}
	r := rand.New(rand.NewSource(3))
	for _, k := range []int{1, 2, 3, 4, 5, 8, 13, 256} {
		a, b := randSlice(r, k*mr), randSlice(r, k*nr)
		for _, load := range []bool{false, true} {
			ldc := nr + 3
			c0 := randSlice(r, mr*ldc)
			c1 := append([]float32(nil), c0...)
			kernelGo(k, a, b, c0, ldc, load)
			kernelSIMD(k, a, b, c1, ldc, load)
			for i := range c0 {
				require.InDelta(t, c0[i], c1[i], 1e-4*float64(k), "k=%d load=%v i=%d", k, load, i)
			}
			// Padding columns between rows are untouched.
			for i := 0; i < mr; i++ {
				for j := nr; j < ldc; j++ {
					require.Equal(t, c0[i*ldc+j], c1[i*ldc+j])
				}
			}
		}
	}
}

// The one-worker Gemm that fused attention runs inside its parallel blocks
// keeps the kernel choice of the backend's Gemm (an "avx2" or "purego"
// backend must not run AVX-512 products in its attention).
func TestSerialKeepsKernel(t *testing.T) {
	for _, opts := range [][]GemmOption{nil, {WithoutAVX512()}, {WithPureGo()}, {WithWorkers(3), WithoutAVX512()}} {
		g := NewGemm(opts...)
		s := g.serial()
		require.Equal(t, g.Kernel(), s.Kernel())
		require.Equal(t, g.level, s.level)
		require.Equal(t, 1, s.workers)
	}
}

// TestWideKernelAgrees checks the AVX-512 12×32 kernel against four pure Go
// 6×16 tiles over the same panels, including accumulation into C, and its
// in-place variant (row-major B) against it.
func TestWideKernelAgrees(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512 on this machine")
	}
	r := rand.New(rand.NewSource(4))
	for _, k := range []int{1, 2, 3, 4, 5, 8, 13, 256} {
		a, b := randSlice(r, 2*k*mr), randSlice(r, 2*k*nr)
		for _, load := range []bool{false, true} {
			ldc := 2*nr + 5
			c0 := randSlice(r, 2*mr*ldc)
			c1 := append([]float32(nil), c0...)
			for ti := 0; ti < 2; ti++ {
				for tj := 0; tj < 2; tj++ {
					kernelGo(k, a[ti*k*mr:], b[tj*k*nr:], c0[ti*mr*ldc+tj*nr:], ldc, load)
				}
			}
			c2 := append([]float32(nil), c1...)
			kernelWide(k, a, b, c1, ldc, load)
			for i := range c0 {
				require.InDelta(t, c0[i], c1[i], 1e-4*float64(k), "k=%d load=%v i=%d", k, load, i)
			}
			// The same B read in place from rows of ldb floats (the two
			// panels side by side) gives the packed kernel's C bit for bit.
			ldb := 2*nr + 7
			rowB := randSlice(r, k*ldb)
			for p := 0; p < k; p++ {
				for j := 0; j < nr; j++ {
					rowB[p*ldb+j], rowB[p*ldb+nr+j] = b[p*nr+j], b[k*nr+p*nr+j]
				}
			}
			kernelWideB(k, a, rowB, ldb, c2, ldc, load)
			require.Equal(t, c1, c2, "k=%d load=%v: in-place B", k, load)
			for i := 0; i < 2*mr; i++ {
				for j := 2 * nr; j < ldc; j++ {
					require.Equal(t, c0[i*ldc+j], c1[i*ldc+j], "padding column written")
				}
			}
		}
	}
}

// toBF16 rounds to bfloat16 bit patterns by truncation (any pattern will do
// for packing tests).
func toBF16(v []float32) []uint16 {
	h := make([]uint16, len(v))
	for i, f := range v {
		h[i] = uint16(math.Float32bits(f) >> 16)
	}
	return h
}

// TestPackingAgrees checks the AVX2 packing kernels against the Go loops
// (bit for bit: packing only moves values) on depths with and without an
// 8-step tail, row-major and transposed operands, and partial panels; the
// AVX-512 B packers (16-step blocks, then AVX2, then the loops) where the
// CPU has them.
func TestPackingAgrees(t *testing.T) {
	if !hasSIMD {
		t.Skip("no AVX2+FMA on this machine")
	}
	levels := []isa{isaAVX2}
	if hasAVX512 {
		levels = append(levels, isaAVX512)
	}
	r := rand.New(rand.NewSource(9))
	for _, depth := range []int{1, 7, 8, 9, 15, 16, 17, 24, 33, 64, 255, 256} {
		for _, size := range []int{6, 13, 16, 40} {
			ld := depth + 3
			operands := map[string]Strided{
				"A row-major":    {Data: randSlice(r, size*ld), RowStride: ld, ColStride: 1},
				"B weights":      {Data: randSlice(r, size*ld), RowStride: 1, ColStride: ld},
				"B row-major":    {Data: randSlice(r, depth*(size+3)), RowStride: size + 3, ColStride: 1},
				"A column-major": {Data: randSlice(r, depth*(size+3)), RowStride: 1, ColStride: size + 3},
			}
			for name, op := range operands {
				want := make([]float32, roundUp(size, mr*nr)*depth) // whole panels of either kind
				got := make([]float32, len(want))
				if name[0] == 'A' {
					packA(want, op, 0, 0, size, 0, depth, false)
					packA(got, op, 0, 0, size, 0, depth, true)
					require.Equal(t, want, got, "%s depth=%d size=%d", name, depth, size)
				} else {
					packB(want, op, 0, 0, depth, 0, size, isaGo)
					for _, level := range levels {
						clear(got)
						packB(got, op, 0, 0, depth, 0, size, level)
						require.Equal(t, want, got, "%s depth=%d size=%d isa=%d", name, depth, size, level)
					}
				}
				if name[0] == 'B' {
					// The same operand in bfloat16 packs to its widened values.
					h := toBF16(op.Data)
					wide := op
					wide.Data = make([]float32, len(h))
					for i, v := range h {
						wide.Data[i] = bf16ToF32(v)
					}
					half := op
					half.Data, half.BF16 = nil, h
					packB(want, wide, 0, 0, depth, 0, size, isaGo)
					for _, level := range append([]isa{isaGo}, levels...) {
						clear(got)
						packB(got, half, 0, 0, depth, 0, size, level)
						require.Equal(t, want, got, "%s bf16 depth=%d size=%d isa=%d", name, depth, size, level)
					}
				}
			}
		}
	}
}

func BenchmarkMatMul(b *testing.B) {
	for _, s := range [][3]int{{512, 3072, 1024}, {2048, 768, 256}, {2048, 256, 768}, {2048, 2048, 64}} {
		m, n, k := s[0], s[1], s[2]
		r := rand.New(rand.NewSource(1))
		a := layout(randSlice(r, m*k), m, k, false)
		w := layout(randSlice(r, n*k), k, n, true) // [out,in] weights, as Linear reads them
		c := make([]float32, m*n)
		for _, kind := range []string{"avx512", "avx512-1worker", "avx2", "avx2-1worker", "purego"} {
			var opts []GemmOption
			switch kind {
			case "purego":
				opts = append(opts, WithPureGo())
			case "avx2", "avx2-1worker":
				opts = append(opts, WithoutAVX512())
			}
			if strings.HasSuffix(kind, "-1worker") {
				opts = append(opts, WithWorkers(1))
			}
			g := NewGemm(opts...)
			if want, _, _ := strings.Cut(kind, "-"); g.Kernel() != want {
				continue // not on this CPU
			}
			b.Run(fmt.Sprintf("%s/%dx%dx%d", kind, m, n, k), func(b *testing.B) {
				g.MatMul(1, m, n, k, a, w, c)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					g.MatMul(1, m, n, k, a, w, c)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkPack times the packing of a row-major A block and of a B block
// read from [out,in] weights (the layouts of a Linear).
func BenchmarkPack(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	const rows, depth, cols = mc, kc, 768
	a := Strided{Data: randSlice(r, rows*depth), RowStride: depth, ColStride: 1}
	w := Strided{Data: randSlice(r, cols*depth), RowStride: 1, ColStride: depth}
	dst := make([]float32, max(rows, cols)*depth)
	for _, level := range []isa{isaGo, isaAVX2, isaAVX512} {
		if level == isaAVX2 && !hasSIMD || level == isaAVX512 && !hasAVX512 {
			continue
		}
		name := level.String()
		if level < isaAVX512 {
			b.Run("A/"+name, func(b *testing.B) {
				b.SetBytes(4 * rows * depth)
				for b.Loop() {
					packA(dst, a, 0, 0, rows, 0, depth, level > isaGo)
				}
			})
		}
		b.Run("B-transposed/"+name, func(b *testing.B) {
			b.SetBytes(4 * cols * depth)
			for b.Loop() {
				packB(dst, w, 0, 0, depth, 0, cols, level)
			}
		})
		h := Strided{BF16: toBF16(w.Data), RowStride: 1, ColStride: depth}
		b.Run("B-transposed-bf16/"+name, func(b *testing.B) {
			b.SetBytes(2 * cols * depth)
			for b.Loop() {
				packB(dst, h, 0, 0, depth, 0, cols, level)
			}
		})
	}
}

// TestTransposeParallel checks transpose against index arithmetic and the
// parallel split against the serial one, for every permutation of rank 1-4
// shapes (sizes above and below the split threshold, empty axes included).
func TestTransposeParallel(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	var perms func(n int) [][]int
	perms = func(n int) [][]int {
		if n == 1 {
			return [][]int{{0}}
		}
		var out [][]int
		for _, p := range perms(n - 1) {
			for i := 0; i <= len(p); i++ {
				q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
				out = append(out, q)
			}
		}
		return out
	}
	for _, dims := range [][]int{{7}, {3, 5}, {40, 700}, {2, 3, 4}, {5, 0, 3}, {3, 130, 7, 33}, {1, 64, 3, 128}, {9, 100, 70}} {
		size := 1
		for _, d := range dims {
			size *= d
		}
		src := randSlice(r, size)
		for _, perm := range perms(len(dims)) {
			want := make([]float32, size)
			outDims := make([]int, len(dims))
			for i, a := range perm {
				outDims[i] = dims[a]
			}
			// want[o] = src[s] by index arithmetic.
			idx := make([]int, len(dims))
			for o := 0; o < size; o++ {
				rem := o
				for i := len(dims) - 1; i >= 0; i-- {
					idx[perm[i]] = rem % outDims[i]
					rem /= outDims[i]
				}
				s := 0
				for a := range dims {
					s = s*dims[a] + idx[a]
				}
				want[o] = src[s]
			}
			for _, workers := range []int{1, 2, 3, 8} {
				got := make([]float32, size)
				transposeParallel(new(team), got, src, dims, perm, workers)
				require.Equal(t, want, got, "dims %v perm %v workers %d", dims, perm, workers)
			}
			// rowOffsets: where each destination row starts in src.
			offs := rowOffsets(dims, perm)
			if last := len(dims) - 1; perm[last] != last {
				require.Nil(t, offs, "dims %v perm %v", dims, perm)
			} else if size > 0 {
				n := dims[last]
				require.Len(t, offs, size/n)
				for o, off := range offs {
					require.Equal(t, src[off:off+n], want[o*n:(o+1)*n], "dims %v perm %v row %d", dims, perm, o)
				}
			}
		}
	}
}
