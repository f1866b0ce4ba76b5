package astrepair

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

func TestFoldNamesDefinitions(t *testing.T) {
	tests := []struct {
		name string
		lang syntax.Language
		src  string
		want []string
	}{
		{"go", syntax.Go, lines("package p", "type Client struct{}", "func (c *Client) do(x int) error {", "\treturn nil", "}", "func retry() {}", "var x = 1"),
			[]string{"type Client", "func (c *Client) do", "func retry", "var x"}},
		{"python", syntax.Python, lines("import os", "class Retry(Base):", "    def wait(self):", "        pass", "@cache", "def dedent(text):", "    return text"),
			[]string{"class Retry", "def dedent", "def wait"}},
		{"java", syntax.Java, lines("class A {", "  @Override", "  public void run() {", "    foo.bar();", "  }", "}"),
			[]string{"class A", "public void run"}},
		{"javascript", syntax.JavaScript, lines("const f = (a) => a + 1;", "function g() { return h(); }", "class K { m() {} }"),
			[]string{"const f", "function g", "class K", "m"}},
		{"rust", syntax.Rust, lines("struct S;", "impl Trait for S {", "    fn go(&self) {}", "}", "enum E { A, B }"),
			[]string{"struct S", "impl Trait for S", "enum E", "fn go"}},
		{"c", syntax.C, lines("struct s { int a; };", "int add(int a, struct s *b) {", "  return a;", "}", "int proto(int);"),
			[]string{"struct s", "int add"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(context.Background(), tt.src, tt.lang)
			require.NoError(t, err)
			assert.Equal(t, tt.want, a.FoldNames(1, a.Lines()))
		})
	}
}

func TestFoldNamesRecords(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"go test", lines("=== RUN   TestA", "--- PASS: TestA (0.00s)", "=== RUN   TestB", "    b_test.go:9: boom", "--- FAIL: TestB (0.01s)", "FAIL\texample.com/x\t0.02s"),
			[]string{"--- FAIL: TestB", "FAIL example.com/x", "--- PASS: TestA"}},
		{"git log", lines("commit 0123456789abcdef0123456789abcdef01234567", "Author: A <a@b>", "Date:   Mon", "", "    fix: retry on 503", "", "    body"),
			[]string{"fix: retry on 503"}},
		{"grep", lines("src/a.go:10:func a()", "src/a.go:12:  a()", "src/b.py:3:def b():"),
			[]string{"src/a.go", "src/b.py"}},
		{"traceback", lines("Traceback (most recent call last):", `  File "x.py", line 3, in <module>`, "    f()", "ValueError: bad value"),
			[]string{"ValueError: bad value"}},
		{"tap", lines("ok 1 - starts empty", "not ok 2 - computes subtotal"),
			[]string{"not ok 2 - computes subtotal", "ok 1 - starts empty"}},
		{"diff", lines("diff --git a/x.go b/x.go", "@@ -1,3 +1,4 @@ func main() {", "+x"),
			[]string{"x.go", "func main() {"}},
		{"log", lines("2026-01-01 10:00 [INFO] start", "2026-01-01 10:01 [ERROR] disk full"),
			[]string{"[ERROR] disk full"}},
		{"none", lines("hello", "world"), nil},
		{"du", lines("4\tsrc/test/java/org/apache/CountersTest.java", "16\tsrc/main"), []string{"src/test/java/org/apache/CountersTest.java", "src/main"}},
		{"ls", lines("total 8", "drwxr-xr-x 2 root root 4096 Aug 22 05:55 .", "-rw-r--r-- 1 root root 120 Aug 22 05:55 cors.ts"), []string{"cors.ts"}},
		{"warnings", lines("2026-01-01 10:00 WARNING disk at 91%", "2026-01-01 10:01 INFO ok"), []string{"WARNING disk at 91%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(context.Background(), tt.src, syntax.Text)
			require.NoError(t, err)
			assert.Equal(t, tt.want, a.FoldNames(1, a.Lines()))
		})
	}
}

func TestRenderNaming(t *testing.T) {
	src := lines("package p", "", "func a() {}", "func b() {}", "func c() {}", "func d() {}", "func keep() {}")
	keep := []bool{true, false, false, false, false, false, true}
	tests := []struct {
		name   string
		naming Naming
		want   string
	}{
		{"default", DefaultNaming, "// ... 5 lines omitted (2-6): func a, func b, func c, and 1 more"},
		{"short", ShortNaming, "// ... 5 lines omitted (2-6): func a and 3 more"},
		{"off", Naming{}, "// ... 5 lines omitted (2-6)"},
		{"chars", Naming{Max: 3, Label: 40, Chars: 14}, "// ... 5 lines omitted (2-6): func a, func b, and 2 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(context.Background(), src, syntax.Go)
			require.NoError(t, err)
			out, err := a.Render(context.Background(), keep, WithNaming(tt.naming))
			require.NoError(t, err)
			assert.Equal(t, lines("package p", tt.want, "func keep() {}"), out.Text)
			require.Len(t, out.Placeholders, 1)
			if tt.naming.Max > 0 {
				assert.Equal(t, 4, len(out.Placeholders[0].Names)+out.Placeholders[0].More)
			}
		})
	}
	t.Run("text", func(t *testing.T) {
		src := lines("a", "--- FAIL: TestX (0.1s)", "    x_test.go:3: boom", "z")
		out, err := Render(context.Background(), src, syntax.Text, []bool{true, false, false, true}, WithNaming(DefaultNaming))
		require.NoError(t, err)
		assert.Equal(t, lines("a", "... 2 lines omitted (2-3): --- FAIL: TestX ...", "z"), out.Text)
	})
	t.Run("long labels show their short form", func(t *testing.T) {
		src := lines("package p", "func (f *FlagBase[T, C, V]) IsDefaultVisible() bool { return true }", "func keep() {}")
		a, err := Analyze(context.Background(), src, syntax.Go)
		require.NoError(t, err)
		out, err := a.Render(context.Background(), []bool{true, false, true}, WithNaming(DefaultNaming))
		require.NoError(t, err)
		assert.Equal(t, lines("package p", "// ... 1 line omitted (2): func IsDefaultVisible", "func keep() {}"), out.Text)
		assert.Equal(t, []string{"func (f *FlagBase[T, C, V]) IsDefaultVisible"}, out.Placeholders[0].Names)
	})
	t.Run("long paths show their tail", func(t *testing.T) {
		src := lines("a", "4\tsrc/test/java/org/apache/commons/io/file/CountersTest.java", "z")
		out, err := Render(context.Background(), src, syntax.Text, []bool{true, false, true}, WithNaming(DefaultNaming))
		require.NoError(t, err)
		assert.Equal(t, lines("a", "... 1 line omitted (2): …/file/CountersTest.java ...", "z"), out.Text)
	})
	t.Run("shared prefix", func(t *testing.T) {
		src := lines("a", "--- PASS: TestX (0.1s)", "--- PASS: TestY (0.1s)", "z")
		out, err := Render(context.Background(), src, syntax.Text, []bool{true, false, false, true}, WithNaming(DefaultNaming))
		require.NoError(t, err)
		assert.Equal(t, lines("a", "... 2 lines omitted (2-3): --- PASS: TestX, TestY ...", "z"), out.Text)
		assert.Equal(t, []string{"--- PASS: TestX", "--- PASS: TestY"}, out.Placeholders[0].Names)
	})
	t.Run("label is one safe comment line", func(t *testing.T) {
		assert.Equal(t, "a b", cleanLabel("a\t b \\\\"))
		assert.False(t, strings.Contains(cutLabel(strings.Repeat("x", 50), 10), "xxxxxxxxxx"))
	})
}
