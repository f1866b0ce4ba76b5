package pruner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/syntax"
	"github.com/prunekit/pruner/internal/testcorpus"
)

// checkNamed requires every placeholder of res whose fold holds a
// definition or a record to name at least one of them, on its own line of
// res.Text; a budget may drop names only with a note that says so.
// It returns the placeholders checked and those named.
func checkNamed(t *testing.T, id, text string, res *Result) (folds, named int) {
	t.Helper()
	if len(res.Placeholders) == 0 {
		return 0, 0
	}
	lang := syntax.Language(res.Language)
	if lang == "" {
		lang = syntax.Text
	}
	a, err := astrepair.Analyze(context.Background(), text, lang)
	if err != nil {
		return 0, 0 // the parser refuses the text: nothing to name from
	}
	dropped := slices.Contains(res.Notes, noteNamesDropped) || slices.Contains(res.Notes, noteNamesSome)
	out := strings.Split(res.Text, "\n")
	for _, ph := range res.Placeholders {
		want := a.FoldNames(ph.FirstLine, ph.LastLine)
		if len(want) == 0 {
			require.Empty(t, ph.Names, "%s: fold %d-%d names nothing", id, ph.FirstLine, ph.LastLine)
			continue
		}
		folds++
		if dropped && len(ph.Names) == 0 {
			continue
		}
		require.NotEmpty(t, ph.Names, "%s: fold %d-%d holds %q but names nothing:\n%s", id, ph.FirstLine, ph.LastLine, want, out[ph.OutputLine-1])
		for _, n := range ph.Names {
			require.Contains(t, want, n, "%s: fold %d-%d", id, ph.FirstLine, ph.LastLine)
		}
		require.Contains(t, out[ph.OutputLine-1], ": ", id)
		require.Equal(t, len(want), len(ph.Names)+ph.More, "%s: fold %d-%d counts its names", id, ph.FirstLine, ph.LastLine)
		named++
	}
	return folds, named
}

// namingSettings are the settings the naming tests prune under: the
// default threshold, line budgets (the eval's) and token budgets.
func namingSettings() []struct {
	name string
	opt  Option
} {
	return []struct {
		name string
		opt  Option
	}{
		{"default", WithMinInputTokens(0)},
		{"lines 0.1", WithLineBudget(0.1)},
		{"lines 0.2", WithLineBudget(0.2)},
		{"compression 4", WithCompression(4)},
	}
}

func runNaming(t *testing.T, files []evalset.File) {
	ctx := context.Background()
	base, err := Load(ctx, "")
	require.NoError(t, err)
	for _, s := range namingSettings() {
		t.Run(s.name, func(t *testing.T) {
			folds, named := 0, 0
			for _, f := range files {
				for _, c := range f.Cases {
					p, err := base.With(s.opt, WithFileName(c.Path))
					require.NoError(t, err)
					res, err := p.Prune(ctx, c.Query, c.Text)
					require.NoError(t, err)
					fo, n := checkNamed(t, c.ID, c.Text, res)
					folds, named = folds+fo, named+n
				}
			}
			require.Positive(t, folds)
			t.Logf("%d of %d folds holding a definition or record name one", named, folds)
		})
	}
}

// TestPlaceholdersNameWhatTheyFold: over the in-repository corpus (code in
// eight languages, tool output, commits), every placeholder whose fold
// holds a definition or a record names one, under a threshold and under
// line and token budgets.
func TestPlaceholdersNameWhatTheyFold(t *testing.T) {
	runNaming(t, corpusFiles(t))
}

// TestPlaceholdersNameWhatTheyFoldShared is the same over the shared dev
// sets (commits and questions), where ../shared is beside the repository.
func TestPlaceholdersNameWhatTheyFoldShared(t *testing.T) {
	if testing.Short() {
		t.Skip("prunes the eval sets")
	}
	var files []evalset.File
	for _, rel := range [][]string{{"evalsets", "dev"}, {"evalsets", "questions", "go_python.jsonl"}, {"evalsets", "questions", "tool.jsonl"}} {
		path, ok := testcorpus.Shared(rel...)
		if !ok {
			t.Skip(testcorpus.SkipReason(rel...))
		}
		fs, err := evalset.Load(path)
		require.NoError(t, err)
		files = append(files, fs...)
	}
	runNaming(t, files)
}

// TestNamesOff: WithPlaceholderNames(false) renders the placeholders of
// before: code placeholders with the range alone, text ones with neither.
func TestNamesOff(t *testing.T) {
	ctx := context.Background()
	text := "--- PASS: TestA (0.00s)\n--- PASS: TestB (0.00s)\n--- PASS: TestC (0.00s)\n--- FAIL: TestD (0.00s)\n"
	for _, tt := range []struct {
		on   bool
		want string
	}{
		{true, "--- PASS: TestA (0.00s)\n... 2 lines omitted (2-3): --- PASS: TestB, TestC ...\n--- FAIL: TestD (0.00s)\n"},
		{false, "--- PASS: TestA (0.00s)\n... 2 lines omitted ...\n--- FAIL: TestD (0.00s)\n"},
	} {
		p, err := Load(ctx, "", WithScorer(ScorerLexical), WithLineBudget(0.5), WithPlaceholderNames(tt.on))
		require.NoError(t, err)
		res, err := p.Prune(ctx, "which test did fail", text)
		require.NoError(t, err)
		require.Equal(t, tt.want, res.Text)
	}
}
