package syntax

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/testcorpus"
)

// bigTexts joins real files of each language into texts of up to 1 MB:
// Go's net/http, the in-repository corpus and, where ../shared is beside
// the repository, files of the training repositories (one version of each
// path, only files that parse cleanly alone, so that the joined text
// parses cleanly whole and a difference in pieces shows).
func bigTexts(t *testing.T) map[Language]string {
	t.Helper()
	const size = 1 << 20
	out := map[Language]*strings.Builder{}
	full := func(l Language) bool { return out[l] != nil && out[l].Len() >= size }
	add := func(l Language, s string) {
		if full(l) {
			return
		}
		if tree, err := parseC(context.Background(), l, []byte(s)); err != nil || tree.Errors > 0 {
			return
		}
		if out[l] == nil {
			out[l] = &strings.Builder{}
		}
		out[l].WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			out[l].WriteString("\n")
		}
		out[l].WriteString("\n")
	}
	files, err := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "net", "http", "*.go"))
	require.NoError(t, err)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		add(Go, string(data))
	}
	// The in-repository corpus, then (where ../shared is beside the
	// repository) the training data, one version of each path.
	cases, err := testcorpus.Cases("traindata")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, c := range cases {
		lang, err := ParseLanguage(c.Lang)
		if err != nil || full(lang) {
			continue
		}
		if key := c.Repo + ":" + c.Path; !seen[key] {
			seen[key] = true
			add(lang, c.Text)
		}
	}
	m := map[Language]string{}
	for l, b := range out {
		m[l] = b.String()
	}
	return m
}

// TestPiecesMatchWholeParse parses big texts of every dev-set language
// whole and in pieces of 16 KB, 2 KB for a text under 256 KB (so that
// there are many cuts), and compares the trees node for node: cutting at
// top-level boundaries must not change what tree-sitter sees.
func TestPiecesMatchWholeParse(t *testing.T) {
	for lang, text := range bigTexts(t) {
		t.Run(string(lang), func(t *testing.T) {
			src := []byte(text)
			piece := 16 << 10
			if len(src) < 256<<10 {
				piece = 2 << 10 // a short text (the in-repository corpus alone) is cut too
			}
			cuts, err := pieceCuts(lang, src, piece)
			require.NoError(t, err)
			whole, err := parseC(context.Background(), lang, src)
			require.NoError(t, err)
			pieces, err := parsePiecesOf(context.Background(), lang, src, piece)
			require.NoError(t, err)
			t.Logf("%d bytes, %d pieces, %d nodes, %d errors whole, %d in pieces", len(src), len(cuts)-1, len(whole.Nodes), whole.Errors, pieces.Errors)
			if len(src) > 256<<10 {
				require.Greater(t, len(cuts)-1, 2, "the text is cut")
			}
			require.Equal(t, len(whole.Nodes), len(pieces.Nodes))
			for i := range whole.Nodes {
				require.Equal(t, view(&whole.Nodes[i]), view(&pieces.Nodes[i]), "node %d", i)
			}
			require.Equal(t, whole.Errors, pieces.Errors)
		})
	}
}

// TestPieceCutsRespectNesting: lines that look like top-level items but sit
// inside a string, a comment, brackets or an #if block are never cut.
func TestPieceCutsRespectNesting(t *testing.T) {
	item := "func f() {}\n\n"
	tests := []struct {
		name string
		lang Language
		open string // text that opens a nesting the fake items sit in
		shut string
	}{
		{"go raw string", Go, "var s = `\n\n", "`\n\n"},
		{"go block comment", Go, "/*\n\n", "*/\n\n"},
		{"go braces", Go, "var v = map[int]int{\n\n", "}\n\n"},
		{"python triple quotes", Python, "s = \"\"\"\n\n", "\"\"\"\n\n"},
		{"python brackets", Python, "x = [\n\n", "]\n\n"},
		{"js template", JavaScript, "const s = `\n\n", "`\n\n"},
		{"c preprocessor", C, "#if X\n\n", "#endif\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := strings.ReplaceAll(item, "func f() {}", map[Language]string{Go: "func f() {}", Python: "def f(): pass", JavaScript: "function f() {}", C: "static int f;"}[tt.lang])
			text := tt.open + strings.Repeat(fake, 400) + tt.shut + strings.Repeat(fake, 400)
			cuts, err := pieceCuts(tt.lang, []byte(text), 64)
			require.NoError(t, err)
			inner := len(tt.open) + 400*len(fake) + len(tt.shut)
			require.Greater(t, len(cuts), 3, "the items after the nesting are cut")
			for _, c := range cuts[1 : len(cuts)-1] {
				require.GreaterOrEqual(t, c, inner, "cut at %d inside the nesting (which ends at %d)", c, inner)
			}
		})
	}
}

// TestParseLargeText: a large text goes through pieces and still yields
// one tree over the whole text; one without boundaries is refused.
func TestParseLargeText(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		b.WriteString("func f")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("() int {\n\treturn 1\n}\n\n")
	}
	src := []byte("package p\n\n" + b.String())
	tree, err := Parse(context.Background(), Go, src)
	require.NoError(t, err)
	require.Zero(t, tree.Errors)
	root := tree.Nodes[0]
	require.Equal(t, "source_file", root.Type())
	require.EqualValues(t, len(src), root.EndByte)
	require.EqualValues(t, len(tree.Nodes), root.End)
	require.EqualValues(t, strings.Count(string(src), "\n"), root.EndRow)

	_, err = Parse(context.Background(), Go, []byte(strings.Repeat("x := a + b; ", 3<<20/12)))
	require.ErrorIs(t, err, ErrNoBoundary)
	require.ErrorIs(t, err, ErrTooLarge)
}
