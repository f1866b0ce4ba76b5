package astrepair

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"os/exec"
	"strings"
	"testing"
	"time"

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

const jsPrivate = `class Loader {
    #cache = new Map();
    #hits = 0;

    constructor(root) {
        this.root = root;
    }

    #evict(path) {
        this.#cache.delete(path);
    }

    load(path) {
        if (this.#cache.has(path)) {
            return this.#cache.get(path);
        }
        this.#evict(path);
        return null;
    }
}
`

const jsExports = `import fs from "node:fs";

function formatSize(bytes) {
    return bytes + " B";
}

class Registry {
    add(item) {
        this.items.push(item);
    }
}

export { formatSize, Registry as Catalog };
export { readFile } from "node:fs/promises";
`

// TestJSNamesRequired: V8 refuses a use of a private name whose class
// member is gone, and an export list naming a declaration that is gone;
// tree-sitter accepts both. With no dependency hops (a budget's default),
// every kept line brings what its names need.
func TestJSNamesRequired(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, text string
		line       int   // 0-based, kept alone
		want       []int // 0-based rows that must come with it
		not        []int // rows that must not
	}{
		{"private field use", jsPrivate, 13, []int{1}, []int{2}},
		{"private field use in a private method", jsPrivate, 9, []int{1, 8}, []int{2}},
		{"private method call", jsPrivate, 16, []int{8}, []int{2}},
		{"export list", jsExports, 12, []int{2, 6}, []int{0}},
		{"re-export from another module needs nothing here", jsExports, 13, nil, []int{2, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Analyze(ctx, tc.text, syntax.JavaScript)
			require.NoError(t, err)
			keep := make([]bool, a.Lines())
			keep[tc.line] = true
			rep, err := a.Repair(ctx, keep, WithMaxHops(0))
			require.NoError(t, err)
			for _, r := range tc.want {
				require.True(t, rep.Keep[r], "row %d", r)
			}
			for _, r := range tc.not {
				require.False(t, rep.Keep[r], "row %d", r)
			}
			cost, err := a.Closure(ctx, tc.line, WithMaxHops(0))
			require.NoError(t, err)
			for _, r := range tc.want {
				require.Contains(t, cost, r, "a budget pays for row %d", r)
			}
		})
	}
}

const pyNonlocal = `import socket


def run_tests(self):
    subtest = None
    socket_closed = False

    def on_close(sock):
        nonlocal socket_closed
        socket_closed = True

    def record(test, st):
        nonlocal subtest
        subtest = st

    for attempt in range(3):
        record(self, attempt)
    return subtest, socket_closed


def with_param(flag):
    def inner():
        nonlocal flag
        flag = not flag
    return inner
`

// TestPyNonlocalRequired: Python's compiler refuses "nonlocal x" unless the
// enclosing function binds x ("no binding for nonlocal 'x' found"), which
// ast.parse and tree-sitter accept; the binding stays with the statement,
// with no dependency hops. A parameter needs nothing more.
func TestPyNonlocalRequired(t *testing.T) {
	ctx := context.Background()
	a, err := Analyze(ctx, pyNonlocal, syntax.Python)
	require.NoError(t, err)
	tests := []struct {
		line int // 0-based
		want []int
		not  []int
	}{
		{8, []int{5}, []int{4}},  // nonlocal socket_closed: socket_closed = False
		{12, []int{4}, []int{5}}, // nonlocal subtest: subtest = None
		{22, []int{20}, nil},     // nonlocal flag: the parameter, in the header
	}
	// A comprehension's loop variable binds in the comprehension's own
	// scope, not the function's: the binding is the later x = 0.
	comp := "def outer():\n    ys = [x for x in range(3)]\n    x = 0\n\n    def inner():\n        nonlocal x\n        x += 1\n    return inner\n"
	ca, err := Analyze(ctx, comp, syntax.Python)
	require.NoError(t, err)
	keep := make([]bool, ca.Lines())
	keep[5] = true
	rep, err := ca.Repair(ctx, keep, WithMaxHops(0))
	require.NoError(t, err)
	require.True(t, rep.Keep[2], "x = 0")
	require.False(t, rep.Keep[1], "the comprehension binds nothing in outer")
	for _, tc := range tests {
		checkKeptAlone(t, a, tc.line, tc.want, tc.not, "python3", "-c", "import sys; compile(sys.stdin.read(), 'x.py', 'exec')")
	}
}

const rustDocs = `//! Filters on file owners.

/// Filter based on time ranges.
pub enum TimeFilter {
    Before(u64),
    After(u64),
}

impl TimeFilter {
    //// Not a doc comment: four slashes.
    /// Whether the filter holds for t.
    #[inline]
    pub fn applies_to(&self, t: u64) -> bool {
        match self {
            TimeFilter::Before(x) => t < *x,
            TimeFilter::After(x) => t > *x,
        }
    }

    /** The cut-off. */
    pub fn limit(&self) -> u64 {
        match self {
            TimeFilter::Before(x) | TimeFilter::After(x) => *x,
        }
    }
}
`

// TestRustDocCommentBringsItsItem: rustc refuses an outer doc comment
// (///, /** */) with no item after it ("expected item after doc comment",
// E0584 in a block), which tree-sitter accepts; a kept doc comment brings
// its item's header, attributes between them included. The item does not
// bring its docs.
func TestRustDocCommentBringsItsItem(t *testing.T) {
	ctx := context.Background()
	a, err := Analyze(ctx, rustDocs, syntax.Rust)
	require.NoError(t, err)
	tests := []struct {
		line int // 0-based
		want []int
		not  []int
	}{
		{2, []int{3, 6}, nil},      // /// before the enum: its header and closing brace
		{10, []int{11, 12}, nil},   // /// then #[inline]: the fn's header
		{19, []int{20}, []int{10}}, // /** */ before a fn
		{9, nil, []int{12}},        // //// is a plain comment
		{12, nil, []int{10, 19}},   // the fn alone does not keep its docs
	}
	for _, tc := range tests {
		checkKeptAlone(t, a, tc.line, tc.want, tc.not, "rustfmt", "--edition", "2021", "--emit", "stdout")
	}
}

// The name rules read each node a bounded number of times: a nonlocal in
// each of 40,000 nested functions (2 MB) and a 256K-link chain of private
// names (1 MB) analyse in about a second; the first versions of the rules
// rescanned the enclosing function per name (15 s for 1 MB) and walked the
// parents per private name (8 s for 256 KB), minutes at these sizes.
func TestNameRulesStayLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("2 MB analyses skipped in -short mode")
	}
	var py strings.Builder
	py.WriteString("def outer(x):\n")
	for i := range 40_000 {
		fmt.Fprintf(&py, "    def f%d():\n        nonlocal x\n        x += 1\n", i)
	}
	js := "class A {\n  #a = null;\n  m() {\n    return this" + strings.Repeat(".#a", 256<<10) + ";\n  }\n}\n"
	for _, tc := range []struct {
		lang syntax.Language
		text string
	}{{syntax.Python, py.String()}, {syntax.JavaScript, js}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		start := time.Now()
		_, err := Analyze(ctx, tc.text, tc.lang)
		cancel()
		require.NoError(t, err, "%s: %d bytes", tc.lang, len(tc.text))
		require.Less(t, time.Since(start), time.Minute, "%s", tc.lang)
	}
}

// checkKeptAlone repairs a mask keeping only line (0-based) with no
// dependency hops, requires the rows of want kept and those of not left
// out, and, when the language's own front end (judge, reading the source
// on stdin) is on this machine, that it accepts the rendered output.
func checkKeptAlone(t *testing.T, a *Analysis, line int, want, not []int, judge ...string) {
	t.Helper()
	ctx := context.Background()
	keep := make([]bool, a.Lines())
	keep[line] = true
	rep, err := a.Repair(ctx, keep, WithMaxHops(0))
	require.NoError(t, err)
	for _, r := range want {
		require.True(t, rep.Keep[r], "line %d needs row %d", line, r)
	}
	for _, r := range not {
		require.False(t, rep.Keep[r], "line %d does not need row %d", line, r)
	}
	if _, err := exec.LookPath(judge[0]); err != nil {
		return
	}
	out, err := a.Render(ctx, rep.Keep)
	require.NoError(t, err)
	cmd := exec.Command(judge[0], judge[1:]...)
	cmd.Stdin = strings.NewReader(out.Text)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "keeping line %d:\n%s\n%s", line, out.Text, msg)
}
