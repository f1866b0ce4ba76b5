package agenttool

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

// The tiny checkpoint has random weights: at threshold 1 the model keeps
// nothing, so what a Fold keeps is exactly what the policy forces; at
// threshold 0 it keeps everything.
const checkpoint = "../../testdata/tiny-swepruner"

func load(t *testing.T, opts ...pruner.Option) *pruner.Pruner {
	t.Helper()
	p, err := pruner.Load(context.Background(), checkpoint, opts...)
	require.NoError(t, err)
	return p
}

func newFolder(t *testing.T, threshold float64, opts ...Option) *Folder {
	t.Helper()
	f, err := NewFolder(load(t, pruner.WithThreshold(threshold), pruner.WithLanguage("text")), opts...)
	require.NoError(t, err)
	return f
}

// buildLog is a 30-line test log: line 12 reports an error, the last line
// the exit code.
func buildLog() string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		switch i {
		case 12:
			b.WriteString("ERROR cannot open config file\n")
		case 30:
			b.WriteString("make: exit status 2\n")
		default:
			fmt.Fprintf(&b, "step %c ok: compiled module\n", 'a'+rune(i%26))
		}
	}
	return b.String()
}

func keptNumbers(t *testing.T, f *Folder, text string) []int {
	t.Helper()
	o := f.Fold(context.Background(), "why did the build fail?", text, LineNumbers(true))
	require.NoError(t, o.Err)
	var nums []int
	for _, l := range strings.Split(o.Text, "\n")[1:] {
		var n int
		if _, err := fmt.Sscanf(l, "%6d\t", &n); err == nil {
			nums = append(nums, n)
		}
	}
	return nums
}

func TestFoldPolicy(t *testing.T) {
	log := buildLog()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	tests := []struct {
		name string
		opts []Option
		want []int
	}{
		{"error line and tail are forced", []Option{WithTailLines(3), WithMinChars(100)}, []int{12, 28, 29, 30}},
		{"no tail: error and exit lines, last line by the pruner", []Option{WithTailLines(0), WithMinChars(100)}, []int{12, 30}},
		{"no patterns: the last line only", []Option{WithTailLines(0), WithKeepPatterns(), WithMinChars(100)}, []int{30}},
		{"custom pattern", []Option{WithTailLines(0), WithKeepPatterns(regexp.MustCompile(`step [cd] `)), WithMinChars(100)},
			[]int{1, 2, 3, 28, 29, 30}}, // line 1 costs less than its placeholder
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFolder(t, 1, tc.opts...)
			assert.Equal(t, tc.want, keptNumbers(t, f, log))
		})
	}
	t.Run("text, header and markers", func(t *testing.T) {
		f := newFolder(t, 1, WithTailLines(2), WithMinChars(100))
		o := f.Fold(context.Background(), "why did the build fail?", log)
		require.NoError(t, o.Err)
		assert.True(t, o.Pruned)
		require.NotNil(t, o.Result)
		assert.Equal(t, Outcome{Text: o.Text, Pruned: true, Lines: 30, KeptLines: 3, ForcedLines: 2, Result: o.Result}, o)
		body := "... 11 lines omitted (1-11) ...\n" + lines[11] + "\n" +
			"... 16 lines omitted (13-28) ...\n" + lines[28] + "\n" + lines[29] + "\n"
		want := "[pruned for \"why did the build fail?\": kept 3 of 30 lines (10% of the text), folded 27; " +
			"for the full output call again without context_focus_question]\n" + body
		assert.Equal(t, want, o.Text)
		assert.Equal(t, body, o.Result.Text)
		assert.Equal(t, []int{12, 29, 30}, o.Result.KeptLines())
		assert.Equal(t, []pruner.Placeholder{{OutputLine: 1, FirstLine: 1, LastLine: 11}, {OutputLine: 3, FirstLine: 13, LastLine: 28}},
			o.Result.Placeholders)
	})
	t.Run("numbered", func(t *testing.T) {
		f := newFolder(t, 1, WithTailLines(1), WithMinChars(100), WithLineNumbers(true))
		o := f.Fold(context.Background(), "why?", log)
		body := o.Text[strings.IndexByte(o.Text, '\n')+1:]
		assert.Equal(t, "      \t... 11 lines omitted (1-11) ...\n    12\t"+lines[11]+"\n      \t... 17 lines omitted (13-29) ...\n    30\t"+lines[29]+"\n", body)
	})
}

func TestFoldPassThrough(t *testing.T) {
	log := buildLog()
	short := strings.Join(strings.SplitAfter(log, "\n")[:10], "") // 270 characters
	tests := []struct {
		name, question, text string
		opts                 []Option
		call                 []CallOption
		want, skipped        string
	}{
		{name: "no question", question: "  ", text: log, opts: []Option{WithMinChars(10)}, want: log, skipped: "no context_focus_question"},
		{name: "small output", question: "why?", text: short, want: short, skipped: "output under 500 characters"},
		{name: "small output numbered", question: "why?", text: "a\nb", call: []CallOption{LineNumbers(true)},
			want: "     1\ta\n     2\tb", skipped: "output under 500 characters"},
		{name: "empty output", question: "why?", text: "", opts: []Option{WithMinChars(0)}, want: "", skipped: "every line is relevant"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFolder(t, 1, tc.opts...)
			o := f.Fold(context.Background(), tc.question, tc.text, tc.call...)
			assert.NoError(t, o.Err)
			assert.False(t, o.Pruned)
			assert.Equal(t, tc.want, o.Text)
			assert.Equal(t, tc.skipped, o.Skipped)
		})
	}
	t.Run("every line kept", func(t *testing.T) {
		f := newFolder(t, 0, WithMinChars(100))
		o := f.Fold(context.Background(), "why?", log)
		require.NotNil(t, o.Result)
		// The error line is kept for the policy (by the pruner) whatever the model says.
		assert.Equal(t, Outcome{Text: log, Skipped: "every line is kept", Lines: 30, KeptLines: 30, ForcedLines: 1, Result: o.Result}, o)
	})
}

func TestFoldFailsOpen(t *testing.T) {
	log := buildLog()
	tests := []struct {
		name   string
		folder func(t *testing.T) *Folder
		ctx    func() context.Context
		want   string
	}{
		{"input over the pruner's limit", func(t *testing.T) *Folder {
			f, err := NewFolder(load(t, pruner.WithMaxInputBytes(200)), WithMinChars(100))
			require.NoError(t, err)
			return f
		}, context.Background, "input too large"},
		{"timeout", func(t *testing.T) *Folder { return newFolder(t, 1, WithMinChars(100), WithTimeout(time.Nanosecond)) },
			context.Background, "deadline exceeded"},
		{"cancelled caller", func(t *testing.T) *Folder { return newFolder(t, 1, WithMinChars(100)) },
			func() context.Context { ctx, cancel := context.WithCancel(context.Background()); cancel(); return ctx }, "canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.folder(t).Fold(tc.ctx(), "why?", log)
			require.Error(t, o.Err)
			assert.Contains(t, o.Err.Error(), tc.want)
			assert.False(t, o.Pruned)
			assert.True(t, strings.HasPrefix(o.Text, log), "original output first")
			assert.Contains(t, o.Text[len(log):], "[context pruning failed, full output shown: ")
		})
	}
}

func TestDefaultKeepPatterns(t *testing.T) {
	tests := []struct {
		line string
		keep bool
	}{
		{"ERROR: connection refused", true},
		{"--- FAIL: TestRetry (0.01s)", true},
		{"FAIL\tgithub.com/x/y\t0.2s", true},
		{"panic: runtime error: index out of range", true},
		{"thread 'main' panicked at src/main.rs:3:5", true},
		{"Traceback (most recent call last):", true},
		{"ValueError: invalid literal for int()", true},
		{"java.lang.NullPointerException", true},
		{"error[E0308]: mismatched types", true},
		{"main.go:12:3: error: undefined: foo", true},
		{"fatal: not a git repository", true},
		{"Process finished with exit code 1", true},
		{"exit status 2", true},
		{"not ok 3 - handles empty input", true},
		{"ok  \tgithub.com/x/y\t0.2s", false},
		{"    except ValueError:", false},
		{"compiling 12 modules", false},
		{"the errors package wraps values", false},
		{"return fmt.Errorf(\"open: %w\", err)", false},
	}
	res := DefaultKeepPatterns()
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			got := false
			for _, re := range res {
				got = got || re.MatchString(tc.line)
			}
			assert.Equal(t, tc.keep, got)
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	p := load(t)
	for _, o := range []Option{WithMinChars(-1), WithTailLines(-1), WithTimeout(0), WithKeepPatterns(nil)} {
		_, err := NewFolder(p, o)
		assert.Error(t, err)
	}
	_, err := NewFolder(nil)
	assert.Error(t, err)
}

// TestFoldLexical prunes a source file with the library's lexical scorer,
// whose choices follow the words of the question: the retry lines stay,
// unrelated code folds, and the line numbers are the file's.
func TestFoldLexical(t *testing.T) {
	p, err := pruner.Load(context.Background(), "", pruner.WithScorer(pruner.ScorerLexical))
	require.NoError(t, err)
	f, err := NewFolder(p)
	require.NoError(t, err)
	o := f.Fold(context.Background(), "how many retries and how long is the sleep between attempts?", pySource,
		FileName("retry.py"), LineNumbers(true))
	require.NoError(t, o.Err)
	require.True(t, o.Pruned, o.Skipped)
	src := strings.Split(pySource, "\n")
	kept := map[int]bool{}
	for _, l := range strings.Split(o.Text, "\n")[1:] {
		var n int
		if _, err := fmt.Sscanf(l, "%6d\t", &n); err == nil {
			kept[n] = true
			assert.Equal(t, fmt.Sprintf("%6d\t%s", n, src[n-1]), l, "verbatim with its number")
		}
	}
	for _, n := range []int{3, 11, 14, 18, 30} {
		assert.True(t, kept[n], "line %d: %s", n, src[n-1])
	}
	assert.False(t, kept[22], "unrelated _send body folds")
	assert.Less(t, o.KeptLines, o.Lines)
	assert.Contains(t, o.Text, "      \t        pass  # ... 7 lines omitted (22-28)\n", "the library's placeholders, unnumbered")
}

// TestFoldResultIsTheLibrarys: a Fold's output is the library's rendering,
// placeholders included, and its Result is the one the library returns
// when asked to keep the same lines, so the agent sees one placeholder
// format and Outcome.Result is the library's own.
func TestFoldResultIsTheLibrarys(t *testing.T) {
	ctx := context.Background()
	const question = "how many retries and how long is the sleep between attempts?"
	policy := func(line string) bool {
		for _, re := range DefaultKeepPatterns() {
			if re.MatchString(line) {
				return true
			}
		}
		return false
	}
	check := func(t *testing.T, o Outcome, want *pruner.Result) {
		t.Helper()
		require.NoError(t, o.Err)
		require.True(t, o.Pruned)
		require.NotNil(t, o.Result)
		assert.Equal(t, want.Text, o.Text[strings.IndexByte(o.Text, '\n')+1:], "the body is the library's text")
		wantJSON, err := json.Marshal(want)
		require.NoError(t, err)
		gotJSON, err := json.Marshal(o.Result)
		require.NoError(t, err)
		assert.JSONEq(t, string(wantJSON), string(gotJSON))
		assert.NotContains(t, o.Text, "folded (", "no placeholder format of the tool's own")
	}

	t.Run("code, as the library prunes it", func(t *testing.T) {
		p, err := pruner.Load(ctx, "", pruner.WithScorer(pruner.ScorerLexical))
		require.NoError(t, err)
		f, err := NewFolder(p)
		require.NoError(t, err)
		o := f.Fold(ctx, question, pySource, FileName("retry.py"))
		q, err := p.With(pruner.WithKeepLastLine(true), pruner.WithKeepLines(policy), pruner.WithFileName("retry.py"), pruner.WithMinInputTokens(0))
		require.NoError(t, err)
		want, err := q.Prune(ctx, question, pySource)
		require.NoError(t, err)
		require.NotEmpty(t, want.Placeholders)
		assert.Contains(t, want.Text, "# ... ")
		check(t, o, want)
	})

	t.Run("log with its tail kept, as the library renders those lines", func(t *testing.T) {
		var b strings.Builder
		for i := 1; i <= 40; i++ {
			if i == 7 {
				b.WriteString("FAIL: TestRetry\n")
				continue
			}
			fmt.Fprintf(&b, "step %02d ok\n", i) // every line differs
		}
		log := b.String()
		lines := strings.SplitAfter(log, "\n")
		f := newFolder(t, 1, WithTailLines(4), WithMinChars(100))
		o := f.Fold(ctx, "what failed?", log)
		assert.Equal(t, 4, o.ForcedLines, "line 7 and lines 37-39; 40 is the pruner's last line")

		tail := map[string]bool{}
		for _, l := range lines[36:40] {
			tail[strings.TrimSuffix(l, "\n")] = true
		}
		q, err := f.p.With(pruner.WithKeepLastLine(true),
			pruner.WithKeepLines(func(line string) bool { return policy(line) || tail[line] }))
		require.NoError(t, err)
		want, err := q.Prune(ctx, "what failed?", log)
		require.NoError(t, err)
		assert.Equal(t, []int{7, 37, 38, 39, 40}, want.KeptLines())
		assert.Equal(t, "... 6 lines omitted (1-6) ...\nFAIL: TestRetry\n... 29 lines omitted (8-36) ...\n"+strings.Join(lines[36:40], ""), want.Text)
		check(t, o, want)
	})
}

// A Pruner set up for SWE-Pruner's output numbers lines as Python does (a
// form feed or a lone CR splits a line there); the Folder renders with the
// library's placeholders and numbering whatever the Pruner renders.
func TestFoldWithACompatPruner(t *testing.T) {
	f, err := NewFolder(load(t, pruner.WithSWEPrunerCompat(), pruner.WithThreshold(1), pruner.WithLanguage("text")), WithMinChars(100), WithTailLines(1))
	require.NoError(t, err)
	log := strings.Replace(buildLog(), "step a", "step\fa", 1)
	o := f.Fold(context.Background(), "which step failed?", log)
	require.NoError(t, o.Err)
	assert.True(t, o.Pruned)
	assert.Contains(t, o.Text, "ERROR cannot open config file\n")
	assert.Contains(t, o.Text, "lines omitted")
}
