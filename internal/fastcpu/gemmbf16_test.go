package fastcpu

import (
	"fmt"
	"math"
	"math/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// bf16Gemms returns the bfloat16 Gemms under test: the portable kernel
// always, the VDPBF16PS one where the CPU has it; with 1 and 3 workers.
func bf16Gemms(t testing.TB) map[string]*Gemm {
	gs := map[string]*Gemm{
		"go":         NewGemm(WithBF16(), WithPureGo(), WithWorkers(3)),
		"go-1worker": NewGemm(WithBF16(), WithPureGo(), WithWorkers(1)),
	}
	if hasBF16 {
		gs["avx512bf16"] = NewGemm(WithBF16(), WithWorkers(3))
		gs["avx512bf16-1worker"] = NewGemm(WithBF16(), WithWorkers(1))
	} else {
		t.Log("no AVX512_BF16 on this CPU/build: only the portable bfloat16 kernel is tested")
	}
	return gs
}

func roundBF16(x float32) float32 { return bf16ToF32(f32ToBF16(x)) }

// requireBF16Close checks got against two float64 references: ref, the
// product of the bfloat16-rounded operands, within float32 accumulation's
// bound ((k+2)·2⁻²⁴·Σ|a·b|, with the pairs' two roundings per step), and
// exact, the product of the float32 operands, within that plus the
// operands' rounding (2.01·2⁻⁸·Σ|a·b|: rounding to 8 significant bits moves
// each operand by at most 2⁻⁸ of itself).
func requireBF16Close(t *testing.T, exact, ref, abs []float64, got []float32, k int, what string) {
	t.Helper()
	require.Len(t, got, len(ref))
	for i := range ref {
		acc := float64(k+2)*math.Ldexp(1, -24)*abs[i] + 1e-30
		if d := math.Abs(ref[i] - float64(got[i])); !(d <= acc) {
			require.Failf(t, "mismatch", "%s: element %d: bf16 reference %g got %g (|diff| %g > %g)", what, i, ref[i], got[i], d, acc)
		}
		tol := acc + 2.01*math.Ldexp(1, -8)*abs[i]
		if d := math.Abs(exact[i] - float64(got[i])); !(d <= tol) {
			require.Failf(t, "mismatch", "%s: element %d: float64 reference %g got %g (|diff| %g > %g)", what, i, exact[i], got[i], d, tol)
		}
	}
}

// bf16Refs returns the float64 product of a and b, of their bfloat16
// roundings, and Σ|a·b| of the rounded operands, per element.
func bf16Refs(batch, m, n, k int, a, b Strided) (exact, ref, abs []float64) {
	exact = naive(batch, m, n, k, a, b)
	ref = make([]float64, len(exact))
	abs = make([]float64, len(exact))
	for bi := 0; bi < batch; bi++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s, sa := 0.0, 0.0
				for p := 0; p < k; p++ {
					x := float64(roundBF16(a.at(bi, i, p)))
					bv := b.at(bi, p, j)
					if b.BF16 == nil {
						bv = roundBF16(bv)
					}
					y := float64(bv)
					s += x * y
					sa += math.Abs(x * y)
				}
				ref[(bi*m+i)*n+j], abs[(bi*m+i)*n+j] = s, sa
			}
		}
	}
	return exact, ref, abs
}

// TestMatMulBF16RandomShapes runs the bfloat16 product on shapes with rows,
// columns and depth left over from every tile and block (12×32 tiles, 128
// pair steps, odd depths), with A row-major and transposed, B row-major,
// as [out,in] weights (float32, and bfloat16 used as stored), against
// float64 references.
func TestMatMulBF16RandomShapes(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	shapes := [][4]int{ // batch, m, n, k
		{1, 1, 1, 1}, {1, 1, 16, 2}, {1, 12, 32, 2}, {1, 13, 33, 3}, {2, 11, 31, 31},
		{1, 24, 64, 64}, {1, 25, 65, 65}, {1, 37, 48, 256}, {1, 40, 100, 257},
		{3, 7, 17, 300}, {1, 150, 96, 96}, {1, 300, 70, 513}, {1, 6, 200, 33},
	}
	gs := bf16Gemms(t)
	for _, s := range shapes {
		batch, m, n, k := s[0], s[1], s[2], s[3]
		for _, aT := range []bool{false, true} {
			for _, bKind := range []string{"kn", "nk", "nk-bf16"} {
				a := layout(randSlice(r, batch*m*k), m, k, aT)
				b := layout(randSlice(r, batch*k*n), k, n, bKind != "kn")
				if bKind == "nk-bf16" {
					b.BF16, b.Data = toBF16(b.Data), nil
				}
				exact, ref, abs := bf16Refs(batch, m, n, k, a, b)
				for name, g := range gs {
					what := fmt.Sprintf("%s %v aT=%v b=%s", name, s, aT, bKind)
					c := make([]float32, batch*m*n)
					for i := range c {
						c[i] = float32(math.NaN()) // every element must be written
					}
					g.MatMulBF16(batch, m, n, k, a, b, c)
					requireBF16Close(t, exact, ref, abs, c, k, what)
				}
			}
		}
	}
}

// TestBF16ConversionMatchesHardware checks the Go rounding (f32ToBF16,
// used for tails and the portable path) against VCVTNE2PS2BF16 bit for bit,
// on random values and the special ones (zeros, denormals, halfway cases,
// the largest finite values, infinities, NaNs).
func TestBF16ConversionMatchesHardware(t *testing.T) {
	if !hasBF16 {
		t.Skip("this CPU/build has no AVX512_BF16 (VCVTNE2PS2BF16): nothing to compare the Go rounding with")
	}
	r := rand.New(rand.NewSource(3))
	special := []uint32{0, 0x80000000, 1, 0x807fffff, 0x00800000, 0x3f808000, 0x3f818000, 0x3f80ffff,
		0x7f7fffff, 0xff7fffff, 0x7f7f8000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffa00000}
	src := make([]float32, 32*64)
	for i := range src {
		switch {
		case i < len(special):
			src[i] = math.Float32frombits(special[i])
		case i%3 == 0:
			src[i] = math.Float32frombits(r.Uint32())
		case i%3 == 1:
			src[i] = math.Float32frombits(r.Uint32()&0xffff0000 | 0x8000) // halfway
		default:
			src[i] = float32(r.NormFloat64())
		}
	}
	got := make([]uint32, len(src)/2)
	require.Equal(t, len(got), cvtPairsSIMD(got, src))
	for q := range got {
		if want := pairOf(src[2*q], src[2*q+1]); got[q] != want {
			t.Fatalf("pair %d (%08x, %08x): VCVTNE2PS2BF16 %08x, Go %08x", q,
				math.Float32bits(src[2*q]), math.Float32bits(src[2*q+1]), got[q], want)
		}
	}
}

// TestMatMulBF16Concurrent runs products of different shapes on one Gemm
// from several goroutines (pooled buffers shared) and requires each result
// to equal, bit for bit, the same product run alone.
func TestMatMulBF16Concurrent(t *testing.T) {
	for name, g := range bf16Gemms(t) {
		r := rand.New(rand.NewSource(5))
		type prod struct {
			m, n, k int
			a, b    Strided
			want    []float32
		}
		var ps []prod
		for _, s := range [][3]int{{64, 96, 128}, {13, 40, 300}, {100, 33, 65}, {200, 64, 256}} {
			m, n, k := s[0], s[1], s[2]
			p := prod{m: m, n: n, k: k, a: layout(randSlice(r, m*k), m, k, false), b: layout(randSlice(r, k*n), k, n, true)}
			p.want = make([]float32, m*n)
			g.MatMulBF16(1, m, n, k, p.a, p.b, p.want)
			ps = append(ps, p)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for it := 0; it < 10; it++ {
					p := ps[(w+it)%len(ps)]
					c := make([]float32, p.m*p.n)
					g.MatMulBF16(1, p.m, p.n, p.k, p.a, p.b, c)
					for i := range c {
						if math.Float32bits(c[i]) != math.Float32bits(p.want[i]) {
							errs <- fmt.Sprintf("%s: %dx%dx%d element %d: %g, alone %g", name, p.m, p.n, p.k, i, c[i], p.want[i])
							return
						}
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// BenchmarkMatMulBF16 times the bfloat16 product next to the float32 one
// at the shipped shapes (Qwen3-0.6B's projections at 512 and 2048 tokens,
// and the h256 bench model's), B as [out,in] weights, float32 and
// bfloat16 (a BF16 checkpoint's weights, used as stored).
func BenchmarkMatMulBF16(b *testing.B) {
	if !hasBF16 {
		b.Skip("no AVX512_BF16 on this CPU/build")
	}
	for _, s := range [][3]int{{512, 3072, 1024}, {512, 1024, 3072}, {512, 2048, 1024}, {2048, 3072, 1024}, {2048, 768, 256}} {
		m, n, k := s[0], s[1], s[2]
		r := rand.New(rand.NewSource(1))
		a := layout(randSlice(r, m*k), m, k, false)
		w := layout(randSlice(r, n*k), k, n, true)
		wh := w
		wh.BF16, wh.Data = toBF16(w.Data), nil
		c := make([]float32, m*n)
		f32, bf := NewGemm(), NewGemm(WithBF16())
		for _, v := range []struct {
			name string
			run  func()
		}{
			{"f32", func() { f32.MatMul(1, m, n, k, a, w, c) }},
			{"f32-bf16weights", func() { f32.MatMul(1, m, n, k, a, wh, c) }},
			{"bf16", func() { bf.MatMulBF16(1, m, n, k, a, w, c) }},
			{"bf16-bf16weights", func() { bf.MatMulBF16(1, m, n, k, a, wh, c) }},
		} {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", v.name, m, n, k), func(b *testing.B) {
				v.run()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					v.run()
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
