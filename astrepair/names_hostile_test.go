package astrepair

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// checkNames requires every name of a to be one clean line of at most
// maxName characters, and every placeholder of a rendering folding all but
// the first and last lines to be one clean line too.
func checkNames(t *testing.T, a *Analysis, text string) {
	t.Helper()
	names := a.Names()
	require.NotEmpty(t, names, "the text names something")
	for _, n := range names {
		require.LessOrEqual(t, utf8.RuneCountInString(n), maxName, "name %.80q...", n)
		requireCleanLine(t, n)
	}
	keep := make([]bool, a.Lines())
	keep[0], keep[len(keep)-1] = true, true
	for _, naming := range []Naming{DefaultNaming, ShortNaming, {Max: 3}} {
		out, err := a.Render(context.Background(), keep, WithNaming(naming))
		require.NoError(t, err)
		require.NotEmpty(t, out.Placeholders)
		lines := strings.SplitAfter(out.Text, "\n")
		for _, ph := range out.Placeholders {
			line := strings.TrimRight(lines[ph.OutputLine], "\r\n")
			require.Less(t, len(line), 1000, "placeholder %.200q...", line)
			requireCleanLine(t, line)
			for _, n := range ph.Names {
				require.LessOrEqual(t, utf8.RuneCountInString(n), maxName)
				requireCleanLine(t, n)
			}
		}
	}
}

func requireCleanLine(t *testing.T, s string) {
	t.Helper()
	require.True(t, utf8.ValidString(s), "invalid UTF-8 in %.200q", s)
	for _, r := range s {
		require.False(t, r < ' ' || r >= 0x7f && r <= 0x9f || r == '\u2028' || r == '\u2029', "control %U in %.200q", r, s)
	}
}

// TestNamesHostile: names of records and definitions stay short, valid,
// one-line text whatever the lines they come from (50,000-character lines,
// terminal escapes, vertical tabs, NUL, invalid UTF-8, CRLF).
func TestNamesHostile(t *testing.T) {
	long := strings.Repeat("x", 50000)
	t.Run("records", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("start\r\n")
		for _, l := range []string{
			"--- FAIL: Test" + long,
			"--- FAIL: TestEsc\x1b[31m\x0bX\x00\xff",
			"FAIL\texample.com/" + long + "\x1b",
			"diff --git a/\x1b[2J\x85\xe2\x80\xa8 b/x",
			"diff --git a/" + long + " b/x",
			"FAILED t.py::test_" + long,
			"tests/a.py::test_\x07bell PASSED",
			"ERROR " + long,
			"ValueError: " + long,
			"src/" + long + ".go:12:bad",
			"4\tsrc/\x1b/" + long + ".txt",
			"-rw-r--r-- 1 root root 120 Aug 22 05:55 " + long + "\x1b",
			"    commit body",
		} {
			b.WriteString(l)
			b.WriteString("\r\nfiller\r\n")
		}
		b.WriteString("end\r\n")
		text := b.String()
		a, err := Analyze(context.Background(), text, syntax.Text)
		require.NoError(t, err)
		checkNames(t, a, text)
	})
	t.Run("definitions", func(t *testing.T) {
		for _, tc := range []struct {
			lang syntax.Language
			src  string
		}{
			{syntax.Go, "package p\r\n\r\nfunc F" + long + "() {\r\n\t_ = \"\xff\"\r\n}\r\n\r\ntype T" + long + " struct{}\r\nvar end = 1\r\n"},
			{syntax.Python, "import os\r\n\r\ndef f" + long + "():\r\n    pass\r\n\r\nclass C" + long + ":\r\n    pass\r\nend = 1\r\n"},
			{syntax.JavaScript, "let a = 1;\nconst g" + long + " = () => 1;\nfunction h" + long + "() {}\nlet z = 2;\n"},
		} {
			a, err := Analyze(context.Background(), tc.src, tc.lang)
			require.NoError(t, err)
			checkNames(t, a, tc.src)
		}
	})
}

// TestPathTailTrailingSlash: du prints a directory as it was named, so
// "4.0K\t/tmp/" is ordinary tool output; its path has a trailing slash and
// one element, which once cut the label at index -1 (a panic that Prune
// turned into an internal error).
func TestPathTailTrailingSlash(t *testing.T) {
	for label, want := range map[string]string{
		"/tmp/": "", "a//": "", "///": "", "/": "", "//x": "…//x", "x/": "",
		"a/b/c": "…/b/c", "/tmp/some/dir/": "…/some/dir/", "./x/y/": "…/x/y/", "x//y": "…//y",
	} {
		require.Equal(t, want, pathTail(label), label)
	}
	src := lines("4.0K\t/tmp/", "8\ta//", "12K\t./x/y/", "16\t///", "20\t/tmp/some/dir/")
	a, err := Analyze(context.Background(), src, syntax.Text)
	require.NoError(t, err)
	require.Equal(t, []string{"/tmp/", "a//", "./x/y/", "///", "/tmp/some/dir/"}, a.Names())
	out, err := a.Render(context.Background(), []bool{true, false, false, false, true}, WithNaming(ShortNaming))
	require.NoError(t, err)
	require.Len(t, out.Placeholders, 1)
}

// FuzzNames: any text, read as tool output, names its records as clean
// lines of at most maxName characters, and renders with names.
func FuzzNames(f *testing.F) {
	for _, s := range []string{
		lines("--- FAIL: TestA (0.1s)", "4.0K\t/tmp/", "diff --git a/x b/x", "@@ -1 +1 @@ func f()", "ok 1 - a", "not ok 2 - b"),
		lines("commit 0123456789abcdef", "Author: a", "", "    subject", "src/a.go:1:2: x", "ValueError: y"),
		lines("drwxr-xr-x 2 root root 4096 Aug 22 05:55 d/", "t.py::test_x FAILED", "____ test_y ____", "✖ spec (3ms)", "level=error msg=x", "WARN y"),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if text == "" {
			return
		}
		a, err := Analyze(context.Background(), text, syntax.Text)
		if err != nil {
			return
		}
		for _, n := range a.Names() {
			if utf8.RuneCountInString(n) > maxName {
				t.Fatalf("name of %d characters", utf8.RuneCountInString(n))
			}
			requireCleanLine(t, n)
		}
		keep := make([]bool, a.Lines())
		keep[0] = true
		for _, naming := range []Naming{DefaultNaming, ShortNaming} {
			out, err := a.Render(context.Background(), keep, WithNaming(naming))
			if err != nil {
				t.Fatal(err)
			}
			for _, ph := range out.Placeholders {
				for _, n := range ph.Names {
					requireCleanLine(t, n)
				}
			}
		}
	})
}

// TestCleanLabelDropsBidiControls: a name copied from the input carries no
// character that reorders how the placeholder line is displayed.
func TestCleanLabelDropsBidiControls(t *testing.T) {
	tests := []struct{ in, want string }{
		{"func isAdmin\u202e \u2066// check\u2069 \u2066", "func isAdmin // check"},
		{"def f\u200e\u200f\u061c()", "def f()"},
		{"plain name", "plain name"},
		{"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", ""},
	}
	for _, tt := range tests {
		got := cleanLabel(tt.in)
		require.Equal(t, tt.want, got, "cleanLabel(%+q)", tt.in)
		require.False(t, strings.ContainsFunc(got, isBidiControl), "cleanLabel(%+q) keeps a bidi control", tt.in)
	}
}
