package pruner

import (
	"context"
	"errors"
	"fmt"
	goparser "go/parser"
	"go/token"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/swecompat"
	"github.com/prunekit/pruner/internal/syntax"
)

var (
	sharedOnce   sync.Once
	sharedPruner *Pruner
	sharedErr    error
)

// tinyPruner loads tiny-lamr once per test binary; Pruners are immutable and
// safe to share.
func tinyPruner(t testing.TB) *Pruner {
	t.Helper()
	sharedOnce.Do(func() {
		sharedPruner, sharedErr = Load(context.Background(), tinyDir("tiny-lamr"), WithMaxLength(512), WithMinInputTokens(0))
	})
	require.NoError(t, sharedErr)
	return sharedPruner
}

// namedPruner is one scorer under test.
type namedPruner struct {
	name string
	p    *Pruner
}

// allScorers returns a Pruner per scorer — the conformance suite: the tiny
// LaMR checkpoint (the Qwen3 skimmer path), the embedded line model, the
// lexical baseline and a user's Scorer through New (grepScorer, as in
// ExampleNew).
// The contract tests run on each, on any bytes: they accept binary input
// (WithBinaryInput), whose refusal binary_test.go tests.
func allScorers(t testing.TB) []namedPruner {
	t.Helper()
	// The inputs here are small: WithMinInputTokens(0) runs the whole
	// pipeline on them.
	opts := []Option{WithBinaryInput(true), WithMinInputTokens(0)}
	line, err := Load(context.Background(), "", opts...)
	require.NoError(t, err)
	lex, err := Load(context.Background(), "", append(opts, WithScorer(ScorerLexical))...)
	require.NoError(t, err)
	tiny, err := tinyPruner(t).With(opts...)
	require.NoError(t, err)
	grep, err := New(grepScorer{}, opts...)
	require.NoError(t, err)
	return []namedPruner{{"tiny-lamr", tiny}, {ScorerLine, line}, {ScorerLexical, lex}, {"grep", grep}}
}

// checkInvariants asserts the contract of a Result against its input: every
// kept line appears verbatim and in order, placeholders account for every
// removed line, and output lines map back to input lines.
func checkInvariants(t testing.TB, text string, res *Result) {
	t.Helper()
	lines := chunk.SplitLines(text)
	require.Len(t, res.Lines, len(lines))
	var removed []int
	for i, l := range res.Lines {
		require.Equal(t, i+1, l.Number)
		if !l.Kept {
			removed = append(removed, l.Number)
			require.Equal(t, ReasonNone, l.Reason)
		} else {
			require.NotEqual(t, ReasonNone, l.Reason, "kept line %d has no reason", l.Number)
		}
	}
	if res.Text == "" && len(res.Placeholders) == 0 && len(removed) == len(lines) && len(lines) > 0 {
		// Only a budget below the smallest output returns nothing, and it
		// says so.
		require.NotEmpty(t, res.Notes, "an empty output must say why")
		require.Contains(t, strings.Join(res.Notes, "\n"), "below the smallest output")
		return
	}
	// Placeholders: in output order, disjoint, covering exactly the removed lines.
	var covered []int
	prevOut, prevLast := 0, 0
	for _, ph := range res.Placeholders {
		require.Greater(t, ph.OutputLine, prevOut)
		require.Greater(t, ph.FirstLine, prevLast)
		require.LessOrEqual(t, ph.FirstLine, ph.LastLine)
		for n := ph.FirstLine; n <= ph.LastLine; n++ {
			covered = append(covered, n)
		}
		prevOut, prevLast = ph.OutputLine, ph.LastLine
	}
	require.Equal(t, removed, covered, "placeholders must cover exactly the removed lines")

	// Walk the output: placeholder lines are skipped, every other output
	// line is the next kept input line, byte for byte (terminator included
	// except possibly on the very last line).
	out := chunk.SplitLines(res.Text)
	isPh := map[int]bool{}
	for _, ph := range res.Placeholders {
		isPh[ph.OutputLine] = true
	}
	next := 0
	for _, ol := range out {
		if isPh[ol.Number] {
			continue
		}
		for next < len(lines) && !res.Lines[next].Kept {
			next++
		}
		require.Less(t, next, len(lines), "output line %d has no input line", ol.Number)
		in := lines[next]
		require.Equal(t, text[in.Start:in.End], res.Text[ol.Start:ol.End], "output line %d vs input line %d", ol.Number, in.Number)
		next++
	}
	for ; next < len(lines); next++ {
		require.False(t, res.Lines[next].Kept, "kept input line %d missing from output", next+1)
	}
}

func TestPruneProperties(t *testing.T) {
	long := strings.Repeat("x", 50_000)
	tests := []struct{ name, query, text string }{
		{"python", "where is the retry delay computed?", "import time\n\ndef retry(fn, n=3):\n    for i in range(n):\n        try:\n            return fn()\n        except Exception:\n            time.sleep(2 ** i)\n    raise RuntimeError('gave up')\n"},
		{"crlf", "what does main print?", "package main\r\n\r\nimport \"fmt\"\r\n\r\nfunc main() {\r\n\tfmt.Println(\"hi\")\r\n}\r\n"},
		{"lone cr", "progress", "step 1\rstep 2\rstep 3\ndone\n"},
		{"invalid utf8", "bytes", "ok line\n\xff\xfe broken \xc3\x28\nlast \x80"},
		{"nul bytes", "nul", "a\x00b\n\x00\x00\x00\nc\n"},
		{"tabs", "indent", "\tfoo()\n\t\tbar()\n\t}\n"},
		{"long line", "x", "first\n" + long + "\nlast"},
		{"empty text", "anything", ""},
		{"only newlines", "q", "\n\n\n"},
		{"no final newline", "q", "a\nb"},
		{"empty query", "", "keep\nall\n"},
		{"blank query", " \t\n", "keep\nall\n"},
		{"special tokens in text", "q", "<|im_end|>\n<|im_start|>assistant\n<think>\n"},
	}
	for _, sc := range allScorers(t) {
		for _, tc := range tests {
			t.Run(sc.name+"/"+tc.name, func(t *testing.T) {
				res, err := sc.p.Prune(context.Background(), tc.query, tc.text)
				require.NoError(t, err)
				checkInvariants(t, tc.text, res)
				assert.Equal(t, sc.p.Kind(), res.Scorer)
				if isBlank(tc.query) {
					assert.Equal(t, tc.text, res.Text)
					assert.NotEmpty(t, res.Unpruned)
				}
			})
		}
	}
}

func randomText(r *rand.Rand) string {
	pieces := []string{"def f(x):\n", "    return x\n", "\r\n", "\r", "\n", "\t", "\x00", "\xff", "é", "日本", "<|im_end|>",
		"if err != nil {\n", "}\n", "    ", "# comment\n", "x = [1,\n", "2]\n", "\"\"\"doc\n", "ERROR: failed\n"}
	var b strings.Builder
	for n := r.Intn(40); n > 0; n-- {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	return b.String()
}

func TestPruneRandomTexts(t *testing.T) {
	for _, sc := range allScorers(t) {
		r := rand.New(rand.NewSource(1))
		for i := 0; i < 40; i++ {
			text := randomText(r)
			res, err := sc.p.Prune(context.Background(), "what fails?", text)
			require.NoError(t, err, "%s: text %q", sc.name, text)
			checkInvariants(t, text, res)
		}
	}
}

func FuzzPrune(f *testing.F) {
	f.Add("how?", "def f():\n    return 1\n")
	f.Add("q", "a\r\nb\rc\x00\xff\n")
	f.Add("", "x")
	f.Add("<|im_end|>", "<think>\n</think>")
	scorers := allScorers(f)
	f.Fuzz(func(t *testing.T, query, text string) {
		if len(text) > 4096 || len(query) > 512 {
			return
		}
		for _, sc := range scorers {
			res, err := sc.p.Prune(context.Background(), query, text)
			require.NoError(t, err, sc.name)
			checkInvariants(t, text, res)
		}
	})
}

// TestConcurrentPrune runs 32 Prune calls at once (meant for -race) and
// requires the results of sequential calls.
func TestConcurrentPrune(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	texts := make([]string, 32)
	for i := range texts {
		texts[i] = randomText(r) + fmt.Sprintf("\nline %d\n", i)
	}
	for _, sc := range allScorers(t) {
		t.Run(sc.name, func(t *testing.T) {
			p := sc.p
			want := make([]*Result, len(texts))
			for i, text := range texts {
				var err error
				want[i], err = p.Prune(context.Background(), "what fails?", text)
				require.NoError(t, err)
			}
			got := make([]*Result, len(texts))
			errs := make([]error, len(texts))
			var wg sync.WaitGroup
			for i := range texts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i], errs[i] = p.Prune(context.Background(), "what fails?", texts[i])
				}()
			}
			wg.Wait()
			for i := range texts {
				require.NoError(t, errs[i])
				assert.Equal(t, want[i], got[i], "text %d", i)
			}
		})
	}
}

func TestPruneCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, sc := range allScorers(t) {
		_, err := sc.p.Prune(ctx, "q", "text\n")
		require.ErrorIs(t, err, context.Canceled, sc.name)
	}
	p := tinyPruner(t)

	// A long text is many batches; cancelling mid-way stops between batches.
	text := strings.Repeat("def handler(request):\n    return process(request.body)\n", 4000)
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := p.Prune(ctx, "how are requests processed?", text)
	require.True(t, errors.Is(err, context.Canceled), "got %v", err)
}

func TestOptionsValidation(t *testing.T) {
	p := tinyPruner(t)
	for _, o := range []Option{WithThreshold(-0.1), WithThreshold(1.5), WithOverlap(-1), WithMaxLength(10),
		WithBatchSize(0), WithDecision("argmax"), WithRenderer("html"), WithInstruction(""), WithMaxInputBytes(-5)} {
		_, err := p.With(o)
		require.ErrorIs(t, err, ErrOption)
	}
	q, err := p.With(WithMaxInputBytes(4))
	require.NoError(t, err)
	_, err = q.Prune(context.Background(), "q", "12345")
	require.ErrorIs(t, err, ErrInputTooLarge)
	_, err = p.With(WithLanguage("klingon"))
	require.ErrorIs(t, err, ErrOption)
	require.ErrorContains(t, err, "klingon")
	_, err = Load(context.Background(), "", WithLanguage("klingon"))
	require.ErrorIs(t, err, ErrOption)
	q, err = p.With(WithLanguage("Python"), WithLanguage(""))
	require.NoError(t, err, "\"\" detects again")
}

// The SWE-Pruner renderer keeps lines by threshold, as the service: a
// budget beside it is refused, whichever option comes first, rather than
// ignored.
func TestCompatRefusesBudgets(t *testing.T) {
	ctx := context.Background()
	p, err := Load(ctx, "")
	require.NoError(t, err)
	for _, b := range []Option{WithTokenBudget(50), WithCompression(4), WithLineBudget(0.1)} {
		_, err := p.With(WithSWEPrunerCompat(), b)
		require.ErrorIs(t, err, ErrOption)
		_, err = p.With(b, WithSWEPrunerCompat())
		require.ErrorIs(t, err, ErrOption)
		_, err = Load(ctx, "", b, WithSWEPrunerCompat())
		require.ErrorIs(t, err, ErrOption)
		assert.ErrorContains(t, err, "threshold only")
		q, err := p.With(b)
		require.NoError(t, err)
		_, err = q.With(WithSWEPrunerCompat(), WithoutBudget())
		require.NoError(t, err)
	}
}

// Under the SWE-Pruner renderer the keep options select their lines as the
// service selects its first line, instead of being dropped.
func TestCompatKeepOptions(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "value_%02d = compute(%d)\n", i, i)
	}
	b.WriteString("# TAIL MARKER zzz")
	text := b.String()
	n := strings.Count(text, "\n") + 1
	p, err := Load(ctx, "", WithSWEPrunerCompat(), WithLanguage("python"))
	require.NoError(t, err)
	base, err := p.Prune(ctx, "where is value_30 computed?", text)
	require.NoError(t, err)
	require.False(t, base.Lines[n-1].Kept, "the tail scores low: the test needs it folded")
	require.False(t, base.Lines[10].Kept)
	tests := []struct {
		name string
		opt  Option
		line int // 1-based
	}{
		{"last line", WithKeepLastLine(true), n},
		{"matched line", WithKeepLines(func(l string) bool { return strings.HasPrefix(l, "value_10 ") }), 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := p.With(tt.opt)
			require.NoError(t, err)
			res, err := q.Prune(ctx, "where is value_30 computed?", text)
			require.NoError(t, err)
			l := res.Lines[tt.line-1]
			assert.True(t, l.Kept)
			assert.Equal(t, ReasonAlwaysKeep, l.Reason)
			want := strings.Split(text, "\n")[tt.line-1]
			assert.Contains(t, strings.Split(res.Text, "\n"), want)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Load(ctx, t.TempDir())
	require.ErrorIs(t, err, ErrBadCheckpoint)
	_, err = Load(ctx, tinyDir("tiny-lamr"), WithBackend("quantum"))
	require.ErrorIs(t, err, ErrUnsupportedBackend)
	require.ErrorIs(t, err, ErrOption)
	// The embedded line model runs in Go whatever the backend, but a
	// misspelt name is still refused, not ignored.
	_, err = Load(ctx, "", WithBackend("quantum"))
	require.ErrorIs(t, err, ErrOption)
	require.ErrorContains(t, err, `unknown backend "quantum"`)
	_, err = Load(ctx, "", WithBackend("simplego"))
	require.NoError(t, err)
	_, err = Load(ctx, tinyDir("tiny-swepruner"), WithDecision(Viterbi))
	require.NoError(t, err, "SWE-Pruner checkpoints carry a CRF too")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Load(cctx, tinyDir("tiny-lamr"))
	require.ErrorIs(t, err, context.Canceled)
}

func TestLoadLineModelFolder(t *testing.T) {
	ctx := context.Background()
	m, err := linemodel.Embedded()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, m.Save(dir))
	p, err := Load(ctx, dir, WithMinInputTokens(0))
	require.NoError(t, err)
	assert.Equal(t, ScorerLine, p.Kind())
	emb, err := Load(ctx, "", WithMinInputTokens(0))
	require.NoError(t, err)
	text := "import time\n\n\ndef backoff(attempt):\n    return min(30, 2 ** attempt)\n" + unrelatedPython
	got, err := p.Prune(ctx, "how is the backoff computed?", text)
	require.NoError(t, err)
	want, err := emb.Prune(ctx, "how is the backoff computed?", text)
	require.NoError(t, err)
	assert.Equal(t, want.Text, got.Text, "the same weights prune the same way")
	assert.Equal(t, want.Lines, got.Lines)

	// A line model of another feature set is a bad checkpoint, named.
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	require.NoError(t, err)
	bad := strings.Replace(string(cfg), `"bm25n"`, `"bm25_other"`, 1)
	require.NotEqual(t, string(cfg), bad)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(bad), 0o644))
	_, err = Load(ctx, dir)
	require.ErrorIs(t, err, ErrBadCheckpoint)
	assert.Contains(t, err.Error(), "features")

	// A FIFO in place of the weights fails at once instead of blocking.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "model.safetensors")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "model.safetensors"), 0o644))
	_, err = Load(ctx, dir)
	require.ErrorIs(t, err, ErrBadCheckpoint)
	assert.Contains(t, err.Error(), "not a regular file")
}

func TestDecisionModes(t *testing.T) {
	p := tinyPruner(t)
	text := "import os\n\ndef which(cmd):\n    path = os.environ.get('PATH')\n    for d in path.split(os.pathsep):\n        if os.path.exists(os.path.join(d, cmd)):\n            return d\n    return None\n"
	for _, d := range []Decision{Prob, Viterbi, Marginal} {
		q, err := p.With(WithDecision(d), WithRepair(false))
		require.NoError(t, err)
		res, err := q.Prune(context.Background(), "how is PATH searched?", text)
		require.NoError(t, err)
		checkInvariants(t, text, res)
		for _, l := range res.Lines {
			require.GreaterOrEqual(t, l.Score, 0.0)
			require.LessOrEqual(t, l.Score, 1.0)
		}
		ts, err := q.sc.score(context.Background(), q, "how is PATH searched?", text, syntax.Text)
		require.NoError(t, err)
		fractional := 0
		for _, s := range ts.Spans {
			if s.Score != 0 && s.Score != 1 {
				fractional++
			}
		}
		if d == Viterbi {
			require.Zero(t, fractional, "Viterbi token scores are 0 or 1")
		} else {
			require.Equal(t, len(ts.Spans), fractional, "%s token scores are probabilities", d)
		}
	}
}

func TestLexicalScorer(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []string{"", tinyDir("tiny-lamr")} { // WithScorer(lexical) wins over a checkpoint
		p, err := Load(ctx, dir, WithScorer(ScorerLexical), WithMinInputTokens(0))
		require.NoError(t, err)
		assert.Equal(t, ScorerLexical, p.Kind())
		// The unrelated function is long enough that folding it pays.
		text := "import time\n\n\ndef backoff(attempt):\n    return min(30, 2 ** attempt)\n\n\ndef unrelated():\n    return 42\n" + unrelatedPython
		res, err := p.Prune(ctx, "how is the backoff delay for an attempt computed?", text)
		require.NoError(t, err)
		checkInvariants(t, text, res)
		assert.Equal(t, "lexical", res.Scorer)
		assert.Equal(t, "python", res.Language)
		assert.True(t, res.Lines[3].Kept, "def backoff(attempt): names the query's identifiers")
		assert.Equal(t, ReasonModel, res.Lines[3].Reason)
		assert.False(t, res.Lines[8].Kept, "return 42 shares nothing with the query")
		assert.InDelta(t, 0.5, res.Score, 1e-9, "backoff and attempt occur; delay and computed do not")

		q, err := p.With(WithSWEPrunerCompat())
		require.NoError(t, err)
		res, err = q.Prune(ctx, "how is the backoff delay for an attempt computed?", text)
		require.NoError(t, err)
		assert.Contains(t, res.Text, "def backoff(attempt):")
		assert.Contains(t, res.Text, "(filtered")
	}
	_, err := Load(ctx, "", WithScorer("magic"))
	require.ErrorIs(t, err, ErrOption)
}

// unrelatedPython is a function no test query is about, long enough that
// folding it saves more than its placeholder costs.
const unrelatedPython = `

def render_table(rows, columns, width=80):
    header = " | ".join(c.title() for c in columns)
    lines = [header, "-" * min(width, len(header))]
    for row in rows:
        cells = [str(row.get(c, "")) for c in columns]
        lines.append(" | ".join(cells))
    return "\n".join(lines)
`

// A query that leaves too little room for text is shortened to its head,
// and the Result says so.
func TestLongQueryTruncated(t *testing.T) {
	p, err := tinyPruner(t).With(WithMaxLength(256))
	require.NoError(t, err)
	query := "why does the retry loop " + strings.Repeat("keep sleeping longer and longer ", 60)
	text := "def retry():\n    time.sleep(1)\n"
	res, err := p.Prune(context.Background(), query, text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	require.Len(t, res.Notes, 1)
	assert.Contains(t, res.Notes[0], "query truncated")
	sk := p.sc.(skimStage).s
	short, notes := sk.FitQuery(encoderFunc(p.encode), p.skimOptions(), query)
	require.NotEmpty(t, notes)
	assert.True(t, strings.HasPrefix(query, short))
	n := len(p.encode(chunk.FormatQuery(p.cfg.instruction, short)))
	room := chunk.TextBudget(256, len(sk.Prefix), n, len(sk.Suffix))
	assert.GreaterOrEqual(t, room, chunk.MinTextTokens)
	assert.Less(t, room, chunk.MinTextTokens+5, "the query keeps as much as fits")
}

func TestKeepLines(t *testing.T) {
	p, err := Load(context.Background(), "", WithKeepLines(func(l string) bool { return strings.Contains(l, "FAIL") }), WithMinInputTokens(0))
	require.NoError(t, err)
	text := "=== RUN TestA\n--- PASS: TestA\n=== RUN TestB\n    b_test.go:12: boom\n--- FAIL: TestB\nFAIL\nexit status 1\n" +
		strings.Repeat("=== RUN TestC\n    c_test.go:40: connecting to the database at localhost\n--- PASS: TestC (0.01s)\n", 8)
	res, err := p.Prune(context.Background(), "which test passed?", text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	for _, n := range []int{5, 6} {
		assert.True(t, res.Lines[n-1].Kept, "line %d", n)
		assert.Equal(t, ReasonAlwaysKeep, res.Lines[n-1].Reason)
	}
	assert.Contains(t, res.Text, "--- FAIL: TestB")
}

// In SWE-Pruner rendering every input line (Python splitlines numbering) is
// either in the output verbatim, in order, or inside exactly one
// "(filtered N lines)" placeholder.
func TestSWEPrunerPlaceholders(t *testing.T) {
	p, err := tinyPruner(t).With(WithSWEPrunerCompat(), WithBinaryInput(true))
	require.NoError(t, err)
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 30; i++ {
		text := randomText(r) + "def f(x):\n    return x\n\n\n# trailing comment that is long enough\n"
		res, err := p.Prune(context.Background(), "what fails?", text)
		require.NoError(t, err)
		in := swecompat.SplitLines(text)
		out := strings.Split(res.Text, "\n")
		ph := map[int]Placeholder{}
		for _, x := range res.Placeholders {
			ph[x.OutputLine] = x
			require.Equal(t, fmt.Sprintf("(filtered %d lines)", x.LastLine-x.FirstLine+1), out[x.OutputLine-1])
		}
		next := 1
		for o, line := range out {
			if x, ok := ph[o+1]; ok {
				require.Equal(t, next, x.FirstLine, "text %q", text)
				next = x.LastLine + 1
				continue
			}
			require.LessOrEqual(t, next, len(in), "text %q", text)
			require.Equal(t, in[next-1], line, "output line %d of %q", o+1, text)
			next++
		}
		if len(in) > 0 {
			require.Equal(t, len(in)+1, next, "every input line accounted for in %q", text)
		}
	}
}

// Dependency repair follows names on kept lines to their definitions: one
// hop by default with a threshold, none under a budget unless asked.
func TestDependencyHops(t *testing.T) {
	ctx := context.Background()
	text := "import math\n\nLIMIT = 30\n\n\ndef backoff(attempt):\n    return min(LIMIT, 2 ** attempt)\n\n\ndef other():\n    return math.pi\n" + unrelatedPython
	limitLine := 3
	tests := []struct {
		name string
		opts []Option
		want bool // LIMIT's definition kept
	}{
		{"threshold default", nil, true},
		{"threshold, no hops", []Option{WithDependencyHops(0)}, false},
		{"budget default", []Option{WithLineBudget(0.3)}, false},
		{"budget, one hop", []Option{WithLineBudget(0.3), WithDependencyHops(1)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Load(ctx, "", append([]Option{WithScorer(ScorerLexical), WithMinInputTokens(0)}, tc.opts...)...)
			require.NoError(t, err)
			res, err := p.Prune(ctx, "backoff attempt", text)
			require.NoError(t, err)
			checkInvariants(t, text, res)
			require.True(t, res.Lines[5].Kept, "def backoff")
			// Without the hop the line may still show: a fold of it would
			// name LIMIT and cost as much as the line (ReasonCheaper).
			assert.Equal(t, tc.want, res.Lines[limitLine-1].Reason == ReasonDependency)
		})
	}
	_, err := Load(ctx, "", WithDependencyHops(-1))
	require.ErrorIs(t, err, ErrOption)
}

// TestNothingKeptStillGo: when no line is relevant, a pruned Go file keeps
// its package clause, so that the output is still a Go file.
func TestNothingKeptStillGo(t *testing.T) {
	text := "package p\n\nimport \"fmt\"\n\nfunc f() {\n\tfmt.Println(1)\n}\n"
	p, err := Load(context.Background(), "", WithScorer(ScorerLexical), WithThreshold(1), WithMinInputTokens(0))
	require.NoError(t, err)
	res, err := p.Prune(context.Background(), "zzzz qqqq", text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	require.Equal(t, []int{1}, res.KeptLines())
	require.Equal(t, ReasonScope, res.Lines[0].Reason)
	_, err = goparser.ParseFile(token.NewFileSet(), "x.go", res.Text, goparser.AllErrors)
	require.NoError(t, err, res.Text)
}

// A blank query returns the text whole, and counting its tokens is still
// work on the whole text: it must stop at the caller's deadline.
func TestBlankQueryHonoursDeadline(t *testing.T) {
	p, err := Load(context.Background(), "")
	require.NoError(t, err)
	text := strings.Repeat("retry the request after a backoff of two seconds\n", 200_000) // 10 MB
	// Cancelled once the call is under way (counting 10 MB takes about
	// half a second): the call must notice, not finish the count.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		time.Sleep(5 * time.Millisecond)
		cancel()
	}()
	_, err = p.Prune(ctx, " ", text)
	require.ErrorIs(t, err, context.Canceled)

	// Under a live context the text comes back whole, with its count.
	res, err := p.Prune(context.Background(), "\t", "a b\nc\n")
	require.NoError(t, err)
	assert.Equal(t, "a b\nc\n", res.Text)
	assert.Equal(t, "empty query", res.Unpruned)
	assert.Positive(t, res.Tokens.Input)
}

// An overlap just under a window's room for text would have the model read
// every token hundreds of times; it is taken as half the room, so the
// windows stay within about twice the text.
func TestOverlapBoundsWork(t *testing.T) {
	p, err := tinyPruner(t).With(WithOverlap(10_000))
	require.NoError(t, err)
	q, err := p.With(WithOverlap(400)) // the room is about 427 tokens at max length 512
	require.NoError(t, err)
	var b strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&b, "def f%d(x):\n    return x + %d\n", i, i)
	}
	text := b.String()
	n, err := q.tok.CountContext(context.Background(), text)
	require.NoError(t, err)
	res, err := q.Prune(context.Background(), "which function adds 7?", text)
	require.NoError(t, err)
	room := 512 - 100 // an upper bound of the prompt's share, whatever the query
	assert.LessOrEqual(t, res.Windows, 2*n/(room/2)+2, "%d windows for %d tokens", res.Windows, n)
	whole, err := p.Prune(context.Background(), "which function adds 7?", text)
	require.NoError(t, err)
	assert.Less(t, whole.Windows, res.Windows, "an overlap at or over the room is none")
}

// Where tree-sitter cannot read the input, the result says that the output
// may not parse: Python accepts a continuation line less indented than its
// block inside brackets; tree-sitter-python does not.
func TestNoteOnInputParseErrors(t *testing.T) {
	p, err := Load(context.Background(), "", WithLineBudget(0.1), WithFileName("weird.py"))
	require.NoError(t, err)
	src := "def test_positions(self):\n    def f():\n        (bar.\n    baz)\n        return files().setdefault(0)\n" +
		"    for line, end_line, column, end_column in f.__code__.co_positions():\n" +
		"        self.assertIsNotNone(line)\n        self.assertIsNotNone(end_line)\n        self.assertIsNotNone(column)\n        self.assertIsNotNone(end_column)\n"
	res, err := p.Prune(context.Background(), "what does the co_positions loop check?", src)
	require.NoError(t, err)
	require.Len(t, res.Notes, 1)
	assert.Contains(t, res.Notes[0], "python parser found")
	assert.Contains(t, res.Notes[0], "may not parse")

	good := "import time\n\n\ndef backoff(n):\n    return min(2 ** n, 30)\n\n\ndef get(url, retries=3):\n" +
		strings.Repeat("    # a comment line to give the budget room\n", 20) +
		"    for attempt in range(retries):\n        time.sleep(backoff(attempt))\n"
	clean, err := p.Prune(context.Background(), "how long do we wait between retries?", good)
	require.NoError(t, err)
	assert.Empty(t, clean.Notes, "a file that parses gets no such note")
}
