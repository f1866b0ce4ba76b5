package bert

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func requireUnit(t testing.TB, v []float32) {
	t.Helper()
	var n float64
	for _, x := range v {
		require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0), "non-finite value")
		n += float64(x) * float64(x)
	}
	require.InDelta(t, 1, math.Sqrt(n), 1e-5)
}

// TestHostileTexts: bad text gives a unit vector, never a panic.
func TestHostileTexts(t *testing.T) {
	m := loadTiny(t)
	texts := []string{
		"", " ", "\x00\x00\x00", "a\xffb\xfe\xc3", strings.Repeat("x", 50_000),
		strings.Repeat("go ", 50_000), "[SEP][CLS][PAD]", "😀\u200b\u202e", strings.Repeat("\n", 1000),
	}
	vecs, err := m.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vecs, len(texts))
	for _, v := range vecs {
		require.Len(t, v, m.Dim())
		requireUnit(t, v)
	}
	out, err := m.Embed(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, out)
}

func TestEmbedIDsRefuses(t *testing.T) {
	m := loadTiny(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		seqs [][]int32
		msg  string
	}{
		{"empty", [][]int32{{2, 3}, {}}, "sequence 1 has 0 tokens, want 1 to 48"},
		{"long", [][]int32{make([]int32, 49)}, "sequence 0 has 49 tokens"},
		{"negative id", [][]int32{{2, -1, 3}}, "token 1 is id -1"},
		{"id past vocab", [][]int32{{2, 138, 3}}, "token 1 is id 138, outside the vocabulary [0, 138)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.EmbedIDs(ctx, tc.seqs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			_, err = m.HiddenStates(ctx, tc.seqs)
			require.Error(t, err)
		})
	}
}

func TestEmbedCancelled(t *testing.T) {
	m := loadTiny(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Embed(ctx, []string{"hello"})
	require.ErrorIs(t, err, context.Canceled)
	_, err = m.EmbedIDs(ctx, [][]int32{{2, 3}})
	require.ErrorIs(t, err, context.Canceled)
	// A deadline that passes while batches run stops them.
	ctx, cancel = context.WithTimeout(context.Background(), 0)
	defer cancel()
	_, err = m.Embed(ctx, []string{"a", "b"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestBatching: batches of any size, run together or alone, concurrently,
// give the same vectors.
func TestBatching(t *testing.T) {
	g := readGolden[tinyGolden](t, "testdata/tiny_golden.json")
	ctx := context.Background()
	want, err := loadTiny(t).Embed(ctx, g.Texts)
	require.NoError(t, err)
	for _, opts := range [][]Option{{WithBatchTokens(1)}, {WithBatchTokens(20)}, {WithWorkers(1)}, {WithWorkers(3), WithBatchTokens(1 << 20)}} {
		got, err := loadTiny(t, opts...).Embed(ctx, g.Texts)
		require.NoError(t, err)
		for i := range want {
			requireClose(t, want[i], got[i], 1e-6, g.Texts[i])
		}
	}
	m := loadTiny(t)
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 5; r++ {
				got, err := m.Embed(ctx, g.Texts[w%3:])
				if !assert.NoError(t, err) {
					return
				}
				for i := range got {
					d, _ := maxDiff(t, want[w%3+i], got[i])
					assert.LessOrEqual(t, d, 1e-6)
				}
			}
		}()
	}
	wg.Wait()
}

func TestMaxLength(t *testing.T) {
	ctx := context.Background()
	m := loadTiny(t, WithMaxLength(5))
	assert.Equal(t, 5, m.MaxLength())
	ids := m.Tokenizer().Sequence("hello world hello world", m.MaxLength())
	assert.Len(t, ids, 5)
	a, err := m.Embed(ctx, []string{"hello world hello world"})
	require.NoError(t, err)
	b, err := m.EmbedIDs(ctx, [][]int32{ids})
	require.NoError(t, err)
	assert.Equal(t, b, a)
	for _, n := range []int{1, 65} {
		_, err := Load(ctx, tinyDir, WithMaxLength(n))
		require.Error(t, err, "max length %d", n)
		assert.Contains(t, err.Error(), "outside [2, 64]")
	}
}

// levels runs fn at each row-kernel level this CPU has.
func levels(t *testing.T, fn func(t *testing.T)) {
	defer func(saved isa) { rowISA = saved }(rowISA)
	for _, level := range []isa{isaGo, isaAVX2, isaAVX512} {
		if level > hostISA() {
			continue
		}
		rowISA = level
		t.Run([]string{"go", "avx2", "avx512"}[level], fn)
	}
}

// TestKernels compares the row kernels at each level with float64
// references, on rows with and without an 8- or 16-lane tail.
func TestKernels(t *testing.T) { levels(t, testKernels) }

// TestGoldenLevels runs the tiny model's golden at each kernel level.
func TestGoldenLevels(t *testing.T) {
	g := readGolden[tinyGolden](t, "testdata/tiny_golden.json")
	m := loadTiny(t)
	levels(t, func(t *testing.T) {
		vecs, err := m.Embed(context.Background(), g.Texts)
		require.NoError(t, err)
		for i := range g.Texts {
			requireClose(t, g.Mean[i], vecs[i], tolerance, g.Texts[i])
		}
	})
}

func testKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	row := func(n int, scale float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale)
		}
		return x
	}
	for _, n := range []int{1, 7, 8, 9, 16, 17, 32, 100, 384} {
		// exp − max, and the row's sum
		x := row(n, 8)
		x[0] = -200 // far below the max: exp underflows to 0
		mx := math.Inf(-1)
		for _, v := range x {
			mx = math.Max(mx, float64(v))
		}
		got := append([]float32(nil), x...)
		sum := expMaxSum(got)
		var want float64
		for i, v := range x {
			e := math.Exp(float64(v - float32(mx))) // the difference rounded as the kernel rounds it
			want += e
			assert.InDelta(t, e, got[i], 2e-7*math.Max(e, 1e-30)+1e-38, "exp n=%d i=%d", n, i)
		}
		assert.InDelta(t, want, sum, 1e-6*want)

		// GELU(x + b)
		x, b := row(n, 3), row(n, 1)
		x[0] = 12
		if n > 1 {
			x[1] = -12
		}
		got = append([]float32(nil), x...)
		biasGELU(got, b)
		for i := range x {
			v := float64(x[i] + b[i])
			assert.InDelta(t, v*0.5*(1+math.Erf(v/math.Sqrt2)), got[i], 1e-6*math.Max(1, math.Abs(v)), "gelu(%g)", v)
			assert.InDelta(t, float64(gelu(x[i]+b[i])), got[i], 1e-6*math.Max(1, math.Abs(v)), "Go gelu(%g)", v)
		}

		// LayerNorm((y + bias) + x)
		x, y, bias, gain, beta := row(n, 1), row(n, 1), row(n, 0.1), row(n, 1), row(n, 1)
		got = append([]float32(nil), x...)
		addLayerNorm(got, y, bias, gain, beta, 1e-12)
		var mean, sq float64
		for i := range x {
			mean += float64(y[i] + bias[i] + x[i])
		}
		mean /= float64(n)
		for i := range x {
			d := float64(y[i]+bias[i]+x[i]) - mean
			sq += d * d
		}
		rstd := 1 / math.Sqrt(sq/float64(n)+1e-12)
		for i := range x {
			w := (float64(y[i]+bias[i]+x[i])-mean)*rstd*float64(gain[i]) + float64(beta[i])
			if n > 1 {
				assert.InDelta(t, w, got[i], 2e-5, "layer norm n=%d", n)
			}
		}
	}
	for _, x := range []float32{0, -1e-8, -0.5, -1, -10, -87, -88, -100, float32(math.Inf(-1))} {
		assert.InDelta(t, math.Exp(float64(max(x, -88))), expf(x), 2e-7*math.Exp(float64(max(x, -88)))+1e-38, "expf(%g)", x)
	}
}
