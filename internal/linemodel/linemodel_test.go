package linemodel

import (
	"context"
	_ "embed"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/syntax"
)

// goSrc is a small Go file the fixtures ask about; the tests of package
// train and of examples/train read the same file.
//
//go:embed testdata/range.go.txt
var goSrc string

// newTestModel returns a small random model standardised over the
// features of goSrc for two queries (package train has the training
// fixtures; this one needs no training code).
func newTestModel(t *testing.T) *Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := NewModel(Config{Hidden: []int{8, 6, 5}, Embed: 4, Lambda: 0.5, Listwise: 0.5, GateReg: 0.01}, rng.NormFloat64)
	require.NoError(t, err)
	F := len(m.Mean)
	sum, sq := make([]float64, F), make([]float64, F)
	cnt := 0.0
	for _, q := range []string{"Handle bad range headers in parseRange", "atoi: multiply digits correctly"} {
		in := NewInput(context.Background(), q, goSrc, syntax.Go)
		for i, v := range in.X {
			sum[i%F] += float64(v)
			sq[i%F] += float64(v) * float64(v)
		}
		cnt += float64(in.N)
	}
	for j := range sum {
		mu := sum[j] / cnt
		m.Mean[j] = float32(mu)
		m.Std[j] = float32(math.Sqrt(math.Max(sq[j]/cnt-mu*mu, 1e-6)))
	}
	return m
}

// TestScoreInvariants pins Score's contract on awkward inputs: one value
// per line, each in [0,1], no panic.
func TestScoreInvariants(t *testing.T) {
	m := newTestModel(t)
	long := strings.Repeat("x := retry(a, b) + ", 2700)
	for _, tc := range []struct {
		name, query, text string
		lang              syntax.Language
	}{
		{"empty", "q", "", syntax.Go},
		{"empty query", "", goSrc, syntax.Go},
		{"one line no newline", "fmt", "fmt.Println(1)", syntax.Go},
		{"blank lines", "x", "\n\n\n", syntax.Python},
		{"invalid utf8", "range", "func \xff\xfe(a) {\n\treturn \xc3\n}\n", syntax.Go},
		{"nul bytes", "range", "a\x00b\n\x00\x00\nc := 1\n", syntax.Go},
		{"crlf", "atoi digits", strings.ReplaceAll(goSrc, "\n", "\r\n"), syntax.Go},
		{"50k line", "retry", "package x\n" + long + "\n}\n", syntax.Go},
		{"text language", "range header", goSrc, syntax.Text},
		{"unknown language value", "range", goSrc, syntax.Language("klingon")},
		{"wrong language", "range", goSrc, syntax.Python},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s []float32
			require.NotPanics(t, func() { s = m.Score(context.Background(), tc.query, tc.text, tc.lang) })
			require.Len(t, s, len(evalset.Lines(tc.text)))
			for _, v := range s {
				require.True(t, v >= 0 && v <= 1, "value %v", v)
			}
			r := m.Rank(context.Background(), tc.query, tc.text, tc.lang)
			require.Len(t, r, len(s))
		})
	}
}

// TestConfigValidate: NewModel (and so Load) refuses configs whose
// shapes would be meaningless or whose attention band the streamed
// forward pass could not hold.
func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string // "" = valid
	}{
		{"plain", Config{Hidden: []int{8, 6, 5}, Embed: 4}, ""},
		{"attention", Config{Hidden: []int{8, 6, 5}, Embed: 4, Attn: 3, AttnBand: MaxAttnBand}, ""},
		{"two widths", Config{Hidden: []int{8, 6}, Embed: 4}, "hidden must list 3 widths"},
		{"zero width", Config{Hidden: []int{8, 0, 5}, Embed: 4}, "bad hidden width 0"},
		{"no embedding", Config{Hidden: []int{8, 6, 5}}, "bad embedding width 0"},
		{"negative attention", Config{Hidden: []int{8, 6, 5}, Embed: 4, Attn: -1}, "bad attention width -1"},
		{"attention without band", Config{Hidden: []int{8, 6, 5}, Embed: 4, Attn: 3}, "attention band 0 outside"},
		{"band too wide", Config{Hidden: []int{8, 6, 5}, Embed: 4, Attn: 3, AttnBand: MaxAttnBand + 1}, "outside [1, 256]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := NewModel(c.cfg, func() float64 { return 0.5 })
			if c.want != "" {
				require.ErrorContains(t, err, c.want)
				return
			}
			require.NoError(t, err)
			require.Len(t, m.P, NumParams)
			for i, sh := range m.Cfg.ParamShapes() {
				require.Len(t, m.P[i], numel(sh), paramNames[i])
			}
			assert.Len(t, m.Tensors(), 2+m.Cfg.NumParams(), "tensors without attention omit its weights")
		})
	}
}
