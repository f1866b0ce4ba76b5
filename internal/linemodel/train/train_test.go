package train

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/syntax"
)

// goSrc is a small Go file the fixtures ask about: linemodel's testdata,
// which linemodel's and examples/train's tests read too.
var goSrc = func() string {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "range.go.txt"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func fixtureCases(n int) []Case {
	var cs []Case
	for i := 0; i < n; i++ {
		gold := []int{12}
		q := "Handle bad range headers in parseRange"
		if i%2 == 1 {
			gold = []int{21}
			q = "atoi: multiply digits correctly"
		}
		cs = append(cs, Case{Case: evalset.Case{ID: fmt.Sprintf("c%d", i), Repo: "x/y", Lang: "go", Path: "main.go",
			Query: q, Text: goSrc, GoldLines: gold}, Split: []string{"train", "val"}[i%3/2]})
	}
	return cs
}

func TestReadGzip(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, c := range fixtureCases(3) {
		b, _ := json.Marshal(c)
		zw.Write(append(b, '\n'))
	}
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "go_x.jsonl.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || len(Split(cs, "val")) != 1 || cs[0].Text != goSrc {
		t.Fatalf("got %d cases, %d val", len(cs), len(Split(cs, "val")))
	}
}

func TestFeaturesAndTargets(t *testing.T) {
	ctx := context.Background()
	c := fixtureCases(1)[0]
	ex, err := NewExample(ctx, c, true)
	if err != nil {
		t.Fatal(err)
	}
	n := len(evalset.Lines(goSrc))
	if ex.N != n || len(ex.X) != n*linemodel.NumFeatures || len(linemodel.FeatureNames) != linemodel.NumFeatures {
		t.Fatalf("N=%d X=%d want n=%d F=%d", ex.N, len(ex.X), n, linemodel.NumFeatures)
	}
	col := func(name string, line int) float32 {
		for j, f := range linemodel.FeatureNames {
			if f == name {
				return ex.X[(line-1)*linemodel.NumFeatures+j]
			}
		}
		t.Fatalf("no feature %s", name)
		return 0
	}
	if col("role_def", 9) != 1 || col("role_import", 3) != 1 || col("role_blank", 2) != 1 || col("role_control", 11) != 1 {
		t.Errorf("roles: def %v import %v blank %v control %v", col("role_def", 9), col("role_import", 3), col("role_blank", 2), col("role_control", 11))
	}
	if col("def_name_share", 12) <= 0 || col("has_def", 12) != 1 {
		t.Errorf("line 12 in parseRange: name share %v", col("def_name_share", 12))
	}
	tg := ex.Targets(0.5)
	if tg[11] != 1 || tg[8] <= 0 || tg[8] >= 1 {
		t.Errorf("targets: gold %v, header %v", tg[11], tg[8])
	}
	// Text gives no syntax but still features.
	X, m := linemodel.Features(ctx, "q", "a\nb\n", syntax.Text)
	if m != 2 || len(X) != 2*linemodel.NumFeatures {
		t.Fatal("text features")
	}
}

func fixtureExamples(t *testing.T, n int) []Example {
	t.Helper()
	exs, err := BuildExamples(context.Background(), fixtureCases(n), true, 2, nil)
	require.NoError(t, err)
	return exs
}

func newTestModel(t *testing.T, exs []Example) *linemodel.Model {
	t.Helper()
	return newTestModelCfg(t, exs, linemodel.Config{Hidden: []int{8, 6, 5}, Embed: 4, Lambda: 0.5, Listwise: 0.5, GateReg: 0.01})
}

func newTestModelCfg(t *testing.T, exs []Example, cfg linemodel.Config) *linemodel.Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := linemodel.NewModel(cfg, rng.NormFloat64)
	require.NoError(t, err)
	SetStandardisation(m, exs)
	return m
}

// attnConfig is the test model with an attention head whose band (3
// lines) is narrower than the cases, so the band mask matters.
var attnConfig = linemodel.Config{Hidden: []int{8, 6, 5}, Embed: 4, Lambda: 0.5, Listwise: 0.5, GateReg: 0.01, Attn: 3, AttnBand: 3}

// TestGradientMatchesAutodiff checks the hand-written backward pass of the
// training graph against GoMLX's own autodiff of the same loss, without
// and with the attention head.
func TestGradientMatchesAutodiff(t *testing.T) {
	exs := fixtureExamples(t, 3)
	for _, tc := range []struct {
		name string
		cfg  linemodel.Config
	}{
		{"plain", linemodel.Config{Hidden: []int{8, 6, 5}, Embed: 4, Lambda: 0.5, Listwise: 0.5, GateReg: 0.01}},
		{"attention", attnConfig},
	} {
		t.Run(tc.name, func(t *testing.T) { checkGradient(t, exs, newTestModelCfg(t, exs, tc.cfg)) })
	}
}

func checkGradient(t *testing.T, exs []Example, m *linemodel.Model) {
	// Random CRF parameters and biases so every gradient is exercised.
	rng := rand.New(rand.NewPCG(5, 6))
	for i := linemodel.ParamB1; i < linemodel.NumParams; i++ {
		if i%2 == 1 || i >= linemodel.ParamTransF {
			for j := range m.P[i] {
				m.P[i][j] = float32(rng.NormFloat64() * 0.3)
			}
		}
	}
	tr, err := NewTrainer(m, TrainOptions{Batch: 4, MaxLines: 40, TargetDep: 0.3}, nil)
	require.NoError(t, err)
	args := tr.batchInputs([]*Example{&exs[0], &exs[1], &exs[2]})
	backend, err := simplego.New("ops_sequential")
	require.NoError(t, err)
	cfg := m.Cfg
	ref, err := G.NewExec(backend, func(in []*G.Node) []*G.Node {
		P := in[numInputs:]
		f := buildForward(in, P, cfg.AttnBand, true)
		total, _, _ := lossGraph(cfg, in, P, f.sSem, f.sDep, f.gl, f.rank)
		return append([]*G.Node{total}, G.Gradient(total, P...)...)
	})
	require.NoError(t, err)
	want, err := ref.Exec(args...)
	require.NoError(t, err)
	got, err := tr.exec.Exec(tr.batchInputs([]*Example{&exs[0], &exs[1], &exs[2]})...)
	require.NoError(t, err)
	assert.InDelta(t, tensors.MustCopyFlatData[float32](want[0])[0], tensors.MustCopyFlatData[float32](got[0])[0], 1e-5)
	// Tensors lists the standardisation (2 tensors), then the parameters.
	paramNames := m.Tensors()[2:]
	require.Len(t, paramNames, cfg.NumParams())
	for i := 0; i < cfg.NumParams(); i++ {
		w := tensors.MustCopyFlatData[float32](want[1+i])
		g := tensors.MustCopyFlatData[float32](got[3+i])
		require.Len(t, g, len(w), paramNames[i].Name)
		scale := float32(1e-3)
		for _, v := range w {
			scale = max(scale, float32(math.Abs(float64(v))))
		}
		for j := range w {
			assert.InDelta(t, w[j], g[j], float64(2e-4*scale), "%s[%d]", paramNames[i].Name, j)
		}
	}
}

func trainOpts(dir string, stopAfter int) TrainOptions {
	return TrainOptions{Epochs: 1000, Batch: 4, MaxLines: 40, LR: 1e-2, TargetDep: 0.3, Seed: 1, Out: dir, StopAfter: stopAfter}
}

// TestTrainLearnsFixture pins that training lowers the loss on a tiny task
// and ranks its gold lines first.
func TestTrainLearnsFixture(t *testing.T) {
	exs := fixtureExamples(t, 8)
	m := newTestModel(t, exs)
	tr, err := NewTrainer(m, trainOpts("", 60), nil)
	require.NoError(t, err)
	batch := []*Example{&exs[0], &exs[1], &exs[2], &exs[3]}
	first, err := tr.TrainStep(batch)
	require.NoError(t, err)
	require.NoError(t, tr.Train(exs))
	assert.Equal(t, 60, tr.Step())
	last, err := tr.TrainStep(batch)
	require.NoError(t, err)
	assert.Less(t, last.Total, first.Total/2, "loss must go down")
	assert.Less(t, last.Fused, first.Fused)
	s := Evaluate(exs, 0.2, func(ex *Example) []float32 { return m.RankInput(ex.Input()) })
	assert.GreaterOrEqual(t, s.Mean.Recall, 0.99)
}

func readAll(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{"config.json", "model.safetensors", "optim.safetensors", "state.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil {
			out[f] = b
		}
	}
	return out
}

// TestCheckpointRoundTrip pins Save → Load → Save giving identical bytes and
// identical scores.
func TestCheckpointRoundTrip(t *testing.T) {
	exs := fixtureExamples(t, 8)
	for _, tc := range []struct {
		name string
		m    *linemodel.Model
	}{{"plain", newTestModel(t, exs)}, {"attention", newTestModelCfg(t, exs, attnConfig)}} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			a, b := t.TempDir(), t.TempDir()
			tr, err := NewTrainer(m, trainOpts(a, 5), nil)
			require.NoError(t, err)
			require.NoError(t, tr.Train(exs))
			m2, err := linemodel.Load(a)
			require.NoError(t, err)
			require.NoError(t, m2.Save(b))
			ra, rb := readAll(t, a), readAll(t, b)
			for _, f := range []string{"config.json", "model.safetensors"} {
				require.NotEmpty(t, ra[f])
				assert.Equal(t, ra[f], rb[f], f)
			}
			ctx := context.Background()
			assert.Equal(t, m.Score(ctx, "parseRange", goSrc, syntax.Go), m2.Score(ctx, "parseRange", goSrc, syntax.Go))
			tr2, err := NewTrainer(m2, trainOpts(b, 6), nil)
			require.NoError(t, err)
			require.NoError(t, tr2.Resume(a), "the optimizer state must load too")
		})
	}
}

// TestLoadNamesMissingAttention: a config that asks for attention over
// weights without it fails naming the tensor.
func TestLoadNamesMissingAttention(t *testing.T) {
	exs := fixtureExamples(t, 2)
	dir := t.TempDir()
	require.NoError(t, newTestModel(t, exs).Save(dir))
	cfgPath := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	b = []byte(strings.Replace(string(b), `"embed": 4,`, `"embed": 4, "attn": 3, "attn_band": 3,`, 1))
	require.NoError(t, os.WriteFile(cfgPath, b, 0o644))
	_, err = linemodel.Load(dir)
	require.ErrorContains(t, err, "attention.query")
}

// TestResumeMatchesStraightRun pins that N steps straight and N/2 steps,
// a checkpoint, a resume and N/2 more give the same step count and
// bit-identical weights and optimizer state.
func TestResumeMatchesStraightRun(t *testing.T) {
	exs := fixtureExamples(t, 8)
	const n = 10 // 2 steps per epoch: the split falls mid-epoch
	straight, split := t.TempDir(), t.TempDir()
	tr, err := NewTrainer(newTestModel(t, exs), trainOpts(straight, n), nil)
	require.NoError(t, err)
	require.NoError(t, tr.Train(exs))

	tr, err = NewTrainer(newTestModel(t, exs), trainOpts(split, n/2+1), nil)
	require.NoError(t, err)
	require.NoError(t, tr.Train(exs))
	m, err := linemodel.Load(split)
	require.NoError(t, err)
	tr2, err := NewTrainer(m, trainOpts(split, n), nil)
	require.NoError(t, err)
	require.NoError(t, tr2.Resume(split))
	assert.Equal(t, n/2+1, tr2.Step())
	require.NoError(t, tr2.Train(exs))
	assert.Equal(t, n, tr2.Step())
	assert.Equal(t, readAll(t, straight), readAll(t, split))
}

// TestStandardisationOfConstantColumns: a feature the training data never
// varies (is_text when every case is code) must not become a
// thousand-sigma input on the first text the model sees.
func TestStandardisationOfConstantColumns(t *testing.T) {
	exs := fixtureExamples(t, 3)
	m := newTestModel(t, exs)
	j := slices.Index(linemodel.FeatureNames, "is_text")
	require.GreaterOrEqual(t, j, 0)
	for _, ex := range exs {
		for i := 0; i < ex.N; i++ {
			require.Zero(t, ex.X[i*linemodel.NumFeatures+j], "the fixtures are code")
		}
	}
	assert.Equal(t, float32(1), m.Std[j])
	row := make([]float32, linemodel.NumFeatures)
	row[j] = 1
	assert.InDelta(t, 1, m.Standardise(row)[j], 1e-6)
	k := slices.Index(linemodel.FeatureNames, "bm25n")
	assert.NotEqual(t, float32(1), m.Std[k], "a varying column keeps its own scale")
}

// TestGoForwardMatchesGraph: the library's Go forward pass gives the
// training graph's ranking head, with and without attention (whose band
// is narrower than the cases, so the band and padding masks must agree).
func TestGoForwardMatchesGraph(t *testing.T) {
	exs := fixtureExamples(t, 3)
	for _, cfg := range []linemodel.Config{
		{Hidden: []int{8, 6, 5}, Embed: 4, Lambda: 0.5, Listwise: 0.5, GateReg: 0.01},
		attnConfig,
	} {
		m := newTestModelCfg(t, exs, cfg)
		rng := rand.New(rand.NewPCG(7, 8))
		for i := range m.P {
			if i%2 == 1 && i <= linemodel.ParamBH {
				for j := range m.P[i] {
					m.P[i][j] = float32(rng.NormFloat64() * 0.3)
				}
			}
		}
		tr, err := NewTrainer(m, TrainOptions{Batch: 4, MaxLines: 64, TargetDep: 0.3}, nil)
		require.NoError(t, err)
		batch := []*Example{&exs[0], &exs[1], &exs[2]}
		backend, err := simplego.New("ops_sequential")
		require.NoError(t, err)
		exec, err := G.NewExec(backend, func(in []*G.Node) *G.Node {
			return buildForward(in, in[numInputs:], cfg.AttnBand, false).rank
		})
		require.NoError(t, err)
		out, err := exec.Exec(tr.batchInputs(batch)...)
		require.NoError(t, err)
		rank := tensors.MustCopyFlatData[float32](out[0])
		L := len(rank) / 4
		for b, ex := range batch {
			require.Greater(t, ex.N, cfg.AttnBand+1, "the band must be narrower than the case")
			require.LessOrEqual(t, ex.N, L)
			got := m.Forward(ex.Input()).RankHead
			for i := 0; i < ex.N; i++ {
				assert.InDelta(t, rank[b*L+i], got[i], 1e-4, "attn %d case %d line %d", cfg.Attn, b, i)
			}
		}
	}
}
