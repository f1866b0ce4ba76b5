package linemodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/fastcpu"
	"github.com/prunekit/pruner/internal/safetensors"
	"github.com/prunekit/pruner/internal/syntax"
)

// Kind is the checkpoint kind written to config.json.
const Kind = "linemodel-lamr"

// Config describes a model; it is saved as config.json next to the weights.
type Config struct {
	Kind     string   `json:"kind"`
	Features []string `json:"features"`
	// Hidden lists the widths of the two per-line trunk layers and of the
	// layer over the line and its pooled context (all ReLU).
	Hidden []int `json:"hidden"`
	// Embed is the width of the hashed query-piece and line-piece
	// embeddings (NumBuckets rows each).
	Embed int `json:"embed"`
	// Attn is the width of the queries, keys and values of one attention
	// head over the second trunk layer's lines, whose output joins the
	// pooled context; 0 (the default, and every checkpoint written before
	// it existed) means none.
	Attn int `json:"attn,omitempty"`
	// AttnBand is how many lines on either side a line attends to. The
	// band keeps the work linear in the text's length and is at most
	// MaxAttnBand, so the streamed forward pass holds it in three blocks.
	AttnBand int `json:"attn_band,omitempty"`
	// Lambda is the weight of the rubric CRF losses.
	Lambda float64 `json:"lambda"`
	// Listwise is the weight of the listwise loss that trains the ranking
	// head (softmax over a case's lines against its gold lines).
	Listwise float64 `json:"listwise"`
	// GateReg is the weight of the gate-balance (negative entropy of the
	// mean gate) regulariser.
	GateReg float64 `json:"gate_reg"`
	// RankMix is how Rank adds the CRF marginal's logit to the ranking
	// head: rank = r + RankMix·logit(P(keep)). Selected on val after
	// training.
	RankMix float64 `json:"rank_mix,omitempty"`
	// RankTemp and RankTempText are the temperatures of the ranking
	// softmax behind ScoreText's line scores, for code and for text
	// (tool output, prose): a line's score is 1 minus the softmax(rank /
	// temperature) mass of the lines above it. They are fitted on val after
	// training so that the default threshold keeps about the share of the
	// gold lines it promises; 0 means 1.
	RankTemp     float64 `json:"rank_temp,omitempty"`
	RankTempText float64 `json:"rank_temp_text,omitempty"`
	// Epochs is how many epochs the weights were trained for.
	Epochs int `json:"epochs"`
	// Step is the optimizer step count.
	Step int `json:"step"`
	// Val holds the last validation numbers (for the record).
	Val map[string]float64 `json:"val,omitempty"`
}

// Temperature returns the ranking temperature for code or, with text, for
// non-code texts.
func (c Config) Temperature(text bool) float64 {
	t := c.RankTemp
	if text {
		t = c.RankTempText
	}
	if !(t > 0) || math.IsInf(t, 0) {
		return 1
	}
	return t
}

// Parameter indices into Model.P, in checkpoint order. They are exported
// for the trainer (package train), whose graph and optimizer address the
// parameters by role.
const (
	ParamW1 = iota // [F + 3·Embed, H1]: features, query and line embeddings, their product
	ParamB1
	ParamW2 // [H1, H2]
	ParamB2
	ParamW3 // [4·H2 + Attn, H3]: the line, its ±1 and ±2..3 neighbours, its definition, its attention output
	ParamB3
	ParamWH // [H3, 5]: semantic keep, dependency keep, two gate logits, rank
	ParamBH
	ParamTransF // fused CRF [2,2], Transitions[next][prev]
	ParamStartF
	ParamEndF
	ParamTransS // semantic rubric CRF
	ParamStartS
	ParamEndS
	ParamTransD // dependency rubric CRF
	ParamStartD
	ParamEndD
	ParamEmbQ // [NumBuckets, Embed] query-piece embeddings
	ParamEmbT // [NumBuckets, Embed] line-piece embeddings
	ParamWQ   // [H2, Attn] attention queries (absent from checkpoints without attention)
	ParamWK   // [H2, Attn] attention keys
	ParamWV   // [H2, Attn] attention values
	// NumParams is the number of parameters (len(Model.P)).
	NumParams
)

var paramNames = [NumParams]string{
	"trunk.0.weight", "trunk.0.bias", "trunk.1.weight", "trunk.1.bias",
	"context.weight", "context.bias", "heads.weight", "heads.bias",
	"crf.fused.transitions", "crf.fused.start", "crf.fused.end",
	"crf.semantic.transitions", "crf.semantic.start", "crf.semantic.end",
	"crf.dependency.transitions", "crf.dependency.start", "crf.dependency.end",
	"embed.query", "embed.line",
	"attention.query", "attention.key", "attention.value",
}

// NumHeads is the width of the head layer (ParamWH's columns, in this
// order): two rubric keep scores, two gate logits and the ranking score. The ranking score has its own column,
// trained by the listwise loss on gold lines only, because the fused CRF
// learns the union of the rubrics (imports, headers, whole blocks), which
// at a fixed budget of lines would crowd out the gold lines.
const NumHeads = 5

// Model is the line scorer: a per-line trunk over standardised features,
// context pooled from neighbouring lines and the enclosing definition, K=2
// rubric emission heads fused by a softmax gate, and a linear-chain CRF
// over the lines (LaMR's structure at line granularity).
type Model struct {
	Cfg  Config
	Mean []float32
	Std  []float32
	// P holds the parameters, indexed by the p* constants.
	P [][]float32
}

// ParamShapes returns the shape of every parameter.
func (c Config) ParamShapes() [][]int {
	F := len(c.Features)
	h1, h2, h3, D := c.Hidden[0], c.Hidden[1], c.Hidden[2], c.Embed
	return [][]int{
		{F + 3*D, h1}, {h1}, {h1, h2}, {h2}, {4*h2 + c.Attn, h3}, {h3}, {h3, NumHeads}, {NumHeads},
		{2, 2}, {2}, {2}, {2, 2}, {2}, {2}, {2, 2}, {2}, {2},
		{NumBuckets, D}, {NumBuckets, D},
		{h2, c.Attn}, {h2, c.Attn}, {h2, c.Attn},
	}
}

// NumParams returns how many of the parameters the model has: all of
// them with attention, those before ParamWQ without.
func (c Config) NumParams() int {
	if c.Attn > 0 {
		return NumParams
	}
	return ParamWQ
}

func (c Config) validate() error {
	if len(c.Hidden) != 3 {
		return fmt.Errorf("linemodel: hidden must list 3 widths, got %v", c.Hidden)
	}
	for _, h := range c.Hidden {
		if h <= 0 || h > 4096 {
			return fmt.Errorf("linemodel: bad hidden width %d", h)
		}
	}
	if c.Embed <= 0 || c.Embed > 256 {
		return fmt.Errorf("linemodel: bad embedding width %d", c.Embed)
	}
	if c.Attn < 0 || c.Attn > 256 {
		return fmt.Errorf("linemodel: bad attention width %d", c.Attn)
	}
	if c.Attn > 0 && (c.AttnBand <= 0 || c.AttnBand > MaxAttnBand) {
		return fmt.Errorf("linemodel: attention band %d outside [1, %d]", c.AttnBand, MaxAttnBand)
	}
	// The scores multiply and divide by these: a value past float32 turns
	// every score to NaN.
	for _, v := range []struct {
		name string
		x    float64
	}{{"rank_mix", c.RankMix}, {"rank_temp", c.RankTemp}, {"rank_temp_text", c.RankTempText}} {
		if math.IsNaN(v.x) || math.Abs(v.x) > maxScale {
			return fmt.Errorf("linemodel: %s %g outside [-%g, %g]", v.name, v.x, maxScale, maxScale)
		}
	}
	return nil
}

// maxScale bounds the config's score scales (rank_mix, the temperatures):
// trained values are below 10.
const maxScale = 1e4

// Size caps of a line model's files: the config is a few kilobytes, the
// weights' header a few.
const (
	maxConfigBytes = 1 << 20
	maxHeaderBytes = 1 << 20
)

// readCapped reads the file name of fsys, refusing one over limit bytes
// before reading it (and reading no more than limit+1 bytes if it grows).
func readCapped(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		if st.Size() > limit {
			return nil, fmt.Errorf("%s has %d bytes, over the %d this model can have", name, st.Size(), limit)
		}
		size = st.Size()
	}
	// Sized from the stat, as os.ReadFile does: ReadAll's doubling would
	// allocate up to twice the weights.
	b := make([]byte, size+1)
	n, err := io.ReadFull(f, b)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		b = b[:n] // the whole file
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	default: // longer than its stat said: the rest, within the cap
		rest, err := io.ReadAll(io.LimitReader(f, limit+1-int64(n)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		b = append(b, rest...)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s has over %d bytes, the most this model can have", name, limit)
	}
	return b, nil
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// NewModel returns a model with He-initialised weights drawn from normal (a
// function returning standard normal samples), zero biases and CRF
// parameters, and identity standardisation. cfg.Hidden must list three
// widths.
func NewModel(cfg Config, normal func() float64) (*Model, error) {
	cfg.Kind = Kind
	if cfg.Features == nil {
		cfg.Features = FeatureNames
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &Model{Cfg: cfg}
	F := len(cfg.Features)
	m.Mean = make([]float32, F)
	m.Std = make([]float32, F)
	for i := range m.Std {
		m.Std[i] = 1
	}
	for i, sh := range cfg.ParamShapes() {
		p := make([]float32, numel(sh))
		if i <= ParamWH && i%2 == 0 || i >= ParamWQ {
			s := math.Sqrt(2 / float64(sh[0]))
			if i == ParamWQ || i == ParamWK {
				s = math.Sqrt(1 / float64(sh[0]))
			}
			for j := range p {
				p[j] = float32(normal() * s)
			}
		}
		if i == ParamEmbQ || i == ParamEmbT {
			for j := range p[cfg.Embed:] { // bucket 0 ("none") stays zero
				p[cfg.Embed+j] = float32(normal() * 0.1)
			}
		}
		m.P = append(m.P, p)
	}
	return m, nil
}

// Standardise returns (X − mean) / std.
func (m *Model) Standardise(X []float32) []float32 {
	out := make([]float32, len(X))
	m.standardiseInto(out, X)
	return out
}

func (m *Model) standardiseInto(dst, X []float32) {
	F := len(m.Mean)
	for i := 0; i+F <= len(X); i += F {
		for j := 0; j < F; j++ {
			dst[i+j] = (X[i+j] - m.Mean[j]) / m.Std[j]
		}
	}
}

// gemm runs inference products on one goroutine (Score is called
// concurrently by the library, one call per core), with the AVX2 kernel
// where the CPU has it.
var gemm = fastcpu.NewGemm(fastcpu.WithWorkers(1))

// dense computes dst = relu?(x·w + b) for n rows of x (n×in, w in×out).
func dense(dst, x, w, b []float32, n, in, out int, relu bool) {
	gemm.MatMul(1, n, out, in,
		fastcpu.Strided{Data: x, BatchStride: n * in, RowStride: in, ColStride: 1},
		fastcpu.Strided{Data: w, BatchStride: in * out, RowStride: out, ColStride: 1}, dst)
	for i := 0; i < n; i++ {
		d := dst[i*out : (i+1)*out]
		for j, bj := range b {
			v := d[j] + bj
			if relu && v < 0 {
				v = 0
			}
			d[j] = v
		}
	}
}

// defPool is the sum of h over the lines of each definition and the
// inverse of their count.
type defPool struct {
	sums   map[int32][]float32
	counts map[int32]int
	inv    map[int32]float32
}

func defMeans(h []float32, def []int32, n, H int) defPool {
	dm := newDefPool()
	dm.add(h[:n*H], def[:n], H)
	dm.finish()
	return dm
}

func newDefPool() defPool {
	return defPool{sums: map[int32][]float32{}, counts: map[int32]int{}}
}

// add adds the rows of h (len(def)×H), in order, to their definitions'
// sums: adding a text's rows in any number of calls, in order, sums
// exactly as one call does.
func (dm defPool) add(h []float32, def []int32, H int) {
	for i, d := range def {
		if d < 0 {
			continue
		}
		s := dm.sums[d]
		if s == nil {
			s = make([]float32, H)
			dm.sums[d] = s
		}
		for j, v := range h[i*H : (i+1)*H] {
			s[j] += v
		}
		dm.counts[d]++
	}
}

// finish computes the inverse counts once every row is added.
func (dm *defPool) finish() {
	dm.inv = make(map[int32]float32, len(dm.counts))
	for d, c := range dm.counts {
		dm.inv[d] = 1 / float32(c)
	}
}

// poolReach is how many lines around a line the context pooling reads.
const poolReach = 3

// poolRows writes, for each row i in [s, e) of h's n rows (H wide), the
// row itself, the mean of its ±1 neighbours, the mean of its ±2 and ±3
// neighbours and the mean over the lines of its definition (def ids, -1 =
// none). Missing neighbours count as zero rows, so the pooling is the
// fixed symmetric linear map the training graph uses. It writes to z
// from its start (row stride zw ≥ 4H; the first 4H columns of each row);
// h holds rows from base on, at least those within poolReach of [s, e).
func poolRows(z, h []float32, base int, def []int32, dm defPool, s, e, n, H, zw int) {
	for i := s; i < e; i++ {
		zi := z[(i-s)*zw : (i-s)*zw+4*H]
		copy(zi[:H], h[(i-base)*H:(i-base+1)*H])
		c1, c23, cd := zi[H:2*H], zi[2*H:3*H], zi[3*H:]
		clear(zi[H:])
		for _, o := range [...]int{-1, 1, -2, 2, -3, 3} {
			j := i + o
			if j < 0 || j >= n {
				continue
			}
			dst, w := c1, float32(0.5)
			if o < -1 || o > 1 {
				dst, w = c23, 0.25
			}
			for k, v := range h[(j-base)*H : (j-base+1)*H] {
				dst[k] += w * v
			}
		}
		if d := def[i]; d >= 0 {
			inv := dm.inv[d]
			for k, v := range dm.sums[d] {
				cd[k] = v * inv
			}
		}
	}
}

// MaxAttnBand bounds Config.AttnBand: the streamed forward pass holds the
// block it scores and its two neighbours, so a line's band must fit in
// one block on either side.
const MaxAttnBand = 256

// The streamed pass's window (three blocks) must hold a band each side.
const _ = uint(forwardBlock - MaxAttnBand)

// attention holds the scratch of attendRows.
type attention struct {
	q, k, v []float32
	w       []float64
}

// attendRows writes, for rows [s, e) of the n rows, the attention output
// (A wide) into columns [off, off+A) of z's rows (stride zw): row i's
// query meets the keys of rows within band of i, and the softmax of
// their scaled dot products weights their values. h holds the second
// trunk layer's rows from base on, at least those within band of [s, e).
func (m *Model) attendRows(at *attention, z, h []float32, base, s, e, n, H, zw, off int) {
	A, band := m.Cfg.Attn, m.Cfg.AttnBand
	lo, hi := max(0, s-band), min(n, e+band)
	k := e - s
	at.q = grow(at.q, k*A)
	at.k = grow(at.k, (hi-lo)*A)
	at.v = grow(at.v, (hi-lo)*A)
	at.w = grow(at.w, 2*band+1)
	dense(at.q, h[(s-base)*H:(e-base)*H], m.P[ParamWQ], nil, k, H, A, false)
	dense(at.k, h[(lo-base)*H:(hi-base)*H], m.P[ParamWK], nil, hi-lo, H, A, false)
	dense(at.v, h[(lo-base)*H:(hi-base)*H], m.P[ParamWV], nil, hi-lo, H, A, false)
	scale := 1 / math.Sqrt(float64(A))
	for i := s; i < e; i++ {
		qi := at.q[(i-s)*A : (i-s+1)*A]
		j0, j1 := max(0, i-band), min(n, i+band+1)
		w := at.w[:j1-j0]
		mx := math.Inf(-1)
		for j := j0; j < j1; j++ {
			kj := at.k[(j-lo)*A : (j-lo+1)*A]
			d := float32(0)
			for c, qv := range qi {
				d += qv * kj[c]
			}
			w[j-j0] = float64(d) * scale
			mx = max(mx, w[j-j0])
		}
		sum := 0.0
		for t := range w {
			w[t] = math.Exp(w[t] - mx)
			sum += w[t]
		}
		out := z[(i-s)*zw+off : (i-s)*zw+off+A]
		clear(out)
		for j := j0; j < j1; j++ {
			a := float32(w[j-j0] / sum)
			for c, vv := range at.v[(j-lo)*A : (j-lo+1)*A] {
				out[c] += a * vv
			}
		}
	}
}

// grow returns b resized to n, reusing its array when it is large enough.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// Outputs are the per-line quantities of one forward pass.
type Outputs struct {
	// Sem and Dep are the rubric heads' keep emissions (drop is 0).
	Sem, Dep []float32
	// Gate is the semantic rubric's gate weight (the dependency rubric's is
	// 1 − Gate).
	Gate []float32
	// Fused is the gated keep emission Gate·Sem + (1−Gate)·Dep.
	Fused []float32
	// RankHead is the ranking head's score.
	RankHead []float32
	// Keep is the fused CRF's marginal P(keep).
	Keep []float32
}

// Input is what the model reads of a text and query.
type Input struct {
	// X is the raw n×NumFeatures feature matrix.
	X []float32
	N int
	// Def is the innermost definition of each line (-1 = none).
	Def []int32
	// QIDs are the query's hashed pieces, TIDs the lines' (n×MaxLineIDs).
	QIDs, TIDs []uint16
	// Tree is the parse the features were computed from (nil when the text
	// was not parsed), for callers that need it too (the repair pass).
	Tree *syntax.Tree
	// rows, when X is nil (NewInputRows), computes rows of X on demand,
	// so that inference never holds the n×NumFeatures matrix; pool
	// accumulates their column statistics as they are computed.
	rows *featureState
	pool *columnPool
}

// columnPool accumulates the maximum and sum of each feature column over
// the rows computed so far.
type columnPool struct {
	max, sum []float64
	rows     int
}

// Row returns row i of the feature matrix: a slice of X, or, for an input
// of NewInputRows, dst (NumFeatures long) filled with it.
func (in Input) Row(i int, dst []float32) []float32 {
	F := NumFeatures
	if in.rows == nil {
		return in.X[i*F : (i+1)*F]
	}
	clear(dst)
	in.rows.writeRow(dst, i)
	if p := in.pool; p != nil {
		for j, v := range dst {
			if p.rows == 0 {
				p.max[j] = float64(v)
			} else {
				p.max[j] = max(p.max[j], float64(v))
			}
			p.sum[j] += float64(v)
		}
		p.rows++
	}
	return dst
}

// Pooled returns the maximum and the mean over the rows of feature column
// j. For an input of NewInputRows it reads what the forward pass computed
// (each row once, in order), computing the rows itself when it did not.
func (in Input) Pooled(j int) (mx, mean float64) {
	if in.N == 0 {
		return 0, 0
	}
	if in.rows != nil && in.pool != nil && in.pool.rows == in.N {
		return in.pool.max[j], in.pool.sum[j] / float64(in.N)
	}
	mx = math.Inf(-1)
	sum := 0.0
	buf := make([]float32, NumFeatures)
	for i := 0; i < in.N; i++ {
		var v float64
		if in.rows == nil {
			v = float64(in.X[i*NumFeatures+j])
		} else {
			clear(buf)
			in.rows.writeRow(buf, i)
			v = float64(buf[j])
		}
		mx = max(mx, v)
		sum += v
	}
	return mx, sum / float64(in.N)
}

// NewInput computes the model input of text for query. When ctx is done
// it returns early with an empty input (N = 0); the caller looks at
// ctx.Err().
func NewInput(ctx context.Context, query, text string, lang syntax.Language) Input {
	in, _ := newInput(ctx, query, text, lang)
	return in
}

// NewInputRows is NewInput without the feature matrix: its rows are
// computed when the forward pass (or Row) asks for them, once each, so a
// call holds NumFeatures floats per line only for the lines of one block.
// The rows equal NewInput's bit for bit.
func NewInputRows(ctx context.Context, query, text string, lang syntax.Language) Input {
	lines := splitLines(ctx, text)
	n := len(lines)
	var f *featureState
	if n > 0 {
		if f = prepareFeatures(ctx, query, lines, text, lang); f == nil {
			return Input{}
		}
	}
	if ctx.Err() != nil {
		return Input{}
	}
	var st syntaxInfo
	if f != nil {
		st = f.st
	}
	def := st.def
	if len(def) != n {
		def = st.defIDs(n)
	}
	tids := lineIDs(ctx, lines)
	if ctx.Err() != nil {
		return Input{}
	}
	F := NumFeatures
	return Input{N: n, Def: def, QIDs: QueryIDs(query), TIDs: tids, Tree: st.tree,
		rows: f, pool: &columnPool{max: make([]float64, F), sum: make([]float64, F)}}
}

// newInput is NewInput that also returns the syntax analysis the features
// came from (empty when ctx is done).
func newInput(ctx context.Context, query, text string, lang syntax.Language) (Input, syntaxInfo) {
	lines := splitLines(ctx, text)
	X, n, st := features(ctx, query, lines, text, lang)
	if ctx.Err() != nil {
		return Input{}, syntaxInfo{}
	}
	def := st.def
	if len(def) != n {
		def = st.defIDs(n)
	}
	tids := lineIDs(ctx, lines)
	if ctx.Err() != nil {
		return Input{}, syntaxInfo{}
	}
	return Input{X: X, N: n, Def: def, QIDs: QueryIDs(query), TIDs: tids, Tree: st.tree}, st
}

// Analysis is a text's model input together with the syntax analysis its
// features came from. Training (package train) builds its semantic labels
// from it, widening a gold line to its enclosing statement (Enclosing);
// inference needs only the Input (NewInput).
type Analysis struct {
	Input
	st syntaxInfo
}

// Analyse is NewInput that also keeps the syntax analysis (see Analysis).
// When ctx is done it returns an empty analysis (N = 0).
func Analyse(ctx context.Context, query, text string, lang syntax.Language) Analysis {
	in, st := newInput(ctx, query, text, lang)
	return Analysis{Input: in, st: st}
}

// Enclosing returns the rows (0-based, inclusive) of the smallest
// multi-line syntax node that contains row r, found from the outermost
// node beginning on r walking up, when it spans at most maxSpan rows; ok
// is false otherwise and when the text was not parsed.
func (a *Analysis) Enclosing(r, maxSpan int) (lo, hi int, ok bool) {
	return a.st.enclosing(r, maxSpan)
}

// embedRows writes, for each of the n rows, the mean embedding of the
// bucket ids ids[i*k:(i+1)*k] (0 = none) into dst (n×D).
func embedRows(dst []float32, emb []float32, ids []uint16, n, k, D int) {
	for i := 0; i < n; i++ {
		d := dst[i*D : (i+1)*D]
		cnt := 0
		for _, id := range ids[i*k : (i+1)*k] {
			if id == 0 || int(id) >= NumBuckets {
				continue
			}
			cnt++
			for j, v := range emb[int(id)*D : (int(id)+1)*D] {
				d[j] += v
			}
		}
		if cnt > 0 {
			inv := 1 / float32(cnt)
			for j := range d {
				d[j] *= inv
			}
		}
	}
}

// forwardBlock is how many lines the forward pass takes at a time: the
// layers live in per-block buffers, except the second trunk layer's
// activations, which the context pooling reads around each line and over
// each definition.
const forwardBlock = 512

// streamRows is the line count above which the forward pass does not keep
// the second trunk layer's activations for the whole text (48 floats a
// line: 130 MB for 700K lines) but computes them twice, block by block:
// once for the definitions' sums, once beside the pooling, holding three
// blocks. Each block is computed with the same bounds both times, so the
// outputs are bit for bit those of the one-pass forward; the second pass
// costs about a quarter more forward time, which is why short texts keep
// the one pass.
const streamRows = 32 * forwardBlock

// Forward runs the model on one input.
func (m *Model) Forward(in Input) Outputs {
	o, _ := m.ForwardContext(context.Background(), in)
	return o
}

// ForwardContext is Forward that stops between blocks of lines when ctx
// is done, returning ctx.Err().
func (m *Model) ForwardContext(ctx context.Context, in Input) (Outputs, error) {
	return m.forward(ctx, in, in.N > streamRows)
}

// trunk computes the first two trunk layers for lines [s, e) into dst
// ((e−s)×h2), with its scratch buffers.
type trunk struct {
	m            *Model
	in           Input
	u, v, x, a1  []float32
	raw          []float32
	hasTIDs      bool
	F, FI, D, h1 int
	h2           int
}

func (t *trunk) block(dst []float32, s, e int) {
	m, F, FI, D := t.m, t.F, t.FI, t.D
	k := e - s
	v := t.v[:k*D]
	clear(v)
	if t.hasTIDs {
		embedRows(v, m.P[ParamEmbT], t.in.TIDs[s*MaxLineIDs:e*MaxLineIDs], k, MaxLineIDs, D)
	}
	for i := 0; i < k; i++ {
		row := t.x[i*FI : (i+1)*FI]
		m.standardiseInto(row[:F], t.in.Row(s+i, t.raw))
		vi := v[i*D : (i+1)*D]
		copy(row[F:F+D], t.u)
		copy(row[F+D:F+2*D], vi)
		for j := range D {
			row[F+2*D+j] = t.u[j] * vi[j]
		}
	}
	dense(t.a1[:k*t.h1], t.x[:k*FI], m.P[ParamW1], m.P[ParamB1], k, FI, t.h1, true)
	dense(dst, t.a1[:k*t.h1], m.P[ParamW2], m.P[ParamB2], k, t.h1, t.h2, true)
}

// forward is ForwardContext; stream selects the two-pass trunk that holds
// three blocks of activations instead of all of them.
func (m *Model) forward(ctx context.Context, in Input, stream bool) (Outputs, error) {
	var o Outputs
	n := in.N
	if n == 0 {
		return o, ctx.Err()
	}
	F := len(m.Mean)
	h1, h2, h3, D := m.Cfg.Hidden[0], m.Cfg.Hidden[1], m.Cfg.Hidden[2], m.Cfg.Embed
	bs := min(n, forwardBlock)
	t := &trunk{
		m: m, in: in, F: F, FI: F + 3*D, D: D, h1: h1, h2: h2,
		u: make([]float32, D), v: make([]float32, bs*D),
		x: make([]float32, bs*(F+3*D)), a1: make([]float32, bs*h1),
		raw:     make([]float32, NumFeatures), // a row of an input without X
		hasTIDs: len(in.TIDs) >= n*MaxLineIDs,
	}
	if len(in.QIDs) > 0 {
		embedRows(t.u, m.P[ParamEmbQ], in.QIDs, 1, len(in.QIDs), D)
	}
	def := in.Def
	if len(def) < n {
		def = make([]int32, n)
		for i := range def {
			def[i] = -1
		}
	}
	// a2 holds the second layer's rows [a2Lo, a2Lo+len(a2)/h2): every row
	// without stream, else the window around the block being pooled.
	var a2 []float32
	var dm defPool
	if !stream {
		a2 = make([]float32, n*h2)
		for s := 0; s < n; s += bs {
			if err := ctx.Err(); err != nil {
				return Outputs{}, err
			}
			e := min(n, s+bs)
			t.block(a2[s*h2:e*h2], s, e)
		}
		dm = defMeans(a2, def, n, h2)
	} else {
		buf := make([]float32, bs*h2)
		dm = newDefPool()
		for s := 0; s < n; s += bs {
			if err := ctx.Err(); err != nil {
				return Outputs{}, err
			}
			e := min(n, s+bs)
			t.block(buf[:(e-s)*h2], s, e)
			dm.add(buf[:(e-s)*h2], def[s:e], h2)
		}
		dm.finish()
	}
	// blocks caches the streamed pass's computed blocks by index (at most
	// three live: the one pooled and its neighbours).
	blocks := map[int][]float32{}
	var free [][]float32
	blockRows := func(b int) []float32 {
		if r, ok := blocks[b]; ok {
			return r
		}
		var r []float32
		if len(free) > 0 {
			r, free = free[len(free)-1], free[:len(free)-1]
		} else {
			r = make([]float32, bs*h2)
		}
		s, e := b*bs, min(n, (b+1)*bs)
		t.block(r[:(e-s)*h2], s, e)
		blocks[b] = r
		return r
	}
	reach, A := poolReach, m.Cfg.Attn
	if A > 0 {
		reach = max(reach, m.Cfg.AttnBand)
	}
	zw := 4*h2 + A
	var at attention
	var win []float32
	if stream {
		win = make([]float32, (bs+2*reach)*h2)
	}
	z := make([]float32, bs*zw)
	a3 := make([]float32, bs*h3)
	hd := make([]float32, bs*NumHeads)
	o.Sem, o.Dep, o.Gate, o.Fused, o.Keep = make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	o.RankHead = make([]float32, n)
	em := make([]float32, 2*n)
	for s := 0; s < n; s += bs {
		if err := ctx.Err(); err != nil {
			return Outputs{}, err
		}
		e := min(n, s+bs)
		k := e - s
		h, base := a2, 0
		if stream {
			b := s / bs
			if r, ok := blocks[b-2]; ok {
				delete(blocks, b-2)
				free = append(free, r)
			}
			lo, hi := max(0, s-reach), min(n, e+reach)
			for r := lo; r < hi; r++ {
				rows := blockRows(r / bs)
				j := r % bs
				copy(win[(r-lo)*h2:(r-lo+1)*h2], rows[j*h2:(j+1)*h2])
			}
			h, base = win[:(hi-lo)*h2], lo
		}
		poolRows(z, h, base, def, dm, s, e, n, h2, zw)
		if A > 0 {
			m.attendRows(&at, z, h, base, s, e, n, h2, zw, 4*h2)
		}
		dense(a3[:k*h3], z[:k*zw], m.P[ParamW3], m.P[ParamB3], k, zw, h3, true)
		dense(hd[:k*NumHeads], a3[:k*h3], m.P[ParamWH], m.P[ParamBH], k, h3, NumHeads, false)
		for i := s; i < e; i++ {
			r := hd[(i-s)*NumHeads : (i-s+1)*NumHeads]
			g := float32(1 / (1 + math.Exp(float64(r[3]-r[2])))) // softmax over two logits
			o.Sem[i], o.Dep[i], o.Gate[i], o.RankHead[i] = r[0], r[1], g, r[4]
			o.Fused[i] = g*r[0] + (1-g)*r[1]
			em[2*i+1] = o.Fused[i]
		}
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
			return o, nil
		}
	}
	// Unreachable with valid parameters; fall back to the emission alone.
	for i, s := range o.Fused {
		o.Keep[i] = float32(1 / (1 + math.Exp(-float64(s))))
	}
	return o, nil
}

// sanitizeProb maps NaN to 0 and clamps to [0,1], so callers can rely on
// the range whatever the weights.
func sanitizeProb(p float32) float32 {
	if !(p >= 0) {
		return 0
	}
	return min(p, 1)
}

// Score returns one value per line of text (split as evalset.Lines): the
// model's keep probability, the fused CRF's marginal P(keep) in [0,1]. A
// value ≥ 0.5 is the model's own keep decision.
func (m *Model) Score(ctx context.Context, query, text string, lang syntax.Language) []float32 {
	in := NewInput(ctx, query, text, lang)
	o := m.Forward(in)
	out := o.Keep
	if out == nil {
		out = make([]float32, in.N)
	}
	for i, p := range out {
		out[i] = sanitizeProb(p)
	}
	return out
}

// Rank returns one ranking score per line (higher = keep first): the score
// the fixed-budget evaluation ranks by (see Config.RankMix).
func (m *Model) Rank(ctx context.Context, query, text string, lang syntax.Language) []float32 {
	return m.RankOutputs(m.Forward(NewInput(ctx, query, text, lang)))
}

// RankInput is Rank on a precomputed input.
func (m *Model) RankInput(in Input) []float32 {
	return m.RankOutputs(m.Forward(in))
}

// RankOutputs turns forward outputs into ranking scores.
func (m *Model) RankOutputs(o Outputs) []float32 {
	a := float32(m.Cfg.RankMix)
	out := make([]float32, len(o.Keep))
	for i, p := range o.Keep {
		pp := float64(min(max(p, 1e-7), 1-1e-7))
		v := o.RankHead[i] + a*float32(math.Log(pp/(1-pp)))
		if v != v { // NaN
			v = float32(math.Inf(-1))
		}
		out[i] = v
	}
	return out
}

// Tensors returns the model's weights as safetensors tensors.
func (m *Model) Tensors() []safetensors.Tensor {
	ts := []safetensors.Tensor{
		safetensors.NewFloat32Tensor("feature_mean", []int{len(m.Mean)}, m.Mean),
		safetensors.NewFloat32Tensor("feature_std", []int{len(m.Std)}, m.Std),
	}
	for i, sh := range m.Cfg.ParamShapes() {
		if numel(sh) == 0 {
			continue // attention off: the checkpoint has no such tensor
		}
		ts = append(ts, safetensors.NewFloat32Tensor(paramNames[i], sh, m.P[i]))
	}
	return ts
}

// Save writes dir/model.safetensors and dir/config.json.
func (m *Model) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), m.Tensors(), map[string]string{"kind": Kind}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m.Cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), append(b, '\n'), 0o644)
}

// Load reads a model saved by Save.
func Load(dir string) (*Model, error) {
	return LoadFS(os.DirFS(dir), dir)
}

// LoadFS reads a model saved by Save from the root of fsys (for instance the
// embedded weights); name labels errors.
func LoadFS(fsys fs.FS, name string) (*Model, error) {
	b, err := readCapped(fsys, "config.json", maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("linemodel: %s: %w", name, err)
	}
	var cfg Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("linemodel: %s/config.json: %w", name, err)
	}
	if cfg.Kind != Kind {
		return nil, fmt.Errorf("linemodel: %s: kind %q, want %q", name, cfg.Kind, Kind)
	}
	if fmt.Sprint(cfg.Features) != fmt.Sprint(FeatureNames) {
		return nil, errors.New("linemodel: checkpoint features differ from this build's features")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	F := len(cfg.Features)
	// The weights' size follows from the config: a file much larger is no
	// model of it, and is refused before it is read into memory.
	want := int64(2*F) * 4
	for _, sh := range cfg.ParamShapes() {
		want += int64(numel(sh)) * 4
	}
	data, err := readCapped(fsys, "model.safetensors", want+maxHeaderBytes)
	if err != nil {
		return nil, fmt.Errorf("linemodel: %s: %w", name, err)
	}
	f, err := safetensors.OpenBytes(name+"/model.safetensors", data)
	if err != nil {
		return nil, fmt.Errorf("linemodel: %w", err)
	}
	defer f.Close()
	m := &Model{Cfg: cfg}
	// NaN or infinite weights load as numbers and score every line 0
	// (or NaN): refused by name, as the Qwen checkpoints' are.
	if m.Mean, err = f.Float32Finite("feature_mean"); err != nil {
		return nil, err
	}
	if m.Std, err = f.Float32Finite("feature_std"); err != nil {
		return nil, err
	}
	if len(m.Mean) != F || len(m.Std) != F {
		return nil, fmt.Errorf("linemodel: %s: standardisation has %d/%d entries, want %d", name, len(m.Mean), len(m.Std), F)
	}
	for i, sd := range m.Std {
		if !(sd > 0) {
			return nil, fmt.Errorf("linemodel: %s: feature_std[%d] (%s) is %g: features are divided by it", name, i, cfg.Features[i], sd)
		}
	}
	// Name every missing tensor at once: a config that does not match
	// its weights (attention asked for, weights without it) usually
	// misses several.
	var missing []string
	for i, sh := range cfg.ParamShapes() {
		if _, ok := f.Info(paramNames[i]); !ok && numel(sh) > 0 {
			missing = append(missing, paramNames[i])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("linemodel: %s: config.json asks for tensors the weights lack: %s", name, strings.Join(missing, ", "))
	}
	for i, sh := range cfg.ParamShapes() {
		if numel(sh) == 0 {
			m.P = append(m.P, nil)
			continue
		}
		// The shape, not only the count: a transposed matrix has the
		// right count and is a different model.
		if err := f.Expect(paramNames[i], sh...); err != nil {
			return nil, fmt.Errorf("linemodel: %s: %w", name, err)
		}
		p, err := f.Float32Finite(paramNames[i])
		if err != nil {
			return nil, err
		}
		m.P = append(m.P, p)
	}
	return m, nil
}
