package linemodel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/syntax"
)

// forwardRef is the forward pass before it was blocked (the reference).
func (m *Model) forwardRef(in Input) Outputs {
	var o Outputs
	n := in.N
	if n == 0 {
		return o
	}
	F := len(m.Mean)
	h1, h2, h3, D := m.Cfg.Hidden[0], m.Cfg.Hidden[1], m.Cfg.Hidden[2], m.Cfg.Embed
	FI := F + 3*D
	x := make([]float32, n*FI)
	u := make([]float32, D)
	if len(in.QIDs) > 0 {
		embedRows(u, m.P[ParamEmbQ], in.QIDs, 1, len(in.QIDs), D)
	}
	v := make([]float32, n*D)
	if len(in.TIDs) >= n*MaxLineIDs {
		embedRows(v, m.P[ParamEmbT], in.TIDs, n, MaxLineIDs, D)
	}
	for i := 0; i < n; i++ {
		row := x[i*FI : (i+1)*FI]
		m.standardiseInto(row[:F], in.X[i*F:(i+1)*F])
		vi := v[i*D : (i+1)*D]
		copy(row[F:F+D], u)
		copy(row[F+D:F+2*D], vi)
		for j := range D {
			row[F+2*D+j] = u[j] * vi[j]
		}
	}
	def := in.Def
	if len(def) < n {
		def = make([]int32, n)
		for i := range def {
			def[i] = -1
		}
	}
	a1 := make([]float32, n*h1)
	dense(a1, x, m.P[ParamW1], m.P[ParamB1], n, FI, h1, true)
	a2 := make([]float32, n*h2)
	dense(a2, a1, m.P[ParamW2], m.P[ParamB2], n, h1, h2, true)
	zw := 4*h2 + m.Cfg.Attn
	z := make([]float32, n*zw)
	poolRows(z, a2, 0, def, defMeans(a2, def, n, h2), 0, n, n, h2, zw)
	if m.Cfg.Attn > 0 {
		m.attendRows(&attention{}, z, a2, 0, 0, n, n, h2, zw, 4*h2)
	}
	a3 := make([]float32, n*h3)
	dense(a3, z, m.P[ParamW3], m.P[ParamB3], n, zw, h3, true)
	hd := make([]float32, n*NumHeads)
	dense(hd, a3, m.P[ParamWH], m.P[ParamBH], n, h3, NumHeads, false)
	o.Sem, o.Dep, o.Gate, o.Fused, o.Keep = make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	o.RankHead = make([]float32, n)
	em := make([]float32, 2*n)
	for i := 0; i < n; i++ {
		r := hd[i*NumHeads : (i+1)*NumHeads]
		g := float32(1 / (1 + math.Exp(float64(r[3]-r[2])))) // softmax over two logits
		o.Sem[i], o.Dep[i], o.Gate[i], o.RankHead[i] = r[0], r[1], g, r[4]
		o.Fused[i] = g*r[0] + (1-g)*r[1]
		em[2*i+1] = o.Fused[i]
	}
	p, err := crf.NewParams(m.P[ParamTransF], m.P[ParamStartF], m.P[ParamEndF], 2)
	if err == nil {
		var w crf.Workspace
		var marg []float64
		if e, err2 := crf.NewEmissions(em, 2); err2 == nil {
			marg, err = crf.MarginalsInto(&w, nil, p, e, nil)
		} else {
			err = err2
		}
		if err == nil {
			for i := range o.Keep {
				o.Keep[i] = float32(marg[2*i+1])
			}
			return o
		}
	}
	// Unreachable with valid parameters; fall back to the emission alone.
	for i, s := range o.Fused {
		o.Keep[i] = float32(1 / (1 + math.Exp(-float64(s))))
	}
	return o
}

// TestForwardBlockedMatchesReference: the blocked forward pass, one-pass
// and streamed (the trunk computed twice, three blocks held), gives the
// whole-text pass's outputs bit for bit, at sizes around the block size.
// The attention model's band is the widest allowed, so the streamed pass
// must hold a whole block on either side.
func TestForwardBlockedMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	attn, err := NewModel(Config{Hidden: []int{16, 8, 8}, Embed: 8, Attn: 4, AttnBand: MaxAttnBand}, rng.NormFloat64)
	require.NoError(t, err)
	ctx := context.Background()
	src := bigGoSource(1700)
	lines := strings.SplitAfter(src, "\n")
	for name, m := range map[string]*Model{"embedded": benchModel(&testing.B{}), "attention": attn} {
		for _, n := range []int{1, 7, forwardBlock - 1, forwardBlock, forwardBlock + 1, 2*forwardBlock + 37, len(lines)} {
			text := strings.Join(lines[:min(n, len(lines))], "")
			in := NewInput(ctx, "retry bad range headers when parsing fails in parseRange12", text, syntax.Go)
			want := m.forwardRef(in)
			for _, stream := range []bool{false, true} {
				got, err := m.forward(ctx, in, stream)
				require.NoError(t, err)
				requireSameOutputs(t, fmt.Sprintf("%s, %d lines, stream %v", name, n, stream), want, got)
			}
		}
	}
}

// requireSameOutputs fails unless got is want bit for bit.
func requireSameOutputs(t *testing.T, what string, want, got Outputs) {
	t.Helper()
	for name, pair := range map[string][2][]float32{
		"sem": {want.Sem, got.Sem}, "dep": {want.Dep, got.Dep}, "gate": {want.Gate, got.Gate},
		"fused": {want.Fused, got.Fused}, "rank": {want.RankHead, got.RankHead}, "keep": {want.Keep, got.Keep},
	} {
		require.Len(t, pair[1], len(pair[0]))
		for i := range pair[0] {
			if math.Float32bits(pair[0][i]) != math.Float32bits(pair[1][i]) {
				t.Fatalf("%s: %s[%d] = %v, want %v", what, name, i, pair[1][i], pair[0][i])
			}
		}
	}
}
