package astrepair

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		lang syntax.Language
		src  string
		keep []int
		want string
		ph   []Placeholder
	}{
		{
			name: "python placeholder at run indentation",
			lang: syntax.Python, src: lines("def f():", "    a = 1", "    b = 2", "    return a"), keep: []int{1, 4},
			want: lines("def f():", "    # ... 2 lines omitted (2-3)", "    return a"),
			ph:   []Placeholder{{OutputLine: 1, FirstLine: 2, LastLine: 3}},
		},
		{
			name: "python empty block gets pass",
			lang: syntax.Python, src: lines("if x:", "    a()", "    b()", "else:", "    c()"), keep: []int{1, 4, 5},
			want: lines("if x:", "    pass  # ... 2 lines omitted (2-3)", "else:", "    c()"),
		},
		{
			name: "python single line omitted",
			lang: syntax.Python, src: lines("x = 1", "y = 2"), keep: []int{2},
			want: lines("# ... 1 line omitted (1)", "y = 2"),
		},
		{
			name: "go comment inside braces",
			lang: syntax.Go, src: lines("package p", "func f() {", "\tx()", "\ty()", "}"), keep: []int{1, 2, 5},
			want: lines("package p", "func f() {", "\t// ... 2 lines omitted (3-4)", "}"),
		},
		{
			name: "text gets neutral placeholder",
			lang: syntax.Text, src: lines("a", "  b", "c", "d"), keep: []int{1, 4},
			want: lines("a", "... 2 lines omitted ...", "d"),
		},
		{
			name: "crlf terminators are kept and copied",
			lang: syntax.Go, src: "package p\r\nvar a = 1\r\nvar b = 2\r\n", keep: []int{1},
			want: "package p\r\n// ... 2 lines omitted (2-3)\r\n",
		},
		{
			name: "final line without terminator",
			lang: syntax.Rust, src: "fn a() {}\nfn b() {}", keep: []int{1},
			want: "fn a() {}\n// ... 1 line omitted (2)",
		},
		{
			name: "everything removed",
			lang: syntax.Java, src: lines("class A {", "}"), keep: nil,
			want: lines("// ... 2 lines omitted (1-2)"),
			ph:   []Placeholder{{OutputLine: 0, FirstLine: 1, LastLine: 2}},
		},
		{
			name: "everything kept",
			lang: syntax.C, src: lines("int x;", "int y;"), keep: []int{1, 2},
			want: lines("int x;", "int y;"),
		},
		{name: "empty text", lang: syntax.Python, src: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(syntax.SplitLines(tt.src))
			out := render(t, tt.src, tt.lang, maskOf(n, tt.keep...))
			assert.Equal(t, tt.want, out.Text)
			if tt.ph != nil {
				assert.Equal(t, tt.ph, out.Placeholders)
			}
		})
	}
}

func TestRenderMaskLengthTolerance(t *testing.T) {
	src := lines("a", "b", "c")
	short := render(t, src, syntax.Text, []bool{true})
	assert.Equal(t, lines("a", "... 2 lines omitted ..."), short.Text)
	long := render(t, src, syntax.Text, []bool{true, true, true, true, true})
	assert.Equal(t, src, long.Text)
}

func TestRenderCommentPrefix(t *testing.T) {
	src := lines("echo a", "echo b", "echo c")
	out := render(t, src, syntax.Text, maskOf(3, 1), WithCommentPrefix("#"))
	assert.Equal(t, lines("echo a", "# ... 2 lines omitted (2-3)"), out.Text)
}

func TestRenderPythonFillerAfterRepair(t *testing.T) {
	ctx := context.Background()
	src := lines(
		"class A:",
		"    def f(self):",
		"        return 1",
		"",
		"    def g(self):",
		"        x = 2",
		"        return x",
	)
	res, err := Repair(ctx, src, syntax.Python, maskOf(7, 6), WithReturns(false))
	require.NoError(t, err)
	out := render(t, src, syntax.Python, res.Keep)
	assert.Equal(t, lines(
		"class A:",
		"    # ... 3 lines omitted (2-4)",
		"    def g(self):",
		"        x = 2",
		"        # ... 1 line omitted (7)",
	), out.Text)
	tree, err := syntax.Parse(ctx, syntax.Python, []byte(out.Text))
	require.NoError(t, err)
	assert.Zero(t, tree.Errors)
	assert.True(t, strings.HasSuffix(out.Text, "\n"))
}

// render is Render for tests, failing t on an error.
func render(t testing.TB, text string, lang syntax.Language, keep []bool, opts ...RenderOption) Rendered {
	t.Helper()
	out, err := Render(context.Background(), text, lang, keep, opts...)
	require.NoError(t, err)
	return out
}

// renderA is Analysis.Render for tests, failing t on an error.
func renderA(t testing.TB, a *Analysis, keep []bool, opts ...RenderOption) Rendered {
	t.Helper()
	out, err := a.Render(context.Background(), keep, opts...)
	require.NoError(t, err)
	return out
}
