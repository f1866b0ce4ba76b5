package linemodel

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/syntax"
)

const goSrc = `package main

import (
	"fmt"
	"strings"
)

// parseRange parses a byte range header.
func parseRange(s string) (int, int, error) {
	parts := strings.Split(s, "-")
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("bad range %q", s)
	}
	return atoi(parts[0]), atoi(parts[1]), nil
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func main() {
	fmt.Println(parseRange("1-2"))
}
`

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
	if ex.N != n || len(ex.X) != n*NumFeatures || len(FeatureNames) != NumFeatures {
		t.Fatalf("N=%d X=%d want n=%d F=%d", ex.N, len(ex.X), n, NumFeatures)
	}
	col := func(name string, line int) float32 {
		for j, f := range FeatureNames {
			if f == name {
				return ex.X[(line-1)*NumFeatures+j]
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
	X, m := Features(ctx, "q", "a\nb\n", syntax.Text)
	if m != 2 || len(X) != 2*NumFeatures {
		t.Fatal("text features")
	}
}

func TestTrainSaveLoad(t *testing.T) {
	ctx := context.Background()
	exs, err := BuildExamples(ctx, fixtureCases(8), true, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m := NewModel(Config{Hidden: []int{8}, Lambda: 0.3}, rng.NormFloat64)
	m.SetStandardisation(exs)
	dir := t.TempDir()
	var log strings.Builder
	tr, err := NewTrainer(m, TrainOptions{Epochs: 30, Batch: 4, MaxLines: 40, LR: 1e-2, Lambda: 0.3, Seed: 1, Out: dir, Log: &log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	batch := []*Example{&exs[0], &exs[1], &exs[2], &exs[3]}
	first, err := tr.Step(batch)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Train(exs); err != nil {
		t.Fatal(err)
	}
	last, _ := tr.Step(batch)
	if !(last < first) {
		t.Errorf("loss did not decrease: %v -> %v", first, last)
	}
	s := Evaluate(exs, 0.2, func(ex *Example) []float32 { return m.ScoreFeatures(ex.X, ex.N) })
	if s.Mean.Recall < 0.99 {
		t.Errorf("fixture recall %v", s.Mean.Recall)
	}
	m2, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Cfg.Epochs != 30 {
		t.Errorf("epochs %d", m2.Cfg.Epochs)
	}
	tr2, err := NewTrainer(m2, TrainOptions{Epochs: 31, Batch: 4, MaxLines: 40}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Resume(dir); err != nil || tr2.epoch != 30 {
		t.Fatalf("resume: %v epoch %d", err, tr2.epoch)
	}
	// The saved model is the one after epoch 30; scores must match a fresh
	// forward of the loaded weights.
	a := m2.Score(ctx, exs[0].ID, goSrc, syntax.Go)
	if len(a) != exs[0].N {
		t.Fatal("score length")
	}
}
