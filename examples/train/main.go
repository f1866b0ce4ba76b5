// Command train trains the library's embedded line model
// (internal/linemodel, with the training code of internal/linemodel/train)
// on shared/traindata and reports validation recall and hit at a line
// budget, with the eval sets' metric code.
//
//	go run ./examples/train -data ../shared/traindata -out DIR [-epochs N] [-limit N]
//	go run ./examples/train -out DIR -eval ../shared/evalsets/dev
//
// Features are cached in DIR (features-*.gob) so later runs skip the
// parsing; -resume continues from DIR's checkpoint and optimizer state at
// the exact step (checkpoints are written every -save-every steps and
// after every epoch). Training is deterministic given -seed: the shipped
// weights (internal/linemodel/weights, see train.log there) come from the
// defaults,
//
//	go run ./examples/train -out DIR
//
// then copying DIR/config.json and DIR/model.safetensors.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/fastcpu"
	"github.com/prunekit/pruner/internal/linemodel"
	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

type options struct {
	data, out, eval     string
	epochs, limit       int
	valLimit, saveEvery int
	batch, workers      int
	hidden              string
	embed               int
	attn, attnBand      int
	negatives           float64
	lambda, lr, wd      float64
	lrFinal             float64
	listwise, gateReg   float64
	targetDep           float64
	r                   float64
	seed                uint64
	backend             string
	resume              bool
	tune                bool
	docs                int
	extra               string
	calibrate           string
	tempText            float64
	dumpVal             string
	wordvec             string
	encoder, pairs      string
	encMaxPairs, encVal int
	encDim, encEpochs   int
	encVocab            int
	encLexical          float64
	attnExp, attnOut    string
	attnEval            string
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
	fs.IntVar(&o.saveEvery, "save-every", 200, "also checkpoint every this many steps (0 = only per epoch)")
	fs.IntVar(&o.batch, "batch", 16, "cases per step")
	fs.IntVar(&o.workers, "workers", 2, "feature extraction workers")
	fs.StringVar(&o.hidden, "hidden", "96,48,48", "widths of the two trunk layers and the context layer")
	fs.IntVar(&o.embed, "embed", 24, "width of the hashed query-piece and line-piece embeddings")
	fs.IntVar(&o.attn, "attn", 0, "width of an attention head over the lines (queries, keys, values; 0 = none)")
	fs.IntVar(&o.attnBand, "attn-band", 64, "lines on either side a line attends to (with -attn)")
	fs.Float64Var(&o.negatives, "negatives", 0, "add this share of the train cases again with another repository's query and no gold lines (off-topic pairs: the keep heads learn to keep nothing)")
	fs.Float64Var(&o.lambda, "lambda", 0.5, "weight of the rubric (semantic, dependency) CRF losses")
	fs.Float64Var(&o.listwise, "listwise", 1, "weight of the auxiliary listwise loss that trains the ranking head on gold lines")
	fs.Float64Var(&o.gateReg, "gate-reg", 0.002, "weight of the gate-balance regulariser")
	fs.Float64Var(&o.targetDep, "target-dep", 0, "listwise target of dependency-rubric lines (gold = 1); 0 ranks gold lines only, which is what the fixed-budget metric rewards")
	fs.Float64Var(&o.lr, "lr", 2e-3, "AdamW learning rate")
	fs.Float64Var(&o.lrFinal, "lr-final", 0.1, "learning rate at the last step, as a fraction of -lr (linear decay; 1 = constant)")
	fs.Float64Var(&o.wd, "wd", 0.05, "AdamW weight decay")
	fs.Float64Var(&o.r, "r", 0.2, "line budget ratio for the metrics")
	fs.Uint64Var(&o.seed, "seed", 1, "seed")
	fs.StringVar(&o.backend, "backend", "fastgo", "GoMLX backend for training: fastgo (internal/fastcpu, AVX2 products) or go (simplego)")
	fs.BoolVar(&o.resume, "resume", false, "resume from the checkpoint in -out")
	fs.IntVar(&o.docs, "docs", 0, "add question cases mined from the training files' doc comments and inline comments, at most this many of each per file (0 = none)")
	fs.StringVar(&o.extra, "extra", "", "comma-separated directories of more training cases (*.jsonl.gz with a split field), e.g. examples/train/tooldata; DIR:N repeats DIR's train cases N times")
	fs.BoolVar(&o.tune, "tune", false, "only select the rank mix and temperatures on val for the checkpoint in -out (training does it too)")
	fs.StringVar(&o.calibrate, "calibrate", "", "only print the text temperature that the checkpoint in -out needs on the text cases of this directory (all splits), e.g. tool families it was not trained on")
	fs.Float64Var(&o.tempText, "rank-temp-text", 0, "use this ranking temperature for text instead of fitting it on val (0 = fit); see -calibrate")
	fs.StringVar(&o.dumpVal, "dump-val", "", "only write the val split of the training mix (-data, -docs, -extra) to this directory as eval files (val_commits, val_questions, val_labelled, val_tool, val_tool_labelled .jsonl) and exit")
	fs.StringVar(&o.wordvec, "wordvec", "", "only train the soft-match word vectors on the train split's texts and commit messages (-data, -extra) and write them to this file (the shipped ones: internal/linemodel/wordvec/wordvec.bin), then exit")
	fs.StringVar(&o.encoder, "encoder", "", "only train the pair encoder on -pairs and write it to this file (the shipped one: internal/linemodel/encoder/encoder.bin), then exit")
	fs.StringVar(&o.pairs, "pairs", "", "comma-separated mined pair files for -encoder (go run ./examples/pairs)")
	fs.IntVar(&o.encMaxPairs, "encoder-max-pairs", 0, "train the encoder on at most this many pairs (whole files; 0 = all): the learning curve")
	fs.IntVar(&o.encVal, "encoder-val", 20000, "rank at most this many held-out pairs after each encoder epoch")
	fs.IntVar(&o.encDim, "encoder-dim", lmtrain.DefaultEncoderOptions.Dim, "encoder width")
	fs.IntVar(&o.encEpochs, "encoder-epochs", lmtrain.DefaultEncoderOptions.Epochs, "encoder epochs")
	fs.IntVar(&o.encVocab, "encoder-vocab", lmtrain.DefaultEncoderOptions.MaxVocab, "encoder vocabulary: the most frequent words of the train pairs")
	fs.Float64Var(&o.encLexical, "encoder-lexical", lmtrain.DefaultEncoderOptions.Lexical, "train the encoder as the residual of this multiple of the tf-idf cosine (0 = alone)")
	fs.StringVar(&o.attnExp, "encoder-attn-exp", "", "only run the attention-encoder experiment on -pairs (attn: one self-attention layer over a unit's words; bag: the same model without it) and print the held-out ranking")
	fs.StringVar(&o.attnEval, "encoder-attn-eval", "", "only rank -pairs' held-out pairs with this attention encoder (as the library runs it) and print the result")
	fs.StringVar(&o.attnOut, "encoder-attn-out", "", "with -encoder-attn-exp: write the trained encoder here (linemodel.AttnEncoder)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.attnExp != "" || o.attnEval != "" {
		return attnExperiment(ctx, o, stderr)
	}
	if o.encoder != "" {
		return trainEncoder(ctx, o, stderr)
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
	if o.dumpVal != "" {
		return dumpVal(ctx, o, stderr)
	}
	if o.wordvec != "" {
		return trainWordVectors(ctx, o, stderr)
	}
	if o.calibrate != "" {
		return calibrate(ctx, o, stdout, stderr)
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
		tuneRank(m, val, o, stderr)
		return m.Save(o.out)
	}
	return train(ctx, o, stdout, stderr)
}

func progress(stderr io.Writer, what string) func(done, total int) {
	return func(done, total int) { fmt.Fprintf(stderr, "%s: %d/%d cases\n", what, done, total) }
}

// examples loads (or builds and caches) the train and val examples.
func examples(ctx context.Context, o options, stderr io.Writer) (train, val []lmtrain.Example, err error) {
	mix := dataMix(o)
	trainCache := filepath.Join(o.out, fmt.Sprintf("features-train-%d-%d%s.gob", o.limit, o.seed, mix))
	valCache := filepath.Join(o.out, fmt.Sprintf("features-val-%d-%d%s.gob", o.valLimit, o.seed, mix))
	train, err1 := lmtrain.LoadExamples(trainCache)
	val, err2 := lmtrain.LoadExamples(valCache)
	if err1 == nil && err2 == nil {
		fmt.Fprintf(stderr, "features: %d train, %d val cases from cache\n", len(train), len(val))
		return train, val, nil
	}
	start := time.Now()
	cases, err := loadCases(ctx, o, stderr)
	if err != nil {
		return nil, nil, err
	}
	tr := trainCases(cases, o)
	va := lmtrain.Split(cases, "val")
	if o.valLimit > 0 && o.valLimit < len(va) {
		va = va[:o.valLimit]
	}
	fmt.Fprintf(stderr, "data: %d train, %d val cases (loaded in %s)\n", len(tr), len(va), time.Since(start).Round(time.Millisecond))
	if err1 != nil {
		if train, err = lmtrain.BuildExamples(ctx, tr, false, o.workers, progress(stderr, "features train")); err != nil {
			return nil, nil, err
		}
		if err := lmtrain.SaveExamples(trainCache, train); err != nil {
			return nil, nil, err
		}
	}
	if err2 != nil {
		if val, err = lmtrain.BuildExamples(ctx, va, true, o.workers, progress(stderr, "features val")); err != nil {
			return nil, nil, err
		}
		if err := lmtrain.SaveExamples(valCache, val); err != nil {
			return nil, nil, err
		}
	}
	fmt.Fprintf(stderr, "features: done in %s\n", time.Since(start).Round(time.Millisecond))
	return train, val, nil
}

// trainCases returns the train split of cases, cut to -limit cases drawn
// by the seed.
func trainCases(cases []lmtrain.Case, o options) []lmtrain.Case {
	tr := lmtrain.Split(cases, "train")
	rng := rand.New(rand.NewPCG(o.seed, 7))
	if o.limit > 0 && o.limit < len(tr) {
		rng.Shuffle(len(tr), func(i, j int) { tr[i], tr[j] = tr[j], tr[i] })
		tr = tr[:o.limit]
	}
	return tr
}

// negativeCases draws share of tr's distinct cases (by seed) and gives
// each the query of a case from another repository and no gold lines. A
// case for which 100 draws find no other repository's query is left out.
func negativeCases(tr []lmtrain.Case, share float64, seed uint64) []lmtrain.Case {
	// A case repeated by -extra DIR:N is drawn at most once.
	seen := map[string]bool{}
	var uniq []lmtrain.Case
	for _, c := range tr {
		if !seen[c.ID] {
			seen[c.ID] = true
			uniq = append(uniq, c)
		}
	}
	tr = uniq
	rng := rand.New(rand.NewPCG(seed, 11))
	n := min(int(share*float64(len(tr))), len(tr))
	var neg []lmtrain.Case
	for _, i := range rng.Perm(len(tr))[:n] {
		c := tr[i]
		for range 100 {
			q := tr[rng.IntN(len(tr))]
			if q.Repo != c.Repo && q.Query != "" {
				c.ID += " off-topic"
				c.Query, c.GoldLines = q.Query, nil
				neg = append(neg, c)
				break
			}
		}
	}
	return neg
}

// negativeExamples returns the off-topic train examples of -negatives
// (negativeCases of the train cases -limit keeps), built once and cached:
// every line is labelled drop and the listwise loss has no target.
func negativeExamples(ctx context.Context, o options, stderr io.Writer) ([]lmtrain.Example, error) {
	if o.negatives <= 0 {
		return nil, nil
	}
	cache := filepath.Join(o.out, fmt.Sprintf("features-neg-%g-%d-%d%s.gob", o.negatives, o.limit, o.seed, dataMix(o)))
	if exs, err := lmtrain.LoadExamples(cache); err == nil {
		fmt.Fprintf(stderr, "features: %d off-topic train cases from cache\n", len(exs))
		return exs, nil
	}
	cases, err := loadCases(ctx, o, stderr)
	if err != nil {
		return nil, err
	}
	neg := negativeCases(trainCases(cases, o), o.negatives, o.seed)
	exs, err := lmtrain.BuildExamples(ctx, neg, false, o.workers, progress(stderr, "features off-topic"))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "data: %d off-topic train cases\n", len(exs))
	return exs, lmtrain.SaveExamples(cache, exs)
}

// loadCases reads the training mix: the commit cases of -data, the
// questions mined from their files (-docs) and the -extra directories.
func loadCases(ctx context.Context, o options, stderr io.Writer) ([]lmtrain.Case, error) {
	cases, err := lmtrain.LoadDir(o.data)
	if err != nil {
		return nil, err
	}
	if o.docs > 0 {
		docs := lmtrain.MineDocQuestions(ctx, cases, lmtrain.DocOptions{PerFile: o.docs, Seed: o.seed})
		fmt.Fprintf(stderr, "data: %d question cases mined from comments\n", len(docs))
		cases = append(cases, docs...)
	}
	for _, spec := range strings.Split(o.extra, ",") {
		if spec = strings.TrimSpace(spec); spec == "" {
			continue
		}
		dir, repeat, err := extraSpec(spec)
		if err != nil {
			return nil, err
		}
		more, err := lmtrain.LoadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("-extra: %w", err)
		}
		fmt.Fprintf(stderr, "data: %d cases from %s\n", len(more), dir)
		cases = append(cases, more...)
		// A few hundred hand-labelled cases among tens of thousands weigh
		// little: their train cases can be repeated (val stays single).
		for range repeat - 1 {
			cases = append(cases, lmtrain.Split(more, "train")...)
		}
	}
	return cases, nil
}

// extraSpec parses an -extra entry: a directory, optionally followed by
// ":N" to repeat its train cases N times.
func extraSpec(spec string) (dir string, repeat int, err error) {
	dir, n, ok := strings.Cut(spec, ":")
	if !ok {
		return dir, 1, nil
	}
	if repeat, err = strconv.Atoi(n); err != nil || repeat < 1 || repeat > 100 {
		return "", 0, fmt.Errorf("-extra %q: the repeat count after ':' must be an integer in [1, 100]", spec)
	}
	return dir, repeat, nil
}

// dumpVal writes the val split of the training mix as eval files (one per
// source: commits, mined questions, tool output), so that pipeline choices
// — not only the model's — are made on val and reported on dev.
func dumpVal(ctx context.Context, o options, stderr io.Writer) error {
	cases, err := loadCases(ctx, o, stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.dumpVal, 0o755); err != nil {
		return err
	}
	groups := map[string][]evalset.Case{}
	for _, c := range lmtrain.Split(cases, "val") {
		name := "commits"
		switch {
		case c.Lang == "text" && strings.HasPrefix(c.Source, "labelled"):
			name = "tool_labelled"
		case c.Lang == "text":
			name = "tool"
		case strings.HasPrefix(c.Source, "labelled"):
			name = "labelled"
		case c.Source != "":
			name = "questions"
		}
		groups[name] = append(groups[name], c.Case)
	}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		for _, c := range groups[name] {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		path := filepath.Join(o.dumpVal, "val_"+name+".jsonl")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "val: %d cases in %s\n", len(groups[name]), path)
	}
	return nil
}

// trainWordVectors trains the word vectors on the train split: each
// distinct file text once (in case order), and the commit messages.
func trainWordVectors(ctx context.Context, o options, stderr io.Writer) error {
	start := time.Now()
	o.docs = 0 // mined questions are the same files' comments
	cases, err := loadCases(ctx, o, stderr)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var texts []string
	for _, c := range lmtrain.Split(cases, "train") {
		if !seen[c.Text] {
			seen[c.Text] = true
			texts = append(texts, c.Text)
		}
		if c.Lang != "text" && !seen[c.Query] {
			seen[c.Query] = true
			texts = append(texts, c.Query)
		}
	}
	fmt.Fprintf(stderr, "wordvec: %d texts\n", len(texts))
	wv, err := lmtrain.TrainWordVectors(ctx, texts, lmtrain.DefaultWordVecOptions)
	if err != nil {
		return err
	}
	f, err := os.Create(o.wordvec)
	if err != nil {
		return err
	}
	if _, err := wv.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wordvec: %d words of width %d in %s (%s)\n", len(wv.Words), wv.Dim, o.wordvec, time.Since(start).Round(time.Second))
	return nil
}

// dataMix names the training mix in the feature caches' file names, so
// that runs with other -docs or -extra never read each other's cache.
func dataMix(o options) string {
	var b strings.Builder
	// Features computed by another build are another feature set.
	fmt.Fprintf(&b, "-f%s", linemodel.FeatureSetID())
	if o.docs > 0 {
		fmt.Fprintf(&b, "-docs%d-%s", o.docs, lmtrain.MinerVersion)
	}
	for _, spec := range strings.Split(o.extra, ",") {
		if spec = strings.TrimSpace(spec); spec != "" {
			dir, repeat, _ := extraSpec(spec)
			if repeat > 1 {
				fmt.Fprintf(&b, "-x%d", repeat)
			}
			// The files' names and sizes: regenerated data is new data.
			h := fnv.New32a()
			files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl*"))
			for _, f := range files {
				if st, err := os.Stat(f); err == nil {
					fmt.Fprintf(h, "%s %d\n", filepath.Base(f), st.Size())
				}
			}
			fmt.Fprintf(&b, "-%s%08x", filepath.Base(filepath.Clean(dir)), h.Sum32())
		}
	}
	return b.String()
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

func bm25Score(ex *lmtrain.Example) []float32 {
	F := linemodel.NumFeatures
	s := make([]float32, ex.N)
	for i := range s {
		s[i] = ex.X[i*F] // bm25n, column 0
	}
	return s
}

func modelScore(m *linemodel.Model) func(ex *lmtrain.Example) []float32 {
	return func(ex *lmtrain.Example) []float32 { return m.RankInput(ex.Input()) }
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
	neg, err := negativeExamples(ctx, o, log)
	if err != nil {
		return err
	}
	trainEx = append(trainEx, neg...)
	bm := lmtrain.Evaluate(valEx, o.r, bm25Score)
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
		cfg := linemodel.Config{Hidden: hidden, Embed: o.embed, Lambda: o.lambda, Listwise: o.listwise, GateReg: o.gateReg}
		if o.attn > 0 {
			cfg.Attn, cfg.AttnBand = o.attn, o.attnBand
		}
		if m, err = linemodel.NewModel(cfg, rng.NormFloat64); err != nil {
			return err
		}
		lmtrain.SetStandardisation(m, trainEx)
	}
	validate := func(m *linemodel.Model) map[string]float64 {
		s := lmtrain.Evaluate(valEx, o.r, modelScore(m))
		return map[string]float64{"r": o.r, "recall": s.Mean.Recall, "hit": s.Mean.Hit, "line_comp": s.Mean.LineComp, "char_comp": s.Mean.CharComp}
	}
	var backend backends.Backend
	switch o.backend {
	case "fastgo":
		if backend, err = fastcpu.New(""); err != nil {
			return err
		}
	case "go":
		if backend, err = simplego.New("ops_sequential"); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown -backend %q", o.backend)
	}
	tr, err := lmtrain.NewTrainer(m, lmtrain.TrainOptions{
		Epochs: o.epochs, Batch: o.batch, MaxLines: 400, LR: o.lr, LRFinal: o.lrFinal, WeightDecay: o.wd,
		TargetDep: float32(o.targetDep), Seed: o.seed, Out: o.out, SaveEvery: o.saveEvery, Log: log, Validate: validate,
	}, backend)
	if err != nil {
		return err
	}
	if o.resume {
		if err := tr.Resume(o.out); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	trainStart := time.Now()
	if err := tr.Train(trainEx); err != nil {
		return err
	}
	fmt.Fprintf(log, "training: %s\n", time.Since(trainStart).Round(time.Second))
	tuneRank(m, valEx, o, log)
	if err := m.Save(o.out); err != nil {
		return err
	}
	v := validate(m)
	fmt.Fprintf(log, "val model r=%.2f: recall %.4f hit %.4f line_comp %.4f char_comp %.4f (total %s)\n", o.r, v["recall"], v["hit"], v["line_comp"], v["char_comp"], time.Since(start).Round(time.Second))
	fmt.Fprintf(stdout, "val r=%.2f  model recall %.4f hit %.4f | bm25 recall %.4f hit %.4f\n", o.r, v["recall"], v["hit"], bm.Mean.Recall, bm.Mean.Hit)
	return nil
}

// tuneRank picks the weight of the CRF marginal in the ranking score with the
// best val recall + hit.
func tuneRank(m *linemodel.Model, val []lmtrain.Example, o options, w io.Writer) {
	best, bestV := 0.0, -1.0
	for _, a := range []float64{0, 0.1, 0.25, 0.5, 1} {
		m.Cfg.RankMix = a
		s := lmtrain.Evaluate(val, o.r, modelScore(m)).Mean
		fmt.Fprintf(w, "rank mix %.2f: val recall %.4f hit %.4f\n", a, s.Recall, s.Hit)
		if v := s.Recall + s.Hit; v > bestV {
			best, bestV = a, v
		}
	}
	m.Cfg.RankMix = best
	fmt.Fprintf(w, "rank mix: selected %.2f\n", best)
	tuneTemperature(m, val, o.tempText, w)
}

// calibrate fits the text temperature of the model in -out on every text
// case of -calibrate. A temperature fitted on val is fitted on scenarios
// of the generators the model was trained on, whose outputs it ranks more
// confidently than real tool output; cases of generators held out of a
// model's training measure the confidence it will have on output it has
// not seen.
func calibrate(ctx context.Context, o options, stdout, stderr io.Writer) error {
	m, err := linemodel.Load(o.out)
	if err != nil {
		return err
	}
	var cases []lmtrain.Case
	for _, dir := range strings.Split(o.calibrate, ",") {
		cs, err := lmtrain.LoadDir(strings.TrimSpace(dir))
		if err != nil {
			return err
		}
		cases = append(cases, cs...)
	}
	exs, err := lmtrain.BuildExamples(ctx, cases, true, o.workers, progress(stderr, "features calibrate"))
	if err != nil {
		return err
	}
	var text []lmtrain.Example
	for _, ex := range exs {
		if ex.Lang == "text" { // only the text temperature is fitted
			text = append(text, ex)
		}
	}
	tuneTemperature(m, text, 0, stdout)
	return nil
}

// tuneTemperature fits the ranking temperatures for code and for text on
// val: the smallest temperature whose default-threshold nucleus keeps at
// least the 1 − t share of the gold lines it promises (a ranking trained
// on sparse gold lines is over-confident, more so on tool output, so at
// temperature 1 the default keeps fewer lines than it should).
func tuneTemperature(m *linemodel.Model, val []lmtrain.Example, fixedText float64, w io.Writer) {
	want := 1 - linemodel.DefaultThreshold
	var temps []float64
	for t := 50; t <= 300; t += 5 {
		temps = append(temps, float64(t)/100)
	}
	temps = append(temps, 4, 5, 6, 8)
	for _, text := range []bool{false, true} {
		var exs []*lmtrain.Example
		for i := range val {
			if (val[i].Lang == "text") == text && val[i].Text != "" && len(val[i].Gold) > 0 {
				exs = append(exs, &val[i])
			}
		}
		if text && fixedText > 0 {
			m.Cfg.RankTempText = fixedText
			fmt.Fprintf(w, "temperature (text true): %.2f from -rank-temp-text\n", fixedText)
			continue
		}
		if len(exs) == 0 {
			continue
		}
		ranks := make([][]float32, len(exs))
		blanks := make([][]bool, len(exs))
		for i, ex := range exs {
			ranks[i] = m.RankInput(ex.Input())
			lines := evalset.Lines(ex.Text)
			blanks[i] = make([]bool, len(ranks[i]))
			for j := range blanks[i] {
				blanks[i][j] = j < len(lines) && strings.TrimSpace(lines[j]) == ""
			}
		}
		chosen := temps[len(temps)-1]
		for _, temp := range temps {
			var recall, kept float64
			for i, ex := range exs {
				scores, _, _, _ := linemodel.NucleusScores(ranks[i], blanks[i], temp)
				hit, k := 0, 0
				for _, s := range scores {
					if s >= linemodel.DefaultThreshold {
						k++
					}
				}
				for _, g := range ex.Gold {
					if g >= 1 && g <= len(scores) && scores[g-1] >= linemodel.DefaultThreshold {
						hit++
					}
				}
				recall += float64(hit) / float64(len(ex.Gold))
				kept += float64(k) / float64(max(1, ex.N))
			}
			recall /= float64(len(exs))
			kept /= float64(len(exs))
			fmt.Fprintf(w, "temperature %.2f (text %v, %d val cases): default threshold keeps %.1f%% of lines, recall %.4f\n", temp, text, len(exs), 100*kept, recall)
			if recall >= want {
				chosen = temp
				break
			}
		}
		if text {
			m.Cfg.RankTempText = chosen
		} else {
			m.Cfg.RankTemp = chosen
		}
		fmt.Fprintf(w, "temperature (text %v): selected %.2f\n", text, chosen)
	}
}

func evalDir(ctx context.Context, o options, stdout, stderr io.Writer) error {
	m, err := linemodel.Load(o.out)
	if err != nil {
		return err
	}
	cases, err := lmtrain.LoadDir(o.eval)
	if err != nil {
		return err
	}
	start := time.Now()
	exs, err := lmtrain.BuildExamples(ctx, cases, true, o.workers, progress(stderr, "features eval"))
	if err != nil {
		return err
	}
	feat := time.Since(start)
	t0 := time.Now()
	ms := lmtrain.Evaluate(exs, o.r, modelScore(m))
	mlp := time.Since(t0)
	bs := lmtrain.Evaluate(exs, o.r, bm25Score)
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
		m.Score(ctx, c.Query, c.Text, lmtrain.CaseLanguage(c))
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
	byLang := map[string][]lmtrain.Example{}
	for _, ex := range exs {
		byLang[ex.Lang] = append(byLang[ex.Lang], ex)
	}
	fmt.Fprintf(stdout, "\nper language (r=%.2f): %-10s %5s %15s %15s\n", o.r, "lang", "cases", "model rec/hit", "bm25 rec/hit")
	for _, lang := range slices.Sorted(maps.Keys(byLang)) {
		l := byLang[lang]
		a := lmtrain.Evaluate(l, o.r, modelScore(m)).Mean
		b := lmtrain.Evaluate(l, o.r, bm25Score).Mean
		fmt.Fprintf(stdout, "%-10s %5d %7.4f/%.4f %7.4f/%.4f\n", lang, len(l), a.Recall, a.Hit, b.Recall, b.Hit)
	}
	// The model's own decision (P(keep) ≥ 0.5) without a budget.
	var kept, gold, hitGold, lines int
	for i := range exs {
		ex := &exs[i]
		p := m.Forward(ex.Input()).Keep
		g := map[int]bool{}
		for _, x := range ex.Gold {
			g[x-1] = true
		}
		for j, v := range p {
			if v >= 0.5 {
				kept++
				if g[j] {
					hitGold++
				}
			}
		}
		gold += len(g)
		lines += ex.N
	}
	fmt.Fprintf(stdout, "\nP(keep) >= 0.5: keeps %.1f%% of lines, %.1f%% of gold lines\n", 100*float64(kept)/float64(max(1, lines)), 100*float64(hitGold)/float64(max(1, gold)))
	return nil
}

// attnExperiment trains the attention encoder (attn) or its bag-of-words
// ablation (bag) on -pairs and logs the held-out pairs' ranking per epoch,
// writing the encoder to -encoder-attn-out when given; with
// -encoder-attn-eval it ranks the held-out pairs with a written encoder.
func attnExperiment(ctx context.Context, o options, stderr io.Writer) error {
	var trained *linemodel.AttnEncoder // -encoder-attn-eval's
	if o.attnEval != "" {
		data, err := os.ReadFile(o.attnEval)
		if err != nil {
			return err
		}
		if trained, err = linemodel.ReadAttnEncoder(data); err != nil {
			return err
		}
	} else if o.attnExp != "attn" && o.attnExp != "bag" {
		return fmt.Errorf("-encoder-attn-exp %q: want attn or bag", o.attnExp)
	}
	eo := lmtrain.DefaultEncoderOptions
	eo.MaxPairs, eo.MaxVocab = o.encMaxPairs, o.encVocab
	d, logf, err := loadPairs(ctx, o, eo, stderr)
	if err != nil {
		return err
	}
	if trained != nil {
		ev, err := lmtrain.EvalAttnEncoder(d, trained, lmtrain.DefaultAttnEncoderOptions.QueryWords)
		if err != nil {
			return err
		}
		logf("attention encoder %s (width %d): held-out %s", o.attnEval, trained.Dim, ev)
		return nil
	}
	ao := lmtrain.DefaultAttnEncoderOptions
	ao.Attn, ao.Dim, ao.Epochs, ao.Seed = o.attnExp == "attn", o.encDim, o.encEpochs, o.seed
	backend, err := fastcpu.New("")
	if err != nil {
		return err
	}
	e, _, err := lmtrain.TrainAttnEncoder(ctx, d, ao, backend, logf)
	if err != nil || o.attnOut == "" {
		return err
	}
	if err := writeTo(o.attnOut, e); err != nil {
		return err
	}
	logf("attention encoder: %d words of width %d in %s", len(e.Words), e.Dim, o.attnOut)
	return nil
}

// writeTo writes w to the file path.
func writeTo(path string, w io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// loadPairs reads -pairs for an encoder and returns a logger that stamps
// the time since.
func loadPairs(ctx context.Context, o options, eo lmtrain.EncoderOptions, stderr io.Writer) (*lmtrain.PairData, func(string, ...any), error) {
	if o.pairs == "" {
		return nil, nil, errors.New("the encoder needs -pairs")
	}
	start := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, format+" (%s)\n", append(args, time.Since(start).Round(time.Second))...)
	}
	d, err := lmtrain.LoadPairData(ctx, strings.Split(o.pairs, ","), eo, o.encVal)
	if err != nil {
		return nil, nil, err
	}
	logf("encoder: loaded %d train and %d val pairs, %d words", d.TrainPairs, d.ValPairs, len(d.Words))
	return d, logf, nil
}

// trainEncoder trains the pair encoder on mined pairs and writes it.
func trainEncoder(ctx context.Context, o options, stderr io.Writer) error {
	eo := lmtrain.DefaultEncoderOptions
	eo.MaxPairs, eo.Dim, eo.Epochs, eo.Seed, eo.Lexical, eo.MaxVocab = o.encMaxPairs, o.encDim, o.encEpochs, o.seed, o.encLexical, o.encVocab
	d, logf, err := loadPairs(ctx, o, eo, stderr)
	if err != nil {
		return err
	}
	enc, err := lmtrain.TrainPairEncoder(ctx, d, eo, logf)
	if err != nil {
		return err
	}
	if err := writeTo(o.encoder, enc); err != nil {
		return err
	}
	logf("encoder: %d words of width %d in %s", len(enc.Words), enc.Dim, o.encoder)
	return nil
}
