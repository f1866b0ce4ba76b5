package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// The fixtures under testdata are real outputs the generator captured
// (scratch paths already replaced); each test checks that the labels
// derived from one are the lines that report the injected fault.

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// goldText returns the text of the gold lines of every question.
func goldText(sc *family.Scenario) [][]string {
	lines := family.SplitLines(sc.Text)
	var out [][]string
	for _, q := range sc.Qs {
		var g []string
		for _, n := range q.Gold {
			g = append(g, lines[n-1])
		}
		out = append(out, g)
	}
	return out
}

func checkScenario(t *testing.T, sc *family.Scenario, minQ int) {
	t.Helper()
	require.NoError(t, sc.Check(5))
	require.GreaterOrEqual(t, len(sc.Qs), minQ)
	lines := family.SplitLines(sc.Text)
	for _, q := range sc.Qs {
		for _, n := range q.Gold {
			require.NotEmpty(t, strings.TrimSpace(lines[n-1]))
		}
	}
}

func TestLabelGccMake(t *testing.T) {
	out := fixture(t, "gcc_make.txt")
	injs := []cInjection{
		{file: "src/unix/tcp.c", fn: "uv_tcp_open", line: 363, kind: "undeclared"},
		{file: "src/unix/procfs-exepath.c", fn: "uv_exepath", line: 39, kind: "retval", warns: true},
	}
	sc, err := labelCGcc(rand.New(rand.NewPCG(1, 2)), 0, out, 2, "make -k", injs, true)
	require.NoError(t, err)
	checkScenario(t, sc, 2)
	all := strings.Join(goldText(sc)[0], "\n")
	lines := family.SplitLines(out)
	// Every question's gold is made of diagnostic, In function and make lines.
	for _, g := range goldText(sc) {
		for _, l := range g {
			require.False(t, strings.HasPrefix(l, "gcc ") && !strings.Contains(all, "gcc "), l)
		}
	}
	// The whole-build question holds both errors, their carets and notes,
	// the In function lines and make's Error lines.
	var whole []string
	for i, q := range sc.Qs {
		if len(q.Gold) > len(whole) {
			whole = goldText(sc)[i]
		}
	}
	joined := strings.Join(whole, "\n")
	for _, want := range []string{"src/unix/tcp.c: In function", "tcp.c:363:26: error:", "note: each undeclared identifier", "procfs-exepath.c:39:5: error:", "make: *** [Makefile:47: build/unix/tcp.o] Error 1"} {
		require.Contains(t, joined, want)
	}
	require.NotContains(t, joined, "Target 'all' not remade")
	_ = lines
	// A fault the compiler did not report drops the scenario.
	_, err = labelCGcc(rand.New(rand.NewPCG(1, 2)), 0, out, 2, "make -k", []cInjection{{file: "src/unix/tcp.c", line: 100, kind: "undeclared"}, injs[1]}, true)
	require.Error(t, err)
}

func TestParseGccCurlyAndASCIIQuotes(t *testing.T) {
	for _, l := range []string{"src/unix/core.c: In function ‘uv_run’:", "src/unix/core.c: In function 'uv_run':"} {
		m := reGccInFunc.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		require.Equal(t, "uv_run", m[2])
	}
}

func TestLabelJavac(t *testing.T) {
	out := fixture(t, "javac.txt")
	inj := javaInjection{file: "src/main/java/org/jsoup/parser/StreamParser.java", kind: "symbol", line: 256}
	sc, err := labelJavac(rand.New(rand.NewPCG(3, 4)), 2, out, 1, "javac -d out ...", []javaInjection{inj})
	require.NoError(t, err)
	// One error: the whole-output and the per-file question share a gold set.
	checkScenario(t, sc, 1)
	g := strings.Join(goldText(sc)[0], "\n")
	require.Contains(t, g, "StreamParser.java:256: error: cannot find symbol")
	require.Contains(t, g, "symbol:   method selctFirst(Evaluator)")
	require.Contains(t, g, "location: variable doc of type Document")
}

func TestParseJunit(t *testing.T) {
	lines := family.SplitLines(fixture(t, "junit.txt"))
	fails, tree, summary := parseJunit(lines, "src/main/java/org/jsoup/internal/StringUtil.java", 198)
	require.Len(t, fails, 2)
	require.Len(t, tree, 2)
	require.Contains(t, lines[tree[0]-1], "isWhitespace() ✘ expected: <true> but was: <false>")
	f := fails[0]
	require.Equal(t, "StringUtilTest", f.class)
	require.Equal(t, "isWhitespace()", f.test)
	require.Len(t, f.exc, 1)
	require.Contains(t, lines[f.exc[0]-1], "=> org.opentest4j.AssertionFailedError: expected: <true> but was: <false>")
	require.Len(t, f.frames, 1)
	require.Contains(t, lines[f.frames[0]-1], "org.jsoup.internal.StringUtilTest.isWhitespace(StringUtilTest.java:97)")
	require.Contains(t, lines[summary["tests failed"]-1], "2 tests failed")
	sc, err := labelJunit(rand.New(rand.NewPCG(5, 6)), 1, fixture(t, "junit.txt"), "java -jar ...", "src/main/java/org/jsoup/internal/StringUtil.java", family.Mutation{Line: 198, Kind: "drop"})
	require.NoError(t, err)
	checkScenario(t, sc, 2)
}

func TestParseCargoTest(t *testing.T) {
	out := fixture(t, "cargo_test.txt")
	lines := family.SplitLines(out)
	fails := parseCargoTest(lines, "src/ast/parse.rs", 104)
	require.Len(t, fails, 9)
	f := fails[0]
	require.Equal(t, "ast::parse::tests::parse_hex_brace", f.name)
	require.Equal(t, "---- ast::parse::tests::parse_hex_brace stdout ----", lines[f.head-1])
	require.Contains(t, lines[f.panic-1], "panicked at src/ast/parse.rs:5012:9:")
	require.Len(t, f.msg, 3) // assertion, left, right
	require.True(t, strings.HasPrefix(lines[f.msg[1]-1], "left:"))
	require.True(t, strings.HasPrefix(lines[f.msg[2]-1], "right:"))
	require.Equal(t, "    ast::parse::tests::parse_hex_brace", lines[f.listEntry-1])
	require.Equal(t, "test ast::parse::tests::parse_hex_brace ... FAILED", lines[f.testLine-1])
	// Backtrace frames in the crate: the test function and its closure.
	require.Len(t, f.frames, 4)
	require.Contains(t, lines[f.frames[0]-1], "regex_syntax::ast::parse::tests::parse_hex_brace")
	sc, err := labelCargoTest(rand.New(rand.NewPCG(7, 8)), 3, out, "cargo test --lib", "src/ast/parse.rs", family.Mutation{Line: 104, Kind: "off-by-one"})
	require.NoError(t, err)
	checkScenario(t, sc, 2)
}

func TestLabelCargoBuild(t *testing.T) {
	out := fixture(t, "cargo_build.txt")
	inj := rustInjection{file: "src/unicode.rs", kind: "mismatch", line: 612}
	sc, err := labelCargoBuild(rand.New(rand.NewPCG(9, 10)), 3, out, 101, "cargo build", "regex-syntax", "rust-lang/regex@x", inj)
	require.NoError(t, err)
	checkScenario(t, sc, 2)
	var whole string
	for _, g := range goldText(sc) {
		if j := strings.Join(g, "\n"); len(j) > len(whole) {
			whole = j
		}
	}
	for _, want := range []string{"error[E0308]: mismatched types", "--> src/unicode.rs:612:26", "expected `u32`, found `bool`", "could not compile `regex-syntax`"} {
		require.Contains(t, whole, want)
	}
	require.NotContains(t, whole, "rustc --explain")
	inj.line = 600
	_, err = labelCargoBuild(rand.New(rand.NewPCG(9, 10)), 3, out, 101, "cargo build", "regex-syntax", "rust-lang/regex@x", inj)
	require.Error(t, err)
}

func TestInjectionsKeepLineCount(t *testing.T) {
	src := "int f(uv_loop_t* loop, int fd) {\n  int r;\n\n  r = uv__close(fd, loop);\n  if (r)\n    return r;\n  loop->active_handles = 0;\n  return 0;\n}\n"
	r := rand.New(rand.NewPCG(1, 1))
	for _, kind := range []string{"undeclared", "semicolon", "member", "argcount", "unused", "ptrtype", "implicit", "retval"} {
		inj, ok := injectC(r, "x.c", src, kind)
		if !ok {
			continue
		}
		after := replaceLine(src, inj.line, inj.after)
		require.Equal(t, strings.Count(src, "\n"), strings.Count(after, "\n"), kind)
		require.NotEqual(t, src, after, kind)
	}
}
