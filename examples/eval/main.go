// Command eval scores pruners on the project's eval sets (JSONL cases of a
// query, a file and the lines a commit touched; see shared/evalsets) and
// prints, per file and overall, gold-line recall, all-gold-kept rate,
// precision, F1, line and character compression, the share of code outputs
// that parse cleanly and the wall time per 1K input tokens, for the
// baselines (BM25 over lines, first-N, random) and for the library itself,
// all at matched compression: every method may keep
// k = max(1, round(r·n)) of a case's n lines.
//
//	go run ./examples/eval                       # dev set, r = 0.2
//	go run ./examples/eval -lines 0.1,0.2,0.3 -json out.json
//	go run ./examples/eval -model ./checkpoint ../shared/evalsets/dev/go_cli.jsonl
//	go run ./examples/eval -lines default -shuffled  # off-topic queries
//
// -lines default (printed as r = 0) runs the library rows without a budget,
// at their default threshold; the baselines, which need a k, sit it out.
// -shuffled pairs every case with the query of a case from another
// repository, so no line answers it: recall means nothing there and the
// kept share (1 − line_comp) is what to read.
//
// Rows:
//
//	bm25         the BM25 baseline, top-k lines (identical to baselines.py)
//	first        the first k lines
//	random       k random lines (the same draw as baselines.py)
//	lex+repair   the library (pruner.Prune) with the lexical scorer, a line
//	             budget of r and syntax repair: repaired lines count against
//	             the budget, so it keeps at most k lines
//	lex-raw      the same without repair
//	line+repair  the library with its default scorer, the embedded line
//	             model, a line budget of r and repair (as lex+repair)
//	line-raw     the same without repair: the model's top-k lines
//	model+repair the library with the checkpoint given by -model (named
//	             after its kind, e.g. lamr+repair; a line model folder
//	             written by examples/train stays model+repair)
//
// -unfold adds, for every library row, the row +unfold: the output after a
// simulated reader unfolds (pruner.Result.Expand) the one placeholder whose
// names share the most terms with the query, at the row's budget plus that
// fold (no match: no unfold), and the control row +largest: after
// unfolding the largest fold, names unread (see docs/navigation.md).
// -column NAME adds the row NAME+repair: the lines ranked by that one
// column of the line model's features (linemodel.FeatureNames, e.g.
// enc_win), scaled to [0,1] over the text, through the same budget and
// repair: what one feature knows alone.
// -scores NAME=FILE.jsonl (repeatable, or a comma list) adds the row
// NAME+repair: each case's lines ranked by external per-line scores (one
// JSON object a case: its id, the hash of its query and text, and
// "lines", a score per line; see scores.go), scaled to [0,1] as -column's,
// through the same budget and repair. A file without a case, with a case
// of another query or text, or with more or fewer scores than lines is
// refused before anything runs. -dump-units FILE writes, for every case,
// that identity, each line's innermost definition and the line model's
// line scores, and exits: what examples/eval/teachers/score.py reads to
// score lines with a pretrained sentence encoder.
// -tokens reads the -lines shares as shares of the input tokens
// (pruner.WithCompression(1/r)) for the library rows, the baselines sitting
// out; -names=false renders placeholders without names.
//
// Tables are printed per file, per language (when the files span several),
// per question kind (when the cases have kinds: locate, explain, debug,
// change, usage, tool), overall, and per tool family (when the cases'
// sources name several: "tool:node-test", "tool:grep", ...), the last
// even for one file.
//
// Without a budget (-lines default) the library rows keep what their
// threshold keeps; the bm25 row then keeps, case by case, as many lines as
// line+repair did (the first library row that ran, without it), so the two
// compare at the same kept share.
//
// Parse-clean share: only cases whose original text parses without errors
// are checked (a file the grammar cannot parse says nothing about the
// pruner). Baseline outputs are their kept lines joined as they are; library
// outputs are Result.Text, placeholders and fillers included.
//
// Exit codes: 0 success, 1 runtime error, 2 usage error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/parallel"
	"github.com/prunekit/pruner/internal/syntax"
	"github.com/prunekit/pruner/internal/tokenizer"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type flags struct {
	model, jsonOut string
	ratios         []float64
	methods        map[string]bool
	workers        int
	parse          bool
	shuffled       bool
	thesaurus      int
	tokens         bool       // -tokens: r is a share of the input tokens (library rows only)
	names          bool       // -names: placeholders name what they fold
	unfold         bool       // -unfold: add the one-unfold rows
	column         string     // -column: add a row that ranks lines by this feature column alone
	columnIdx      int        // its index in linemodel.FeatureNames
	scores         scoresFlag // -scores: rows that rank lines by external per-line scores
	dumpUnits      string     // -dump-units: write each case's definitions and line-model scores, and exit
	paths          []string
}

// defaultDev finds the shared dev set: ../shared/evalsets/dev from the
// repository root, searched upwards from the working directory so the
// command also works from a subfolder.
func defaultDev() string {
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared", "evalsets", "dev")
	}
	for {
		cand := filepath.Join(dir, "..", "shared", "evalsets", "dev")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("..", "shared", "evalsets", "dev")
		}
		dir = parent
	}
}

// All method names, in print order.
var methodNames = []string{"bm25", "first", "random", "lex+repair", "lex-raw", "line+repair", "line-raw", "model+repair", "oracle+repair"}

// libraryRows are the rows run through pruner.Prune with a built-in scorer:
// method → scorer and repair.
var libraryRows = map[string]struct {
	scorer string
	repair bool
}{
	"lex+repair":  {pruner.ScorerLexical, true},
	"lex-raw":     {pruner.ScorerLexical, false},
	"line+repair": {pruner.ScorerLine, true},
	"line-raw":    {pruner.ScorerLine, false},
}

// removedFlag is a flag that no longer exists; setting it fails with
// advice.
type removedFlag string

func (r removedFlag) String() string   { return "" }
func (r removedFlag) Set(string) error { return errors.New(string(r)) }

// errReported marks a usage error the flag package already printed.
var errReported = errors.New("usage error reported")

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	var f flags
	var ratios, methods string
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.model, "model", "", "checkpoint folder or hf:owner/name[@revision] (Hugging Face Hub): adds the model+repair row")
	fs.StringVar(&ratios, "lines", "0.2", "shares r of the lines kept, comma-separated (baselines keep k = max(1, round(r·lines)) lines; the pruner rows count placeholders as lines and never go below min(3, lines)); default: no budget")
	fs.Var(removedFlag("-ratio is gone (examples/prune used it for a token compression): -lines r[,r...] sets the shares of lines kept"),
		"ratio", "removed: use -lines")
	fs.StringVar(&f.jsonOut, "json", "", "write every summary and per-case result to this JSON file")
	fs.StringVar(&methods, "methods", "all", "comma-separated rows to run: "+strings.Join(methodNames, ",")+" (all: every row but oracle+repair, the bound a ranking that scores exactly the gold lines reaches through the same budget and repair)")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "cases scored in parallel (model rows run one case at a time)")
	fs.BoolVar(&f.parse, "parse", true, "check that code outputs parse (tree-sitter)")
	fs.BoolVar(&f.shuffled, "shuffled", false, "pair every case with the query of a case from another repository")
	fs.IntVar(&f.thesaurus, "thesaurus", 0, "append to every query up to N code words the programming thesaurus relates to it (examples/train/thesaurus); 0: off")
	fs.BoolVar(&f.tokens, "tokens", false, "read -lines as shares of the input tokens (pruner.WithCompression(1/r)); the baselines, which count lines, sit it out")
	fs.BoolVar(&f.names, "names", true, "placeholders name what they fold (pruner.WithPlaceholderNames)")
	fs.StringVar(&f.column, "column", "", "add a row column+repair that ranks lines by this column of the line model's features alone (linemodel.FeatureNames), through the same budget and repair: what one feature knows")
	fs.Var(&f.scores, "scores", "NAME=FILE.jsonl (repeatable, or a comma list): add a row NAME+repair that ranks each case's lines by FILE's scores for it (one JSON object a case: id, hash, lines; see scores.go), scaled to [0,1] as -column's are, through the same budget and repair")
	fs.StringVar(&f.dumpUnits, "dump-units", "", "write, for every case, its id and hash (as -scores reads them), each line's innermost definition and the line model's line scores to this JSONL file, and exit")
	fs.BoolVar(&f.unfold, "unfold", false, "add, for every library row, a row +unfold: the output after a reader unfolds the one placeholder whose names best match the query, and a control row +largest: after unfolding the largest fold")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: eval [flags] [FILE.jsonl | DIR ...]  (default: the shared dev set)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errReported, err) // printed by the flag package, with the usage
	}
	if f.columnIdx = slices.Index(linemodel.FeatureNames, f.column); f.column != "" && f.columnIdx < 0 {
		return nil, fmt.Errorf("-column %q: not a feature column (linemodel.FeatureNames)", f.column)
	}
	for _, s := range strings.Split(ratios, ",") {
		if strings.TrimSpace(s) == "default" {
			f.ratios = append(f.ratios, 0)
			continue
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(r > 0 && r <= 1) {
			return nil, fmt.Errorf("-lines %q: want shares in (0, 1] or default", s)
		}
		f.ratios = append(f.ratios, r)
	}
	f.methods = map[string]bool{}
	for _, m := range strings.Split(methods, ",") {
		m = strings.TrimSpace(m)
		if m == "all" {
			for _, n := range methodNames {
				f.methods[n] = true
			}
			continue
		}
		known := false
		for _, n := range methodNames {
			known = known || n == m
		}
		if !known {
			return nil, fmt.Errorf("-methods: unknown row %q (want %s)", m, strings.Join(methodNames, ","))
		}
		f.methods[m] = true
	}
	if methods == "all" {
		// The oracle is a bound, not a method: it runs when named.
		delete(f.methods, "oracle+repair")
	}
	if f.model == "" {
		delete(f.methods, "model+repair")
	} else if !f.methods["model+repair"] {
		return nil, errors.New("-model given but the model+repair row is not in -methods")
	}
	if f.workers < 1 {
		return nil, fmt.Errorf("-workers %d < 1", f.workers)
	}
	f.paths = fs.Args()
	if len(f.paths) == 0 {
		f.paths = []string{defaultDev()}
	}
	// "-json SET.jsonl" without a report path makes the flag take the set
	// as its value, and the run would overwrite the eval set it meant to
	// read; the report is one JSON document, never a .jsonl.
	if strings.HasSuffix(f.jsonOut, ".jsonl") {
		return nil, fmt.Errorf("-json %s: the report is one JSON document and would overwrite what looks like an eval set; name a .json file (-json out.json SET.jsonl)", f.jsonOut)
	}
	for _, p := range f.paths {
		if f.jsonOut != "" && filepath.Clean(p) == filepath.Clean(f.jsonOut) {
			return nil, fmt.Errorf("-json %s: is also an input; the report would overwrite it", f.jsonOut)
		}
	}
	return &f, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errReported) {
			fmt.Fprintf(stderr, "eval: %v\n", err)
		}
		return exitUsage
	}
	files, err := evalset.Load(f.paths...)
	if err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return exitRuntime
	}
	if f.shuffled {
		files = evalset.ShuffleQueries(files)
	}
	if f.thesaurus > 0 {
		files = expandQueries(files, f.thesaurus)
	}
	if f.dumpUnits != "" {
		if err := dumpUnits(ctx, f.dumpUnits, files); err != nil {
			fmt.Fprintf(stderr, "eval: %v\n", err)
			return exitRuntime
		}
		return exitOK
	}
	if strings.HasPrefix(f.model, pruner.HubPrefix) {
		// Fetch an hf: checkpoint ahead, with progress; Load then finds it
		// in the cache (and the report keeps its name).
		if _, err := pruner.Download(ctx, f.model, pruner.WithDownloadProgress(pruner.DownloadProgressTo(stderr))); err != nil {
			fmt.Fprintf(stderr, "eval: %v\n", err)
			return exitRuntime
		}
	}
	ev, err := newEvaluator(ctx, f)
	if err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return exitRuntime
	}
	for _, sp := range f.scores {
		t, err := readScores(sp)
		if err != nil {
			fmt.Fprintf(stderr, "eval: %v\n", err)
			return exitRuntime
		}
		ev.scores = append(ev.scores, t)
	}
	if err := checkScores(ev.scores, files); err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return exitRuntime
	}
	ev.progress = stderr
	start := time.Now()
	rep, err := ev.evaluate(ctx, files)
	if err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return exitRuntime
	}
	printReport(stdout, rep)
	fmt.Fprintf(stderr, "eval: %d cases, %d rows, %s\n", rep.Overall.Cases, len(rep.Overall.Rows), time.Since(start).Round(time.Millisecond))
	if f.jsonOut != "" {
		if err := writeJSON(f.jsonOut, rep); err != nil {
			fmt.Fprintf(stderr, "eval: %v\n", err)
			return exitRuntime
		}
	}
	return exitOK
}

func writeJSON(path string, rep *report) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	enc := json.NewEncoder(fh)
	enc.SetIndent("", " ")
	if err := enc.Encode(rep); err != nil {
		fh.Close()
		return fmt.Errorf("json: %w", err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	return nil
}

// printReport prints one aligned table per file and one overall.
func printReport(w io.Writer, rep *report) {
	groups := rep.Files
	if len(rep.Files) != 1 {
		// As baselines.py: the overall table only adds to several files.
		groups = append(append(append(append([]group(nil), rep.Files...), rep.Langs...), rep.Kinds...), rep.Overall)
	}
	// Tool families matter even within one file (the dev tool set is one).
	groups = append(groups, rep.Families...)
	for _, g := range groups {
		fmt.Fprintf(w, "== %s  (%d cases, %d parse-checked)\n", g.Name, g.Cases, g.ParseChecked)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "method\tr\trecall\thit\tprecision\tf1\tline_comp\tout_comp\tchar_comp\tparse_ok\tms/1Ktok\t")
		for _, row := range g.Rows {
			s := row.Summary
			parse := "-"
			if s.ParseChecked > 0 {
				parse = fmt.Sprintf("%.3f", s.ParseClean)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%.3f\t\n",
				row.Method, strconv.FormatFloat(row.Ratio, 'g', -1, 64),
				s.Mean.Recall, s.Mean.Hit, s.Mean.Precision, s.Mean.F1,
				s.Mean.LineComp, s.Mean.OutComp, s.Mean.CharComp, parse, s.MsPer1KTokens)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
}

// report is everything the command measured; it is also the -json output.
type report struct {
	Ratios []float64 `json:"ratios"`
	Model  string    `json:"model,omitempty"`
	Files  []group   `json:"files"`
	Langs  []group   `json:"languages,omitempty"` // when the files span several languages
	Kinds  []group   `json:"kinds,omitempty"`     // when the cases carry question kinds
	// Families holds a group per tool family (the cases' "tool:" source)
	// when the cases span several.
	Families []group      `json:"families,omitempty"`
	Overall  group        `json:"overall"`
	Cases    []caseResult `json:"cases"`
}

// group is the summary of one file, or of all files.
type group struct {
	Name         string `json:"name"`
	Cases        int    `json:"cases"`
	ParseChecked int    `json:"parse_checked"` // cases whose original parses cleanly
	Rows         []row  `json:"rows"`
}

type row struct {
	Method  string          `json:"method"`
	Ratio   float64         `json:"ratio"`
	Summary evalset.Summary `json:"summary"`
}

// caseResult is one case under one method and ratio.
type caseResult struct {
	ID      string              `json:"id"`
	File    string              `json:"file"`
	Method  string              `json:"method"`
	Ratio   float64             `json:"ratio"`
	K       int                 `json:"k"`
	Kept    []int               `json:"kept"`
	Metrics evalset.Metrics     `json:"metrics"`
	Parse   evalset.ParseStatus `json:"parse"` // 0 unchecked, 1 clean, 2 errors
	Tokens  int                 `json:"tokens"`
	Elapsed time.Duration       `json:"elapsed_ns"`
	Notes   []string            `json:"notes,omitempty"`
	// Score is the library's document score (Result.Score); absent for
	// the baselines.
	Score *float64 `json:"score,omitempty"`
}

// evaluator holds the pruners and the tokenizer shared by all cases.
type evaluator struct {
	f       *flags
	tok     *tokenizer.Tokenizer
	builtin map[string]map[float64]*pruner.Pruner // libraryRows, by method and ratio
	model   map[float64]*pruner.Pruner
	kind    string
	scores  []*scoreTable // -scores, in flag order
	// progress, when not nil, receives a line every 10 model cases (the
	// model rows can take minutes).
	progress io.Writer
}

func newEvaluator(ctx context.Context, f *flags) (*evaluator, error) {
	tok, err := tokenizer.Qwen3()
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	ev := &evaluator{f: f, tok: tok, builtin: map[string]map[float64]*pruner.Pruner{}, model: map[float64]*pruner.Pruner{}}
	for _, m := range methodNames {
		row, ok := libraryRows[m]
		if !ok || !f.methods[m] {
			continue
		}
		ev.builtin[m] = map[float64]*pruner.Pruner{}
		for _, r := range f.ratios {
			p, err := pruner.Load(ctx, "", f.budget(r, pruner.WithScorer(row.scorer), pruner.WithRepair(row.repair), pruner.WithPlaceholderNames(f.names))...)
			if err != nil {
				return nil, err
			}
			ev.builtin[m][r] = p
		}
	}
	if f.model != "" {
		base, err := pruner.Load(ctx, f.model)
		if err != nil {
			return nil, err
		}
		if ev.kind = base.Kind(); ev.kind == pruner.ScorerLine {
			ev.kind = "" // a trained line model's row must not read as the embedded one's
		}
		for _, r := range f.ratios {
			if ev.model[r], err = base.With(f.budget(r, pruner.WithPlaceholderNames(f.names))...); err != nil {
				return nil, err
			}
		}
	}
	return ev, nil
}

// budget returns opts with the option of a -lines share: r = 0 (default)
// sets no budget; with -tokens r is a share of the input tokens.
func (f *flags) budget(r float64, opts ...pruner.Option) []pruner.Option {
	switch {
	case r == 0:
		return opts
	case f.tokens:
		return append(opts, pruner.WithCompression(1/r))
	}
	return append(opts, pruner.WithLineBudget(r))
}

// warmUp runs every library pruner once, untimed, so that one-time costs
// (tokenizer tables, the model's first graph compilation) do not land on the
// first case's wall time.
func (ev *evaluator) warmUp(ctx context.Context, c evalset.Case) {
	var ps []*pruner.Pruner
	groups := []map[float64]*pruner.Pruner{ev.model}
	for _, m := range methodNames {
		if g, ok := ev.builtin[m]; ok {
			groups = append(groups, g)
		}
	}
	for _, m := range groups {
		for _, r := range ev.f.ratios {
			if p := m[r]; p != nil {
				ps = append(ps, p)
			}
		}
	}
	for _, p := range ps {
		// Errors surface again, with context, when the case is run.
		_, _ = p.Prune(ctx, c.Query, c.Text)
	}
}

// job is one case of one file.
type job struct {
	file string
	c    evalset.Case
}

// caseOutcome holds the results of one case, in row order.
type caseOutcome struct {
	results     []caseResult
	parseTarget bool
}

func (ev *evaluator) evaluate(ctx context.Context, files []evalset.File) (*report, error) {
	var jobs []job
	for _, fl := range files {
		for _, c := range fl.Cases {
			jobs = append(jobs, job{file: fl.Name, c: c})
		}
	}
	out := make([]caseOutcome, len(jobs))
	if len(jobs) > 0 {
		ev.warmUp(ctx, jobs[0].c)
	}
	// Lexical and baseline rows in parallel; model rows afterwards, one
	// case at a time, since the model already uses every core.
	if err := parallel.ForEach(ctx, len(jobs), ev.f.workers, func(i int) error {
		var err error
		out[i], err = ev.runCase(ctx, jobs[i], false)
		return err
	}); err != nil {
		return nil, err
	}
	if ev.f.model != "" {
		for i := range jobs {
			o, err := ev.runCase(ctx, jobs[i], true)
			if err != nil {
				return nil, err
			}
			out[i].results = append(out[i].results, o.results...)
			if ev.progress != nil && ((i+1)%10 == 0 || i+1 == len(jobs)) {
				fmt.Fprintf(ev.progress, "eval: model %d/%d cases\n", i+1, len(jobs))
			}
		}
	}

	rep := &report{Ratios: ev.f.ratios, Model: ev.f.model}
	byFile, byLang, byKind, byFamily := map[string][]int{}, map[string][]int{}, map[string][]int{}, map[string][]int{}
	var order, langs, kinds, families []string
	for i, j := range jobs {
		if _, ok := byFile[j.file]; !ok {
			order = append(order, j.file)
		}
		byFile[j.file] = append(byFile[j.file], i)
		if _, ok := byLang[j.c.Lang]; !ok {
			langs = append(langs, j.c.Lang)
		}
		byLang[j.c.Lang] = append(byLang[j.c.Lang], i)
		if k := j.c.Kind; k != "" {
			if _, ok := byKind[k]; !ok {
				kinds = append(kinds, k)
			}
			byKind[k] = append(byKind[k], i)
		}
		if f := toolFamily(j.c); f != "" {
			if _, ok := byFamily[f]; !ok {
				families = append(families, f)
			}
			byFamily[f] = append(byFamily[f], i)
		}
		rep.Cases = append(rep.Cases, out[i].results...)
	}
	all := make([]int, len(jobs))
	for i := range all {
		all[i] = i
	}
	for _, name := range order {
		rep.Files = append(rep.Files, ev.summarize(name, byFile[name], out))
	}
	if len(langs) > 1 {
		slices.Sort(langs)
		for _, l := range langs {
			rep.Langs = append(rep.Langs, ev.summarize("lang "+l, byLang[l], out))
		}
	}
	slices.SortFunc(kinds, func(a, b string) int { return kindOrder(a) - kindOrder(b) })
	for _, k := range kinds {
		rep.Kinds = append(rep.Kinds, ev.summarize("kind "+k, byKind[k], out))
	}
	if len(families) > 1 {
		slices.Sort(families)
		for _, f := range families {
			rep.Families = append(rep.Families, ev.summarize("family "+strings.TrimPrefix(f, "tool:"), byFamily[f], out))
		}
	}
	rep.Overall = ev.summarize("overall", all, out)
	return rep, nil
}

// toolFamily names a tool-output case's family: its "tool:" source, or
// the "tool:family/" prefix of its ID (the cases the trainer writes with
// -dump-val); "" for any other case.
func toolFamily(c evalset.Case) string {
	if strings.HasPrefix(c.Source, "tool:") {
		return c.Source
	}
	if !strings.HasPrefix(c.ID, "tool:") {
		return ""
	}
	if i := strings.IndexAny(c.ID, "/#"); i > 0 {
		return c.ID[:i]
	}
	return c.ID
}

// kindOrder orders the question kinds as the question set's README lists
// them; unknown kinds come last.
func kindOrder(k string) int {
	if i := slices.Index([]string{"locate", "explain", "debug", "change", "usage", "tool"}, k); i >= 0 {
		return i
	}
	return 100
}

// summarize aggregates the cases idx into one group, rows ordered by ratio
// then method.
func (ev *evaluator) summarize(name string, idx []int, out []caseOutcome) group {
	g := group{Name: name, Cases: len(idx)}
	obs := map[string][]evalset.Observation{}
	for _, i := range idx {
		if out[i].parseTarget {
			g.ParseChecked++
		}
		for _, r := range out[i].results {
			key := r.Method + "@" + strconv.FormatFloat(r.Ratio, 'g', -1, 64)
			obs[key] = append(obs[key], evalset.Observation{Metrics: r.Metrics, Parse: r.Parse, Tokens: r.Tokens, Elapsed: r.Elapsed})
		}
	}
	for _, r := range ev.f.ratios {
		rows := append(slices.Clone(methodNames), "column+repair")
		for _, t := range ev.scores {
			rows = append(rows, scoreRowPrefix+t.name)
		}
		for _, m := range rows {
			for _, m := range []string{m, m + unfoldSuffix, m + largestSuffix} {
				o, ok := obs[m+"@"+strconv.FormatFloat(r, 'g', -1, 64)]
				if !ok {
					continue
				}
				g.Rows = append(g.Rows, row{Method: ev.rowName(m), Ratio: r, Summary: evalset.Summarize(o)})
			}
		}
	}
	return g
}

func (ev *evaluator) rowName(m string) string {
	if m == "column+repair" {
		return ev.f.column + "+repair"
	}
	if name, ok := strings.CutPrefix(m, scoreRowPrefix); ok {
		return name + "+repair"
	}
	if strings.HasPrefix(m, "model+repair") && ev.kind != "" {
		return ev.kind + strings.TrimPrefix(m, "model")
	}
	return m
}

// unfoldSuffix names the row of a library row after one unfold chosen by
// the placeholders' names (-unfold), largestSuffix the control row after
// unfolding the largest fold.
const (
	unfoldSuffix  = "+unfold"
	largestSuffix = "+largest"
)

// largestFold is the control reader of -unfold: it unfolds the placeholder
// that folds the most lines (the first on ties), names unread.
func largestFold(phs []pruner.Placeholder) (pruner.LineRange, bool) {
	best := -1
	for i, ph := range phs {
		if best < 0 || ph.LastLine-ph.FirstLine > phs[best].LastLine-phs[best].FirstLine {
			best = i
		}
	}
	if best < 0 {
		return pruner.LineRange{}, false
	}
	return pruner.LineRange{First: phs[best].FirstLine, Last: phs[best].LastLine}, true
}

// chooseUnfold is the simulated reader of -unfold: it unfolds the one
// placeholder whose names share the most query terms (the query's
// identifier pieces without stopwords, as BM25 reads it, each counted once;
// see evalset.NameMatches), the first such placeholder on ties; ok is false when no
// placeholder's names match, and the reader then reads the output as is.
func chooseUnfold(query string, phs []pruner.Placeholder) (pruner.LineRange, bool) {
	best, bestScore := -1, 0
	for i, ph := range phs {
		if score := evalset.NameMatches(query, ph.Names); score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return pruner.LineRange{}, false
	}
	return pruner.LineRange{First: phs[best].FirstLine, Last: phs[best].LastLine}, true
}

// runCase scores one case under every selected row and ratio: the model
// row alone when model is set, every other row otherwise.
func (ev *evaluator) runCase(ctx context.Context, j job, model bool) (caseOutcome, error) {
	c := j.c
	lines := c.Lines()
	n := len(lines)
	tokens := len(ev.tok.Encode(c.Text))
	lang := syntax.Detect(c.Text, c.Path)
	parseTarget := ev.f.parse && lang.IsCode() && ev.parseStatus(ctx, lang, c.Text) == evalset.ParseClean
	var o caseOutcome
	o.parseTarget = parseTarget
	add := func(method string, r float64, kept []int, out string, outLang syntax.Language, elapsed time.Duration, notes []string, score *float64) {
		res := caseResult{ID: c.ID, File: j.file, Method: method, Ratio: r, K: evalset.Budget(r, n),
			Kept: kept, Metrics: c.Score(kept), Tokens: tokens, Elapsed: elapsed, Notes: notes, Score: score}
		if n > 0 {
			// Placeholder lines are output lines too.
			res.Metrics.OutComp = 1 - float64(len(chunk.SplitLines(out)))/float64(n)
		}
		if parseTarget {
			res.Parse = ev.parseStatus(ctx, outLang, out)
		}
		o.results = append(o.results, res)
	}
	library := func(method string, p *pruner.Pruner, r float64) error {
		q, err := p.With(pruner.WithFileName(c.Path))
		if err != nil {
			return err
		}
		t0 := time.Now()
		res, err := q.Prune(ctx, c.Query, c.Text)
		elapsed := time.Since(t0)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, c.ID, err)
		}
		add(method, r, res.KeptLines(), res.Text, syntax.Language(res.Language), elapsed, res.Notes, &res.Score)
		if ev.f.unfold {
			// The reader opens one fold, chosen by its names; without a
			// match it reads the output as it is.
			t0 := time.Now()
			unfolded := res
			if rg, ok := chooseUnfold(c.Query, res.Placeholders); ok {
				if unfolded, err = res.ExpandContext(ctx, rg); err != nil {
					return fmt.Errorf("%s %s: unfold: %w", method, c.ID, err)
				}
			}
			add(method+unfoldSuffix, r, unfolded.KeptLines(), unfolded.Text, syntax.Language(unfolded.Language), elapsed+time.Since(t0), unfolded.Notes, &unfolded.Score)
			// The control: a reader blind to names opens the largest fold.
			t0 = time.Now()
			largest := res
			if rg, ok := largestFold(res.Placeholders); ok {
				if largest, err = res.ExpandContext(ctx, rg); err != nil {
					return fmt.Errorf("%s %s: unfold: %w", method, c.ID, err)
				}
			}
			add(method+largestSuffix, r, largest.KeptLines(), largest.Text, syntax.Language(largest.Language), elapsed+time.Since(t0), largest.Notes, &largest.Score)
		}
		return nil
	}
	for _, r := range ev.f.ratios {
		k := evalset.Budget(r, n)
		baselines := r > 0 && !ev.f.tokens // a baseline needs its k
		if model {
			if err := library("model+repair", ev.model[r], r); err != nil {
				return o, err
			}
			continue
		}
		if baselines && ev.f.methods["bm25"] {
			t0 := time.Now()
			kept := evalset.BM25(c.Query, c.Text, k)
			add("bm25", r, kept, joinKept(c.Text, kept), lang, time.Since(t0), nil, nil)
		}
		if baselines && ev.f.methods["first"] {
			t0 := time.Now()
			kept := evalset.First(n, k)
			add("first", r, kept, joinKept(c.Text, kept), lang, time.Since(t0), nil, nil)
		}
		if baselines && ev.f.methods["random"] {
			t0 := time.Now()
			kept := evalset.Random(c.ID, r, n, k)
			add("random", r, kept, joinKept(c.Text, kept), lang, time.Since(t0), nil, nil)
		}
		for _, m := range methodNames {
			if p := ev.builtin[m][r]; p != nil {
				if err := library(m, p, r); err != nil {
					return o, err
				}
			}
		}
		if ev.f.column != "" {
			p, err := pruner.New(columnScorer{col: ev.f.columnIdx, lang: lang}, ev.f.budget(r, pruner.WithPlaceholderNames(ev.f.names))...)
			if err != nil {
				return o, err
			}
			if err := library("column+repair", p, r); err != nil {
				return o, err
			}
		}
		for _, t := range ev.scores {
			s, err := t.lookup(c)
			if err != nil {
				return o, err
			}
			p, err := pruner.New(fixedScorer(s), ev.f.budget(r, pruner.WithPlaceholderNames(ev.f.names))...)
			if err != nil {
				return o, err
			}
			if err := library(scoreRowPrefix+t.name, p, r); err != nil {
				return o, err
			}
		}
		if ev.f.methods["oracle+repair"] {
			p, err := pruner.New(goldScorer(c.GoldLines), ev.f.budget(r, pruner.WithPlaceholderNames(ev.f.names))...)
			if err != nil {
				return o, err
			}
			if err := library("oracle+repair", p, r); err != nil {
				return o, err
			}
		}
	}
	if !model && slices.Contains(ev.f.ratios, 0) {
		ev.bm25AtDefault(&o, c, lang, add)
	}
	return o, nil
}

// bm25AtDefault adds the bm25 row of the default (unbudgeted) setting once
// the library rows have run: it keeps as many lines as line+repair kept
// for this case (or, without that row, the first library row that ran).
func (ev *evaluator) bm25AtDefault(o *caseOutcome, c evalset.Case, lang syntax.Language,
	add func(string, float64, []int, string, syntax.Language, time.Duration, []string, *float64)) {
	if !ev.f.methods["bm25"] {
		return
	}
	// line+repair is the library's default; the other library rows stand
	// in when it does not run.
	for _, m := range append([]string{"line+repair"}, methodNames...) {
		for _, r := range o.results {
			if r.Method != m || r.Ratio != 0 {
				continue
			}
			t0 := time.Now()
			kept := evalset.BM25(c.Query, c.Text, len(r.Kept))
			add("bm25", 0, kept, joinKept(c.Text, kept), lang, time.Since(t0), nil, nil)
			return
		}
	}
}

// joinKept is what a baseline hands an agent: its kept lines, verbatim with
// their terminators, in input order.
func joinKept(text string, kept []int) string {
	lines := chunk.SplitLines(text)
	keep := make([]bool, len(lines)+1)
	for _, k := range kept {
		if k >= 1 && k <= len(lines) {
			keep[k] = true
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if keep[l.Number] {
			b.WriteString(text[l.Start:l.TermEnd])
		}
	}
	return b.String()
}

// parseStatus parses src as lang: clean, with errors, or unchecked when
// lang is not code or the parser refuses the text.
func (ev *evaluator) parseStatus(ctx context.Context, lang syntax.Language, src string) evalset.ParseStatus {
	if !lang.IsCode() {
		return evalset.ParseUnchecked
	}
	tree, err := syntax.Parse(ctx, lang, []byte(src))
	if err != nil {
		return evalset.ParseUnchecked
	}
	if tree.Errors == 0 {
		return evalset.ParseClean
	}
	return evalset.ParseErrors
}

// columnScorer scores lines by one column of the line model's features,
// scaled to [0,1] over the text (the -column row).
type columnScorer struct {
	col  int
	lang syntax.Language
}

func (c columnScorer) Name() string { return "column" }

func (c columnScorer) Score(ctx context.Context, query string, doc *pruner.Document) (*pruner.Scores, error) {
	X, n := linemodel.Features(ctx, query, doc.Text, c.lang)
	if n != len(doc.Lines) {
		return nil, fmt.Errorf("column scorer: %d feature rows for %d lines", n, len(doc.Lines))
	}
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(X[i*linemodel.NumFeatures+c.col])
	}
	scaleUnit(s)
	return &pruner.Scores{Lines: s, Doc: 1}, nil
}

// goldScorer scores a case's gold lines (1-based) 1 and every other line 0:
// the oracle+repair row, what a perfect ranking keeps through the budget,
// the repair and the placeholders, which bounds any scorer's recall there.
type goldScorer []int

func (g goldScorer) Name() string { return "oracle" }

func (g goldScorer) Score(_ context.Context, _ string, doc *pruner.Document) (*pruner.Scores, error) {
	s := make([]float64, len(doc.Lines))
	for _, l := range g {
		if l >= 1 && l <= len(s) {
			s[l-1] = 1
		}
	}
	return &pruner.Scores{Lines: s, Doc: 1}, nil
}
