package astrepair

import (
	"context"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

const goFile = `// Package retry schedules retries.
package retry

import "time"

// Backoff returns the delay before attempt n.
func Backoff(n int) time.Duration {
	d := time.Second << n
	if d > 30*time.Second {
		d = 30 * time.Second
	}
	return d
}
`

// TestGoPackageClauseRequired: go/parser (and gofmt) reject a Go file
// without its package clause, which tree-sitter accepts; it stays whenever
// any line stays, and Required names it for callers with an empty mask.
func TestGoPackageClauseRequired(t *testing.T) {
	ctx := context.Background()
	a, err := Analyze(ctx, goFile, syntax.Go)
	require.NoError(t, err)
	require.Equal(t, []int{1}, a.Required())
	lines := strings.Split(goFile, "\n")
	// Every line, blank ones between items included, keeps the clause.
	for line := range a.Lines() {
		keep := make([]bool, a.Lines())
		keep[line] = true
		rep, err := a.Repair(ctx, keep, WithMaxHops(0))
		require.NoError(t, err)
		require.True(t, rep.Keep[1], "line %d: package clause", line+1)
		cost, err := a.Closure(ctx, line, WithMaxHops(0))
		require.NoError(t, err)
		if line != 1 {
			require.Contains(t, cost, 1, "a budget pays for the package clause of line %d", line+1)
		}
		r, err := a.Render(ctx, rep.Keep)
		require.NoError(t, err)
		_, err = parser.ParseFile(token.NewFileSet(), "x.go", r.Text, parser.AllErrors)
		require.NoError(t, err, "keeping line %d (%q):\n%s", line+1, lines[line], r.Text)
	}
	// An empty mask plus Required is a Go file.
	keep := make([]bool, a.Lines())
	for _, r := range a.Required() {
		keep[r] = true
	}
	r, err := a.Render(ctx, keep)
	require.NoError(t, err)
	require.Equal(t, "// ... 1 line omitted (1)\npackage retry\n// ... 11 lines omitted (3-13)\n", r.Text)
	_, err = parser.ParseFile(token.NewFileSet(), "x.go", r.Text, parser.AllErrors)
	require.NoError(t, err)

	for _, lang := range []syntax.Language{syntax.Python, syntax.JavaScript, syntax.Rust} {
		a, err := Analyze(ctx, "x = 1\n", lang)
		require.NoError(t, err)
		require.Nil(t, a.Required(), lang)
	}
}
