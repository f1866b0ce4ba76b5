// Command navloop measures the unfold loop as agents use it (issue #46): a
// reader gets a pruned first view of a text and a question, may ask once to
// unfold what a placeholder folds, and answers. Over eval cases (JSONL of
// query, text and gold lines; see shared/evalsets) it runs four settings a
// case:
//
//	default  the first view at the library's default (no budget); no unfold
//	tight    a tight first view (-first); no unfold
//	range    the tight view; the reader may name line ranges once and gets
//	         the whole view again, re-rendered (what read_pruned did)
//	name     the tight view; the reader may name names a placeholder prints
//	         or ranges once (Result.Unfold) and gets Result.Delta: only the
//	         lines it did not have, numbered, with the placeholders around
//
// and prints, per question kind and overall, gold-line recall over what the
// reader read (the first view's lines and the lines the unfold showed), the
// share of cases with every gold line read, the unfold rate (replies that
// asked to unfold) and the tokens read (first view + reply, Qwen3 tokens,
// as a share of the input's tokens; mean and median).
//
//	go run ./examples/navloop                                  # shared questions, sim reader
//	go run ./examples/navloop -first tokens:0.1 ../shared/evalsets/questions
//	NAVLOOP_API_KEY=... go run ./examples/navloop -reader http://localhost:8000 -reader-model qwen3-32b \
//	    -judge http://localhost:8000 -judge-model qwen3-235b -out /tmp/navloop ../shared/evalsets/questions
//	go run ./examples/navloop -rejudge /tmp/navloop/transcripts.jsonl -judge URL -judge-model NAME -out /tmp/rejudged
//
// -reader sim (the default) is offline and deterministic: in the range and
// name settings it unfolds the one placeholder whose names share the most
// terms with the query (ranges in range, that placeholder's best-matching
// name in name; no match, no unfold), then answers nothing: there is no
// judge, only recall and tokens. -reader URL talks to an OpenAI-compatible
// /v1/chat/completions server (the key, if any, from NAVLOOP_API_KEY) with
// the prompts of prompts/reader.txt ("first" and "reply" templates;
// -reader-prompt FILE replaces them), and also asks it the question over the
// whole text, for the reference answer. The reader replies "ANSWER: ..." or
// "UNFOLD: item, item"; a reply that is neither, an unfold the setting does
// not allow, or one the library refuses (an unknown name, a bad range) gets
// a note or the library's error text as the reply, whose tokens count, and
// the reader is asked for its answer: one unfold a case, at most.
//
// -judge URL (key NAVLOOP_JUDGE_API_KEY, else NAVLOOP_API_KEY) grades the
// four settings' answers with prompts/judge.txt: it sees the question, the
// gold lines numbered, the full-text answer and the four answers shuffled
// under anonymous labels (a shuffle seeded by the case id and -seed), and
// replies JSON; the labels are mapped back and the counts of correct,
// partial and wrong are reported per setting. -out DIR writes every case's
// conversations, metrics and grades to DIR/transcripts.jsonl; -rejudge
// FILE reads such a file and judges it again, without a reader.
//
// Exit codes: 0 success, 1 runtime error, 2 usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prunekit/pruner"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// Environment variables that hold the API keys.
const (
	envReaderKey = "NAVLOOP_API_KEY"
	envJudgeKey  = "NAVLOOP_JUDGE_API_KEY"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type flags struct {
	first                     firstView
	reader, readerModel       string
	judge, judgeModel         string
	readerPrompt, judgePrompt string
	out, rejudge              string
	workers, limit, maxTokens int
	hints                     int
	seed                      uint64
	timeout                   time.Duration
	markdown                  bool
	paths                     []string
}

// firstView is the tight first view: a share of the lines, a share of the
// input's tokens, or a token budget.
type firstView struct {
	kind  string // "lines", "tokens" or "budget"
	value float64
}

func (v firstView) String() string {
	return v.kind + ":" + strconv.FormatFloat(v.value, 'g', -1, 64)
}

// option is the library option of the view.
func (v firstView) option() pruner.Option {
	switch v.kind {
	case "tokens":
		return pruner.WithCompression(1 / v.value)
	case "budget":
		return pruner.WithTokenBudget(int(v.value))
	default:
		return pruner.WithLineBudget(v.value)
	}
}

func parseFirstView(s string) (firstView, error) {
	kind, num, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return firstView{}, fmt.Errorf("-first %q: want lines:F, tokens:F or budget:N", s)
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return firstView{}, fmt.Errorf("-first %q: %w", s, err)
	}
	switch kind {
	case "lines", "tokens":
		if !(x > 0 && x <= 1) {
			return firstView{}, fmt.Errorf("-first %q: the share must be in (0,1]", s)
		}
	case "budget":
		if x < 1 || x != float64(int(x)) {
			return firstView{}, fmt.Errorf("-first %q: the budget must be a whole number of tokens >= 1", s)
		}
	default:
		return firstView{}, fmt.Errorf("-first %q: want lines:F, tokens:F or budget:N", s)
	}
	return firstView{kind: kind, value: x}, nil
}

// errReported marks a usage error the flag package printed.
var errReported = errors.New("usage error reported")

func parse(args []string, stderr io.Writer) (*flags, error) {
	f := flags{first: firstView{kind: "lines", value: 0.1}}
	fs := flag.NewFlagSet("navloop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Func("first", "the tight first view: lines:F (a share of the lines), tokens:F (of the input's tokens) or budget:N tokens (default lines:0.1)", func(s string) error {
		v, err := parseFirstView(s)
		f.first = v
		return err
	})
	fs.StringVar(&f.reader, "reader", "sim", "sim (the simulated reader, offline) or the URL of an OpenAI-compatible server (key: $"+envReaderKey+")")
	fs.StringVar(&f.readerModel, "reader-model", "", "the reader's model name (required with a reader URL)")
	fs.StringVar(&f.judge, "judge", "", "the URL of an OpenAI-compatible server that grades the answers (key: $"+envJudgeKey+", else $"+envReaderKey+")")
	fs.StringVar(&f.judgeModel, "judge-model", "", "the judge's model name (required with -judge)")
	fs.StringVar(&f.readerPrompt, "reader-prompt", "", "the reader's prompt templates (default: the embedded prompts/reader.txt)")
	fs.StringVar(&f.judgePrompt, "judge-prompt", "", "the judge's prompt template (default: the embedded prompts/judge.txt)")
	fs.StringVar(&f.out, "out", "", "write the transcripts (conversations, metrics, grades) to DIR/transcripts.jsonl")
	fs.StringVar(&f.rejudge, "rejudge", "", "judge the transcripts of this file again (with -judge) instead of reading cases")
	fs.IntVar(&f.workers, "workers", 4, "cases run at once")
	fs.IntVar(&f.hints, "hints", 1, "placeholders of the tight view that say what in their fold is likely relevant (pruner.WithFoldHints); the simulated reader unfolds that item when there is one")
	fs.IntVar(&f.limit, "limit", 0, "run only the first N cases (0: all)")
	fs.IntVar(&f.maxTokens, "max-tokens", 1024, "the most tokens a model may reply with")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the judge's per-case shuffle")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "timeout of one model request")
	fs.BoolVar(&f.markdown, "md", false, "print the tables as Markdown")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errReported, err)
	}
	f.paths = fs.Args()
	switch {
	case f.workers < 1:
		return nil, errors.New("-workers must be >= 1")
	case f.limit < 0:
		return nil, errors.New("-limit must be >= 0")
	case f.maxTokens < 1:
		return nil, errors.New("-max-tokens must be >= 1")
	case f.judge != "" && f.judgeModel == "":
		return nil, errors.New("-judge needs -judge-model")
	case f.rejudge != "":
		if f.judge == "" {
			return nil, errors.New("-rejudge needs -judge")
		}
		if len(f.paths) > 0 {
			return nil, errors.New("-rejudge reads its transcripts, not eval files")
		}
	case f.reader == "sim":
		if f.judge != "" {
			return nil, errors.New("the sim reader writes no answers to judge: -judge needs a reader URL")
		}
	case f.readerModel == "":
		return nil, errors.New("a reader URL needs -reader-model")
	}
	if len(f.paths) == 0 && f.rejudge == "" {
		f.paths = []string{defaultQuestions()}
	}
	return &f, nil
}

// defaultQuestions finds the shared question set,
// ../shared/evalsets/questions from the module's root, searched upwards
// from the working directory.
func defaultQuestions() string {
	rel := filepath.Join("..", "shared", "evalsets", "questions")
	dir, err := os.Getwd()
	if err != nil {
		return rel
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return rel
		}
		dir = parent
	}
}

func run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		if !errors.Is(err, errReported) {
			fmt.Fprintln(stderr, "navloop:", err)
		}
		return exitUsage
	}
	var recs []caseRecord
	if f.rejudge != "" {
		recs, err = rejudge(ctx, f)
	} else {
		recs, err = measure(ctx, f, stderr)
	}
	if err == nil && f.out != "" {
		err = writeTranscripts(filepath.Join(f.out, "transcripts.jsonl"), recs)
	}
	if err != nil {
		fmt.Fprintln(stderr, "navloop:", err)
		return exitRuntime
	}
	if err := report(stdout, recs, f.markdown); err != nil {
		fmt.Fprintln(stderr, "navloop:", err)
		return exitRuntime
	}
	return exitOK
}
