// Command prune filters a text through a pruner model: pipe a file, a grep or
// a log into it with the question you are asking, and it prints the lines
// that matter, the rest folded into placeholders.
//
//	cat retry.py | prune -model ./checkpoint -q "how are retries scheduled?"
//	prune -model ./checkpoint -q "where is the buffer grown?" -f builder.go
//	go test ./... 2>&1 | prune -q "which test failed and why?" -keep-last
//
// -model hf:owner/name[@revision] fetches a published checkpoint from the
// Hugging Face Hub into its cache (progress on standard error; HF_TOKEN,
// HF_ENDPOINT and HF_HUB_OFFLINE=1 are honoured) and runs it from there:
//
//	prune -model hf:ayanami-kitasan/code-pruner -q "how are retries scheduled?" -f retry.py
//
// Without -model it uses the library's embedded line model, a small model
// that scores whole lines on the CPU; -scorer lexical picks the BM25 baseline
// (and says so on standard error).
//
// Budgets: -lines F keeps a share F of the lines, -budget N at most N
// tokens, -compression X about 1/X of the tokens; without one, -threshold
// decides. Placeholders name what they fold and the input lines they
// stand for, "// ... 40 lines omitted (120-159): func (c *Client) do"; run
// again with -expand 120-159, or with a name a placeholder prints,
// -expand "func (c *Client) do" (or do, Client.do; comma-separated, and
// the flag may repeat), to see those lines in full, the rest pruned as
// before; -delta prints only the lines -expand adds, numbered. The input
// is read up to -max-input bytes (16 MiB; 0 lifts the cap), never more.
//
// Exit codes: 0 success, 1 runtime error, 2 usage error, 3 input that looks
// binary (NUL bytes, mostly invalid UTF-8, UTF-16; -binary prunes it as
// text), 4 input over -max-input bytes or -max-input-lines lines.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/prunekit/pruner"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
	exitBinary  = 3
	exitTooBig  = 4
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	if f, err := parse(os.Args[1:], io.Discard); err == nil {
		setMemoryLimit(f.model)
	}
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// setMemoryLimit sets pruner.SuggestedMemoryLimit(model) as the soft memory
// limit (the weights live on the Go heap: see its doc), unless GOMEMLIMIT
// is set or a limit already is.
func setMemoryLimit(model string) {
	if os.Getenv("GOMEMLIMIT") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return
	}
	if limit := pruner.SuggestedMemoryLimit(model); limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}

type flags struct {
	model, query, file, lang, decision string
	scorer                             string
	threshold, lineBudget, compression float64
	compat, asJSON, numbers, noRepair  bool
	keepFirst, keepLast, lexical       bool
	binary                             bool
	maxLength, tokenBudget             int
	maxInput                           int64
	maxInputLines                      int
	minTokens                          int
	minRelevance                       float64
	backend, precision                 string
	attnBlock                          int

	// expand: what -expand shows in full (ranges or names, as
	// Result.Unfold takes them); delta: print only what they add;
	// noNames: placeholders without names (-no-names).
	expand  []string
	delta   bool
	noNames bool
	hints   int
}

// removedFlag is a flag that no longer exists; setting it fails with
// advice.
type removedFlag string

func (r removedFlag) String() string     { return "" }
func (r removedFlag) Set(s string) error { return errors.New(string(r)) }

// ratioRemoved explains -ratio, which meant "keep 1/X of the tokens" here
// and "share of lines" in examples/eval.
const ratioRemoved = "-ratio is gone (it meant different things in different commands): " +
	"-compression X keeps about 1/X of the tokens, -lines F a share F of the lines"

// errReported marks a usage error already printed (by the flag package).
var errReported = errors.New("usage error reported")

func parse(args []string, stderr io.Writer) (*flags, error) {
	var f flags
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.model, "model", "", "checkpoint folder (SWE-Pruner or LaMR layout) or hf:owner/name[@revision] on the Hugging Face Hub; default: the embedded line model")
	fs.StringVar(&f.scorer, "scorer", "auto", "auto (the -model checkpoint, else the embedded line model), line, lexical (BM25 baseline) or semantic (a -model sentence encoder reranking the line model)")
	fs.BoolVar(&f.lexical, "lexical", false, "shorthand for -scorer lexical")
	fs.IntVar(&f.tokenBudget, "budget", 0, "keep at most this many tokens (replaces -threshold)")
	fs.Float64Var(&f.compression, "compression", 0, "keep about 1/X of the tokens, e.g. 4 (replaces -threshold)")
	fs.Float64Var(&f.lineBudget, "lines", 0, "keep this share of the lines, e.g. 0.2 (replaces -threshold)")
	fs.Var(removedFlag(ratioRemoved), "ratio", "removed: use -compression X or -lines F")
	fs.Int64Var(&f.maxInput, "max-input", pruner.DefaultMaxInputBytes, "largest input in bytes (larger: exit code 4); 0 lifts the cap")
	fs.IntVar(&f.maxInputLines, "max-input-lines", pruner.DefaultMaxInputLines, "largest input in lines (more: exit code 4); 0 lifts the cap")
	fs.StringVar(&f.query, "q", "", "what you are looking for (required)")
	fs.StringVar(&f.file, "f", "", "file to prune (default: standard input); its name helps detect the language")
	fs.StringVar(&f.lang, "lang", "", "language override (python, go, js, ts, java, rust, c, cpp, text)")
	fs.StringVar(&f.decision, "decision", "", "decision mode: prob, viterbi or marginal (default: by checkpoint)")
	fs.Float64Var(&f.threshold, "threshold", -1, "keep lines scoring at least this (default: the scorer's, 0.5; 0.2 for the line model)")
	fs.IntVar(&f.maxLength, "max-length", 8192, "model window length in tokens")
	fs.StringVar(&f.backend, "backend", "", "backend of a -model checkpoint: go (default), simplego, or xla[:PLUGIN] (a binary built with -tags xla)")
	fs.StringVar(&f.precision, "precision", "", "weight products of a -model checkpoint: float32 (default) or bf16 (AVX512_BF16 CPUs, XLA GPUs)")
	fs.IntVar(&f.attnBlock, "attention-block", 0, "a -model checkpoint's causal attention in blocks of this many query tokens (exact; faster at long windows on a GPU, slower to compile); 0: whole windows")
	fs.BoolVar(&f.compat, "swepruner", false, "SWE-Pruner compatible output ((filtered N lines))")
	fs.BoolVar(&f.asJSON, "json", false, "print the whole result as JSON")
	fs.BoolVar(&f.numbers, "n", false, "prefix kept lines with their input line numbers (nl -ba style)")
	fs.BoolVar(&f.noRepair, "no-repair", false, "skip the syntax-aware repair pass")
	fs.BoolVar(&f.keepFirst, "keep-first", false, "always keep the first line")
	fs.BoolVar(&f.keepLast, "keep-last", false, "always keep the last line")
	fs.IntVar(&f.minTokens, "min-tokens", pruner.DefaultMinInputTokens, "inputs shorter than this many tokens come back whole when no budget is set; 0 prunes any size")
	fs.Float64Var(&f.minRelevance, "min-relevance", -1, "fold a text whose relevance to -q is below this to a skeleton (default: the line model's calibrated gate); 0 turns the gate off")
	fs.BoolVar(&f.binary, "binary", false, "prune input that looks binary as text (default: refuse it, exit code 3)")
	fs.Func("expand", "show these in full: line ranges or names that placeholders print, comma-separated, e.g. 120-159,readEvents (repeatable)", func(s string) error {
		if strings.TrimSpace(s) == "" {
			return errors.New("empty: want line ranges such as 120-159 or names that placeholders print")
		}
		f.expand = append(f.expand, s)
		return nil
	})
	fs.BoolVar(&f.delta, "delta", false, "with -expand: print only the lines it adds to the first view, numbered, with the placeholders around them")
	fs.BoolVar(&f.noNames, "no-names", false, "placeholders without the names of what they fold")
	fs.IntVar(&f.hints, "hints", 0, "let the N placeholders whose folds score best say what in them is likely relevant, as an item -expand takes")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errReported, err) // the flag package printed it, with the usage
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if strings.TrimSpace(f.query) == "" {
		return nil, errors.New("-q is required")
	}
	budgets := 0
	for _, set := range []bool{f.tokenBudget != 0, f.compression != 0, f.lineBudget != 0} {
		if set {
			budgets++
		}
	}
	if budgets > 1 {
		return nil, errors.New("-budget, -compression and -lines exclude each other")
	}
	if f.lexical && f.scorer != pruner.ScorerAuto && f.scorer != pruner.ScorerLexical {
		return nil, fmt.Errorf("-lexical is -scorer lexical: it contradicts -scorer %s", f.scorer)
	}
	if f.compat && budgets > 0 {
		return nil, errors.New("-swepruner keeps lines by threshold, as the service: -budget, -compression and -lines need the library's output")
	}
	if f.compat && f.numbers {
		return nil, errors.New("-swepruner prints the service's output byte for byte: -n numbers the library's output")
	}
	if f.compat && f.hints > 0 {
		return nil, errors.New("-swepruner prints the service's placeholders: -hints needs the library's output")
	}
	if f.hints < 0 {
		return nil, errors.New("-hints must be >= 0")
	}
	if f.delta && len(f.expand) == 0 {
		return nil, errors.New("-delta prints what -expand adds: give -expand too")
	}
	if f.delta && f.asJSON {
		return nil, errors.New("-delta prints text: -json prints the whole view after -expand")
	}
	if f.maxInput < 0 || f.maxInputLines < 0 {
		return nil, errors.New("-max-input and -max-input-lines must be >= 0 (0 lifts the cap)")
	}
	return &f, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errReported) {
			fmt.Fprintf(stderr, "prune: %v\n", err)
		}
		return exitUsage
	}
	text, err := readInput(f.file, stdin, f.maxInput)
	if errors.Is(err, pruner.ErrInputTooLarge) {
		fmt.Fprintf(stderr, "prune: %v\n", err)
		return exitTooBig
	}
	if err != nil {
		fmt.Fprintf(stderr, "prune: %v\n", err)
		return exitRuntime
	}
	opts := []pruner.Option{
		pruner.WithMaxInputBytes(int(f.maxInput)), pruner.WithMaxInputLines(f.maxInputLines),
		pruner.WithMaxLength(f.maxLength),
		pruner.WithKeepFirstLine(f.keepFirst), pruner.WithKeepLastLine(f.keepLast),
		pruner.WithFileName(f.file), pruner.WithDecision(pruner.Decision(f.decision)),
		pruner.WithBinaryInput(f.binary), pruner.WithMinInputTokens(f.minTokens),
		pruner.WithPlaceholderNames(!f.noNames),
		pruner.WithFoldHints(f.hints),
		pruner.WithBackend(f.backend), pruner.WithAttentionBlock(f.attnBlock),
	}
	if f.precision != "" {
		opts = append(opts, pruner.WithPrecision(pruner.Precision(f.precision)))
	}
	if f.minRelevance != -1 {
		opts = append(opts, pruner.WithMinRelevance(f.minRelevance))
	}
	if f.threshold != -1 {
		opts = append(opts, pruner.WithThreshold(f.threshold))
	}
	if f.lang != "" {
		opts = append(opts, pruner.WithLanguage(f.lang))
	}
	if f.noRepair {
		opts = append(opts, pruner.WithRepair(false))
	}
	if f.compat {
		opts = append(opts, pruner.WithSWEPrunerCompat())
	}
	switch {
	case f.tokenBudget != 0:
		opts = append(opts, pruner.WithTokenBudget(f.tokenBudget))
	case f.compression != 0:
		opts = append(opts, pruner.WithCompression(f.compression))
	case f.lineBudget != 0:
		opts = append(opts, pruner.WithLineBudget(f.lineBudget))
	}
	if f.lexical {
		f.scorer = pruner.ScorerLexical
	}
	opts = append(opts, pruner.WithScorer(f.scorer))
	if strings.HasPrefix(f.model, pruner.HubPrefix) {
		// A checkpoint on the Hugging Face Hub: fetched into its cache
		// unless there, with progress on stderr, then loaded from there.
		// Download applies the options too, so a bad one is refused
		// before gigabytes are fetched.
		dir, err := pruner.Download(ctx, f.model, append(opts, pruner.WithDownloadProgress(pruner.DownloadProgressTo(stderr)))...)
		if err != nil {
			fmt.Fprintf(stderr, "prune: %v\n", err)
			if errors.Is(err, pruner.ErrOption) {
				return exitUsage
			}
			return exitRuntime
		}
		f.model = dir
		setMemoryLimit(dir) // main could not size it before the download
	}
	p, err := pruner.Load(ctx, f.model, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "prune: %v\n", err)
		if errors.Is(err, pruner.ErrOption) {
			return exitUsage
		}
		return exitRuntime
	}
	if p.Kind() == pruner.ScorerLexical {
		fmt.Fprintln(stderr, "prune: scoring with the lexical (BM25) baseline, not a model; pass -model DIR for a SWE-Pruner/LaMR checkpoint")
	}
	res, err := p.Prune(ctx, f.query, string(text))
	if errors.Is(err, pruner.ErrBinaryInput) {
		fmt.Fprintf(stderr, "prune: %v; pass -binary to prune it as text\n", err)
		return exitBinary
	}
	if errors.Is(err, pruner.ErrInputTooLarge) {
		fmt.Fprintf(stderr, "prune: %v; -max-input and -max-input-lines set the caps, 0 lifts them\n", err)
		return exitTooBig
	}
	if err != nil {
		fmt.Fprintf(stderr, "prune: %v\n", err)
		return exitRuntime
	}
	first := res
	if len(f.expand) > 0 {
		if res, err = res.Unfold(ctx, f.expand...); err != nil {
			fmt.Fprintf(stderr, "prune: -expand: %v\n", err)
			if errors.Is(err, pruner.ErrLineRange) || errors.Is(err, pruner.ErrUnknownName) {
				return exitUsage
			}
			return exitRuntime
		}
	}
	switch {
	case f.delta:
		d, err := res.Delta(first)
		if err != nil {
			fmt.Fprintf(stderr, "prune: -delta: %v\n", err)
			return exitRuntime
		}
		io.WriteString(stdout, d)
	case f.asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "prune: %v\n", err)
			return exitRuntime
		}
	case f.numbers:
		io.WriteString(stdout, res.Numbered())
	default:
		io.WriteString(stdout, res.Text)
	}
	kept := len(res.KeptLines())
	fmt.Fprintf(stderr, "prune: %s kept %d of %d lines, %d of %d tokens (score %.3f)\n",
		res.Scorer, kept, len(res.Lines), res.Tokens.Kept, res.Tokens.Input, res.Score)
	if res.Unpruned != "" {
		fmt.Fprintf(stderr, "prune: returned whole: %s\n", res.Unpruned)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "prune: note: %s\n", n)
	}
	for _, e := range res.Expanded {
		shown := make([]string, len(e.Lines))
		for i, r := range e.Lines {
			shown[i] = r.String()
		}
		what := ""
		if len(e.Names) > 0 {
			what = " (" + strings.Join(e.Names, "; ") + ")"
		}
		fmt.Fprintf(stderr, "prune: expanded %s%s: lines %s\n", e.Item, what, strings.Join(shown, ","))
	}
	return exitOK
}

// readInput reads the file (standard input when file is "") up to limit
// bytes (0: no limit): at most limit+1 bytes are read, and more than limit
// is refused with an error wrapping pruner.ErrInputTooLarge. A regular file
// over the limit is refused before reading.
func readInput(file string, stdin io.Reader, limit int64) ([]byte, error) {
	r, name := stdin, "standard input"
	if file != "" {
		fh, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() && limit > 0 && st.Size() > limit {
			return nil, tooLarge(file, st.Size(), limit)
		}
		r, name = fh, file
	}
	if limit > 0 {
		r = io.LimitReader(r, limit+1)
	}
	text, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(text)) > limit {
		return nil, tooLarge(name, -1, limit)
	}
	return text, nil
}

func tooLarge(name string, size, limit int64) error {
	what := fmt.Sprintf("over %d bytes", limit)
	if size >= 0 {
		what = fmt.Sprintf("%d bytes, over %d", size, limit)
	}
	return fmt.Errorf("%w: %s: %s (-max-input; 0 lifts the cap)", pruner.ErrInputTooLarge, name, what)
}
