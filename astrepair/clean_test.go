package astrepair

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// randomMask draws a mask of the given density, either line by line or as
// contiguous runs (the shape model masks usually have).
func randomMask(rng *rand.Rand, n int, density float64, runs bool) []bool {
	keep := make([]bool, n)
	if !runs {
		for i := range keep {
			keep[i] = rng.Float64() < density
		}
		return keep
	}
	target := int(density * float64(n))
	for kept := 0; kept < target; {
		start := rng.Intn(n)
		length := 1 + rng.Intn(12)
		for i := start; i < start+length && i < n; i++ {
			if !keep[i] {
				keep[i] = true
				kept++
			}
		}
	}
	return keep
}

func cleanFixtures(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "clean", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	return files
}

// TestRepairedOutputParsesClean is the acceptance test of the package: for
// real files that parse cleanly, random masks at several densities, once
// repaired and rendered, parse with zero ERROR or MISSING nodes.
func TestRepairedOutputParsesClean(t *testing.T) {
	ctx := context.Background()
	densities := []float64{0.02, 0.05, 0.1, 0.2, 0.4, 0.7}
	perDensity := 12
	if testing.Short() {
		perDensity = 2
	}
	type tally struct{ clean, total int }
	rates := map[syntax.Language]*tally{}
	for _, file := range cleanFixtures(t) {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		text := string(src)
		lang := syntax.Detect(text, file)
		require.True(t, lang.IsCode(), "%s: detected %s", file, lang)
		a, err := Analyze(ctx, text, lang)
		require.NoError(t, err)
		require.Zero(t, a.ParseErrors(), "%s: fixture must parse cleanly", file)
		if rates[lang] == nil {
			rates[lang] = &tally{}
		}
		rng := rand.New(rand.NewSource(int64(len(text))))
		for _, d := range densities {
			for k := 0; k < perDensity; k++ {
				keep := randomMask(rng, a.Lines(), d, k%2 == 1)
				res, err := a.Repair(ctx, keep)
				require.NoError(t, err)
				out := renderA(t, a, res.Keep)
				tree, err := syntax.Parse(ctx, lang, []byte(out.Text))
				require.NoError(t, err)
				rates[lang].total++
				if tree.Errors == 0 {
					rates[lang].clean++
				} else if rates[lang].total-rates[lang].clean <= 2 {
					t.Errorf("%s density %.2f: %d parse errors in output:\n%s", file, d, tree.Errors, firstError(tree, out.Text))
				}
				assertKeptVerbatim(t, text, res.Keep, out)
			}
		}
	}
	langs := make([]string, 0, len(rates))
	for l := range rates {
		langs = append(langs, string(l))
	}
	sort.Strings(langs)
	for _, l := range langs {
		r := rates[syntax.Language(l)]
		t.Logf("parse-clean %-10s %d/%d = %.1f%%", l, r.clean, r.total, 100*float64(r.clean)/float64(r.total))
		assert.Equal(t, r.total, r.clean, "language %s", l)
	}
}

// firstError shows the output around the first ERROR or MISSING node.
func firstError(tree *syntax.Tree, text string) string {
	lines := strings.Split(text, "\n")
	for _, n := range tree.Nodes {
		if n.IsError() || n.IsMissing() {
			lo := int(n.StartRow) - 6
			if lo < 0 {
				lo = 0
			}
			hi := int(n.StartRow) + 4
			if hi > len(lines) {
				hi = len(lines)
			}
			var sb strings.Builder
			for i := lo; i < hi; i++ {
				mark := "   "
				if i == int(n.StartRow) {
					mark = ">> "
				}
				sb.WriteString(mark + lines[i] + "\n")
			}
			return sb.String()
		}
	}
	return ""
}

// assertKeptVerbatim checks that the rendering is the kept lines, in order
// and byte-identical, with exactly one placeholder per removed run.
func assertKeptVerbatim(t testing.TB, text string, keep []bool, out Rendered) {
	t.Helper()
	in := syntax.SplitLines(text)
	got := syntax.SplitLines(out.Text)
	ph := map[int]Placeholder{}
	for _, p := range out.Placeholders {
		ph[p.OutputLine] = p
	}
	o := 0
	for r := 0; r < len(in); {
		if keep[r] {
			if !assert.Less(t, o, len(got)) {
				return
			}
			if !assert.Equal(t, text[in[r].Start:in[r].TermEnd], out.Text[got[o].Start:got[o].TermEnd], "input line %d", r+1) {
				return
			}
			o++
			r++
			continue
		}
		p, ok := ph[o]
		if !assert.True(t, ok, "output line %d should be a placeholder for input line %d", o, r+1) {
			return
		}
		assert.Equal(t, r+1, p.FirstLine)
		for r < len(in) && !keep[r] {
			r++
		}
		assert.Equal(t, r, p.LastLine)
		o++
	}
	assert.Equal(t, len(got), o)
}

// TestSingleLineClosuresParseClean keeps one line at a time, the hardest
// case for repair since nothing around the line is kept by the model.
func TestSingleLineClosuresParseClean(t *testing.T) {
	ctx := context.Background()
	for _, file := range cleanFixtures(t) {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		text := string(src)
		lang := syntax.Detect(text, file)
		a, err := Analyze(ctx, text, lang)
		require.NoError(t, err)
		step := 1 + a.Lines()/150
		if testing.Short() {
			step *= 4
		}
		failures := 0
		for line := 0; line < a.Lines(); line += step {
			keep := make([]bool, a.Lines())
			keep[line] = true
			res, err := a.Repair(ctx, keep)
			require.NoError(t, err)
			out := renderA(t, a, res.Keep)
			tree, err := syntax.Parse(ctx, lang, []byte(out.Text))
			require.NoError(t, err)
			if tree.Errors > 0 {
				failures++
				if failures <= 2 {
					t.Errorf("%s: keeping line %d alone: %d parse errors:\n%s", file, line+1, tree.Errors, firstError(tree, out.Text))
				}
			}
		}
	}
}
