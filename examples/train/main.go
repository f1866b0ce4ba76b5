// Command train trains the library's embedded line model
// (internal/linemodel) on shared/traindata and reports validation recall
// and hit at a line budget, with the eval sets' metric code.
//
//	go run ./examples/train -data ../shared/traindata -out DIR [-epochs N] [-limit N]
//	go run ./examples/train -out DIR -eval ../shared/evalsets/dev
//
// Features are cached in DIR (features-*.gob) so later runs skip the
// parsing; -resume continues from DIR's checkpoint and optimizer state.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/linemodel"
)

type options struct {
	data, out, eval string
	epochs, limit   int
	valLimit        int
	batch, workers  int
	hidden          string
	lambda, lr, wd  float64
	r               float64
	seed            uint64
	resume          bool
	importance      bool
	tune            bool
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.data, "data", "../shared/traindata", "training data directory (*.jsonl.gz)")
	fs.StringVar(&o.out, "out", "", "output directory: checkpoint, config.json, feature cache, log")
	fs.StringVar(&o.eval, "eval", "", "evaluate the checkpoint in -out on this eval directory (e.g. ../shared/evalsets/dev) and exit")
	fs.IntVar(&o.epochs, "epochs", 3, "epochs")
	fs.IntVar(&o.limit, "limit", 0, "use at most this many training cases (random subset; 0 = all)")
	fs.IntVar(&o.valLimit, "val-limit", 0, "use at most this many val cases (0 = all)")
	fs.IntVar(&o.batch, "batch", 16, "cases per step")
	fs.IntVar(&o.workers, "workers", 2, "feature extraction workers")
	fs.StringVar(&o.hidden, "hidden", "64,32", "hidden layer widths")
	fs.Float64Var(&o.lambda, "lambda", 0.3, "target weight of dependency-rubric lines (gold = 1)")
	fs.Float64Var(&o.lr, "lr", 2e-3, "AdamW learning rate")
	fs.Float64Var(&o.wd, "wd", 1e-4, "AdamW weight decay")
	fs.Float64Var(&o.r, "r", 0.2, "line budget ratio for the metrics")
	fs.Uint64Var(&o.seed, "seed", 1, "seed")
	fs.BoolVar(&o.resume, "resume", false, "resume from the checkpoint in -out")
	fs.BoolVar(&o.tune, "tune", false, "only select the score smoothing on val for the checkpoint in -out (training does it too)")
	fs.BoolVar(&o.importance, "importance", false, "report permutation importance of each feature on val")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.out == "" {
		return errors.New("-out is required")
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if o.eval != "" {
		return evalDir(ctx, o, stdout, stderr)
	}
	if o.tune {
		m, err := linemodel.Load(o.out)
		if err != nil {
			return err
		}
		_, val, err := examples(ctx, o, stderr)
		if err != nil {
			return err
		}
		tuneSmooth(m, val, o, stderr)
		if o.importance {
			importance(m, val, o, stderr)
		}
		return m.Save(o.out)
	}
	return train(ctx, o, stdout, stderr)
}

func progress(stderr io.Writer, what string) func(done, total int) {
	return func(done, total int) { fmt.Fprintf(stderr, "%s: %d/%d cases\n", what, done, total) }
}

// examples loads (or builds and caches) the train and val examples.
func examples(ctx context.Context, o options, stderr io.Writer) (train, val []linemodel.Example, err error) {
	trainCache := filepath.Join(o.out, fmt.Sprintf("features-train-%d-%d.gob", o.limit, o.seed))
	valCache := filepath.Join(o.out, fmt.Sprintf("features-val-%d.gob", o.valLimit))
	train, err1 := linemodel.LoadExamples(trainCache)
	val, err2 := linemodel.LoadExamples(valCache)
	if err1 == nil && err2 == nil {
		fmt.Fprintf(stderr, "features: %d train, %d val cases from cache\n", len(train), len(val))
		return train, val, nil
	}
	start := time.Now()
	cases, err := linemodel.LoadDir(o.data)
	if err != nil {
		return nil, nil, err
	}
	tr := linemodel.Split(cases, "train")
	va := linemodel.Split(cases, "val")
	rng := rand.New(rand.NewPCG(o.seed, 7))
	if o.limit > 0 && o.limit < len(tr) {
		rng.Shuffle(len(tr), func(i, j int) { tr[i], tr[j] = tr[j], tr[i] })
		tr = tr[:o.limit]
	}
	if o.valLimit > 0 && o.valLimit < len(va) {
		va = va[:o.valLimit]
	}
	fmt.Fprintf(stderr, "data: %d train, %d val cases (loaded in %s)\n", len(tr), len(va), time.Since(start).Round(time.Millisecond))
	if err1 != nil {
		if train, err = linemodel.BuildExamples(ctx, tr, false, o.workers, progress(stderr, "features train")); err != nil {
			return nil, nil, err
		}
		if err := linemodel.SaveExamples(trainCache, train); err != nil {
			return nil, nil, err
		}
	}
	if err2 != nil {
		if val, err = linemodel.BuildExamples(ctx, va, true, o.workers, progress(stderr, "features val")); err != nil {
			return nil, nil, err
		}
		if err := linemodel.SaveExamples(valCache, val); err != nil {
			return nil, nil, err
		}
	}
	fmt.Fprintf(stderr, "features: done in %s\n", time.Since(start).Round(time.Millisecond))
	return train, val, nil
}

func parseHidden(s string) ([]int, error) {
	var hs []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		h, err := strconv.Atoi(f)
		if err != nil || h <= 0 {
			return nil, fmt.Errorf("bad -hidden %q", s)
		}
		hs = append(hs, h)
	}
	return hs, nil
}

func bm25Score(ex *linemodel.Example) []float32 {
	F := linemodel.NumFeatures
	s := make([]float32, ex.N)
	for i := range s {
		s[i] = ex.X[i*F] // bm25n, column 0
	}
	return s
}

func modelScore(m *linemodel.Model) func(ex *linemodel.Example) []float32 {
	return func(ex *linemodel.Example) []float32 { return m.ScoreFeatures(ex.X, ex.N) }
}

func train(ctx context.Context, o options, stdout, stderr io.Writer) error {
	start := time.Now()
	logFile, err := os.OpenFile(filepath.Join(o.out, "train.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	log := io.MultiWriter(stderr, logFile)
	fmt.Fprintf(logFile, "== %s train %v\n", time.Now().UTC().Format(time.RFC3339), os.Args[1:])
	trainEx, valEx, err := examples(ctx, o, log)
	if err != nil {
		return err
	}
	bm := linemodel.Evaluate(valEx, o.r, bm25Score)
	fmt.Fprintf(log, "val bm25 r=%.2f: recall %.4f hit %.4f line_comp %.4f char_comp %.4f\n", o.r, bm.Mean.Recall, bm.Mean.Hit, bm.Mean.LineComp, bm.Mean.CharComp)

	hidden, err := parseHidden(o.hidden)
	if err != nil {
		return err
	}
	var m *linemodel.Model
	if o.resume {
		if m, err = linemodel.Load(o.out); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	} else {
		rng := rand.New(rand.NewPCG(o.seed, 3))
		m = linemodel.NewModel(linemodel.Config{Hidden: hidden, Lambda: o.lambda}, rng.NormFloat64)
		m.SetStandardisation(trainEx)
	}
	validate := func(m *linemodel.Model) map[string]float64 {
		s := linemodel.Evaluate(valEx, o.r, modelScore(m))
		return map[string]float64{"r": o.r, "recall": s.Mean.Recall, "hit": s.Mean.Hit, "line_comp": s.Mean.LineComp, "char_comp": s.Mean.CharComp}
	}
	tr, err := linemodel.NewTrainer(m, linemodel.TrainOptions{
		Epochs: o.epochs, Batch: o.batch, MaxLines: 400, LR: o.lr, WeightDecay: o.wd,
		Lambda: float32(o.lambda), Seed: o.seed, Out: o.out, Log: log, Validate: validate,
	}, nil)
	if err != nil {
		return err
	}
	if o.resume {
		if err := tr.Resume(o.out); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	if err := tr.Train(trainEx); err != nil {
		return err
	}
	tuneSmooth(m, valEx, o, log)
	if err := m.Save(o.out); err != nil {
		return err
	}
	v := validate(m)
	fmt.Fprintf(log, "val model r=%.2f: recall %.4f hit %.4f line_comp %.4f char_comp %.4f (total %s)\n", o.r, v["recall"], v["hit"], v["line_comp"], v["char_comp"], time.Since(start).Round(time.Second))
	fmt.Fprintf(stdout, "val r=%.2f  model recall %.4f hit %.4f | bm25 recall %.4f hit %.4f\n", o.r, v["recall"], v["hit"], bm.Mean.Recall, bm.Mean.Hit)
	if o.importance {
		importance(m, valEx, o, log)
	}
	return nil
}

// tuneSmooth picks the neighbour smoothing with the best val recall + hit.
func tuneSmooth(m *linemodel.Model, val []linemodel.Example, o options, w io.Writer) {
	best, bestV := 0.0, -1.0
	for _, a := range []float64{0, 0.1, 0.2, 0.3, 0.5, 0.7} {
		m.Cfg.Smooth = a
		s := linemodel.Evaluate(val, o.r, modelScore(m)).Mean
		fmt.Fprintf(w, "smooth %.1f: val recall %.4f hit %.4f\n", a, s.Recall, s.Hit)
		if v := s.Recall + s.Hit; v > bestV {
			best, bestV = a, v
		}
	}
	m.Cfg.Smooth = best
	fmt.Fprintf(w, "smooth: selected %.1f\n", best)
}

// importance reports the drop in val recall when one feature column is
// permuted across all val lines.
func importance(m *linemodel.Model, val []linemodel.Example, o options, w io.Writer) {
	base := linemodel.Evaluate(val, o.r, modelScore(m)).Mean
	F := linemodel.NumFeatures
	type imp struct {
		name   string
		dr, dh float64
	}
	var imps []imp
	rng := rand.New(rand.NewPCG(o.seed, 11))
	for j := 0; j < F; j++ {
		var col []float32
		for _, ex := range val {
			for i := 0; i < ex.N; i++ {
				col = append(col, ex.X[i*F+j])
			}
		}
		rng.Shuffle(len(col), func(a, b int) { col[a], col[b] = col[b], col[a] })
		perm := make([]linemodel.Example, len(val))
		k := 0
		for e, ex := range val {
			p := ex
			p.X = append([]float32(nil), ex.X...)
			for i := 0; i < ex.N; i++ {
				p.X[i*F+j] = col[k]
				k++
			}
			perm[e] = p
		}
		s := linemodel.Evaluate(perm, o.r, modelScore(m)).Mean
		imps = append(imps, imp{linemodel.FeatureNames[j], base.Recall - s.Recall, base.Hit - s.Hit})
	}
	sort.Slice(imps, func(a, b int) bool { return imps[a].dr > imps[b].dr })
	fmt.Fprintf(w, "permutation importance on val (drop in recall / hit at r=%.2f):\n", o.r)
	for _, x := range imps {
		fmt.Fprintf(w, "  %-16s %+.4f %+.4f\n", x.name, x.dr, x.dh)
	}
}

func evalDir(ctx context.Context, o options, stdout, stderr io.Writer) error {
	m, err := linemodel.Load(o.out)
	if err != nil {
		return err
	}
	cases, err := linemodel.LoadDir(o.eval)
	if err != nil {
		return err
	}
	start := time.Now()
	exs, err := linemodel.BuildExamples(ctx, cases, true, o.workers, progress(stderr, "features eval"))
	if err != nil {
		return err
	}
	feat := time.Since(start)
	t0 := time.Now()
	ms := linemodel.Evaluate(exs, o.r, modelScore(m))
	mlp := time.Since(t0)
	bs := linemodel.Evaluate(exs, o.r, bm25Score)
	var bmObs []evalset.Observation
	for _, c := range cases {
		k := evalset.Budget(o.r, evalset.CountLines(c.Text))
		bmObs = append(bmObs, evalset.Observation{Metrics: c.Score(evalset.BM25(c.Query, c.Text, k))})
	}
	ref := evalset.Summarize(bmObs)
	// End-to-end scoring time per case (features from raw text + MLP).
	var total, worst time.Duration
	for _, c := range cases {
		t := time.Now()
		m.Score(ctx, c.Query, c.Text, linemodel.CaseLanguage(c))
		d := time.Since(t)
		total += d
		worst = max(worst, d)
	}
	fmt.Fprintf(stdout, "scoring time per case: mean %s, max %s\n", (total / time.Duration(len(cases))).Round(time.Microsecond), worst.Round(time.Microsecond))
	fmt.Fprintf(stdout, "%s: %d cases, r=%.2f (features %s incl. labels, model %s)\n", o.eval, len(cases), o.r, feat.Round(time.Millisecond), mlp.Round(time.Millisecond))
	fmt.Fprintf(stdout, "%-14s %7s %7s %9s %9s\n", "method", "recall", "hit", "line_comp", "char_comp")
	for _, row := range []struct {
		name string
		s    evalset.Summary
	}{{"model", ms}, {"bm25(feature)", bs}, {"bm25(evalset)", ref}} {
		fmt.Fprintf(stdout, "%-14s %7.4f %7.4f %9.4f %9.4f\n", row.name, row.s.Mean.Recall, row.s.Mean.Hit, row.s.Mean.LineComp, row.s.Mean.CharComp)
	}
	return nil
}
