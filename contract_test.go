package pruner

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/evalset"
)

// contractCases returns the in-repository corpus (code questions, tool
// output and commit cases) and, where ../shared is beside the repository,
// the dev commit cases and the question cases; without -long every third
// case.
func contractCases(t *testing.T) []evalset.Case {
	t.Helper()
	files := corpusFiles(t, "evalsets/dev", "evalsets/questions/go_python.jsonl", "evalsets/questions/tool.jsonl")
	var out []evalset.Case
	k := 0
	for _, f := range files {
		for _, c := range f.Cases {
			if *long || k%3 == 0 {
				out = append(out, c)
			}
			k++
		}
	}
	require.NotEmpty(t, out)
	return out
}

// resultLines counts an output's lines: kept lines and placeholders.
func resultLines(res *Result) int { return len(res.KeptLines()) + len(res.Placeholders) }

// TestBudgetsBoundTheWholeOutput: a token budget bounds every output token
// (kept lines and placeholders, counted by the tokenizer of Result.Tokens),
// a compression bounds output tokens ÷ input tokens, and a line budget
// bounds output lines, placeholders included. On the dev sets at several
// budgets, with the default scorer.
func TestBudgetsBoundTheWholeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("prunes the eval sets")
	}
	ctx := context.Background()
	base, err := Load(ctx, "")
	require.NoError(t, err)
	type setting struct {
		name  string
		opt   Option
		limit func(res *Result, lines int) int
		used  func(res *Result) int
	}
	tokens := func(n int) setting {
		return setting{fmt.Sprintf("tokens=%d", n), WithTokenBudget(n),
			func(*Result, int) int { return n },
			func(res *Result) int { return base.tok.Count(res.Text) }}
	}
	lines := func(f float64) setting {
		return setting{fmt.Sprintf("lines=%v", f), WithLineBudget(f),
			func(_ *Result, n int) int { return max(min(3, n), int(math.RoundToEven(f*float64(n)))) },
			resultLines}
	}
	settings := []setting{tokens(150), tokens(600), lines(0.1), lines(0.2), lines(0.3),
		{"compression=4", WithCompression(4),
			func(res *Result, _ int) int { return int(math.Ceil(float64(res.Tokens.Input) / 4)) },
			func(res *Result) int { return base.tok.Count(res.Text) }}}
	cases := contractCases(t)
	for _, s := range settings {
		over, empty := 0, 0
		for _, c := range cases {
			p, err := base.With(s.opt, WithFileName(c.Path))
			require.NoError(t, err)
			res, err := p.Prune(ctx, c.Query, c.Text)
			require.NoError(t, err, c.ID)
			checkInvariants(t, c.Text, res)
			require.Equal(t, base.tok.Count(res.Text), res.Tokens.Kept, "%s %s: Result.Tokens.Kept counts the output", s.name, c.ID)
			if limit, used := s.limit(res, len(res.Lines)), s.used(res); used > limit {
				over++
				t.Errorf("%s %s: output %d > budget %d (notes %q)", s.name, c.ID, used, limit, res.Notes)
			}
			if res.Text == "" {
				empty++
			}
		}
		t.Logf("%s: %d cases, %d over budget, %d empty outputs", s.name, len(cases), over, empty)
	}
}

// TestOutputNeverLonger: without a budget, every placeholder costs fewer
// tokens than the lines it folds, the output has fewer tokens than the
// input (or the text comes back whole, saying why), and texts under
// WithMinInputTokens come back whole.
func TestOutputNeverLonger(t *testing.T) {
	if testing.Short() {
		t.Skip("prunes the eval sets")
	}
	ctx := context.Background()
	base, err := Load(ctx, "")
	require.NoError(t, err)
	var ratios []float64
	whole := map[string]int{}
	for _, c := range contractCases(t) {
		p, err := base.With(WithFileName(c.Path))
		require.NoError(t, err)
		res, err := p.Prune(ctx, c.Query, c.Text)
		require.NoError(t, err, c.ID)
		checkInvariants(t, c.Text, res)
		in := base.tok.Count(c.Text)
		out := base.tok.Count(res.Text)
		require.LessOrEqual(t, out, in, c.ID)
		if res.Unpruned != "" {
			require.Equal(t, c.Text, res.Text)
			whole[strings.SplitN(res.Unpruned, " (", 2)[0]]++
			ratios = append(ratios, 1)
			continue
		}
		require.Less(t, out, in, "%s: a pruned output is shorter than its input", c.ID)
		ratios = append(ratios, float64(out)/float64(in))
		checkPlaceholdersPay(t, base, c.ID, c.Text, res)
	}
	sort.Float64s(ratios)
	q := func(f float64) float64 { return ratios[int(f*float64(len(ratios)-1))] }
	t.Logf("output/input tokens over %d cases: min %.3f p25 %.3f median %.3f p75 %.3f p90 %.3f max %.3f; whole: %v",
		len(ratios), ratios[0], q(0.25), q(0.5), q(0.75), q(0.9), ratios[len(ratios)-1], whole)
}

// checkPlaceholdersPay asserts that every placeholder line of res costs
// fewer tokens than the input lines it stands for.
func checkPlaceholdersPay(t *testing.T, p *Pruner, id, text string, res *Result) {
	t.Helper()
	in := chunk.SplitLines(text)
	out := chunk.SplitLines(res.Text)
	for _, ph := range res.Placeholders {
		o := out[ph.OutputLine-1]
		phToks := p.tok.Count(res.Text[o.Start:o.TermEnd])
		run := text[in[ph.FirstLine-1].Start:in[ph.LastLine-1].TermEnd]
		runToks := 0
		for _, l := range chunk.SplitLines(run) {
			runToks += p.tok.Count(run[l.Start:l.TermEnd])
		}
		assert.Less(t, phToks, runToks, "%s: placeholder %q for lines %d-%d (%q)", id, res.Text[o.Start:o.End], ph.FirstLine, ph.LastLine, run)
	}
}

// TestSmallInputsWhole: a text under WithMinInputTokens comes back whole
// without a budget and says why; 0 prunes it; a budget is honoured.
func TestSmallInputsWhole(t *testing.T) {
	ctx := context.Background()
	text := "def backoff(attempt):\n    return min(30, 2 ** attempt)\n\n\ndef unrelated():\n    return 42\n"
	p, err := Load(ctx, "")
	require.NoError(t, err)
	res, err := p.Prune(ctx, "how is the backoff computed?", text)
	require.NoError(t, err)
	assert.Equal(t, text, res.Text)
	assert.Contains(t, res.Unpruned, "shorter than 200 tokens")
	for _, l := range res.Lines {
		assert.Equal(t, ReasonUnpruned, l.Reason)
	}

	big := text + unrelatedPython + strings.ReplaceAll(unrelatedPython, "render_table", "render_grid") +
		strings.ReplaceAll(unrelatedPython, "render_table", "render_list")
	q, err := p.With(WithMinInputTokens(10))
	require.NoError(t, err)
	res, err = q.Prune(ctx, "how is the backoff computed?", big)
	require.NoError(t, err)
	assert.Empty(t, res.Unpruned)
	assert.Less(t, res.Tokens.Kept, res.Tokens.Input)

	q, err = p.With(WithTokenBudget(12))
	require.NoError(t, err)
	res, err = q.Prune(ctx, "how is the backoff computed?", text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	assert.LessOrEqual(t, res.Tokens.Kept, 12, "a budget is honoured whatever the size")
	_, err = p.With(WithMinInputTokens(-1))
	require.ErrorIs(t, err, ErrOption)
}

// FuzzPruneBudget: under any token or line budget the invariants hold and
// the whole output fits the budget, unless the result says why not (the
// caller's always-kept lines alone exceed it).
func FuzzPruneBudget(f *testing.F) {
	f.Add("how?", "def f():\n    return 1\n\n\ndef g():\n    return 2\n", uint16(12), false)
	f.Add("q", "a\r\nb\rc\x00\xff\n", uint16(1), true)
	f.Add("err", "package main\n\nfunc main() {\n\tif err != nil {\n\t\tpanic(err)\n\t}\n}\n", uint16(3), true)
	line, err := Load(context.Background(), "", WithBinaryInput(true), WithMinInputTokens(0))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, query, text string, n uint16, lines bool) {
		if len(text) > 4096 || len(query) > 512 || n == 0 {
			return
		}
		opt := WithTokenBudget(int(n))
		if lines {
			opt = WithLineBudget(float64(n%100+1) / 100)
		}
		p, err := line.With(opt)
		require.NoError(t, err)
		res, err := p.Prune(context.Background(), query, text)
		require.NoError(t, err)
		checkInvariants(t, text, res)
		if res.Unpruned != "" {
			return
		}
		if lines {
			limit := max(min(3, len(res.Lines)), int(math.RoundToEven(float64(n%100+1)/100*float64(len(res.Lines)))))
			assert.LessOrEqual(t, resultLines(res), limit, "notes %q", res.Notes)
		} else {
			assert.LessOrEqual(t, line.tok.Count(res.Text), int(n), "notes %q", res.Notes)
		}
	})
}
