package syntax

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLanguage(t *testing.T) {
	tests := []struct {
		in   string
		want Language
	}{
		{"python", Python}, {"py", Python}, {"PY3", Python},
		{"go", Go}, {"golang", Go},
		{"js", JavaScript}, {"javascript", JavaScript}, {"jsx", JavaScript},
		{"ts", TypeScript}, {"TypeScript", TypeScript}, {"tsx", TSX},
		{"java", Java}, {"rust", Rust}, {"rs", Rust},
		{"c", C}, {"h", C}, {"c++", CPP}, {"cpp", CPP}, {" .cc ", CPP},
		{"text", Text}, {"log", Text}, {"json", Text},
	}
	for _, tt := range tests {
		got, err := ParseLanguage(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	for _, bad := range []string{"", "cobol", "pythonn", "c#"} {
		_, err := ParseLanguage(bad)
		assert.ErrorIs(t, err, ErrUnknownLanguage, bad)
	}
}

func TestLanguageMethods(t *testing.T) {
	assert.Equal(t, "#", Python.LineComment())
	assert.Equal(t, "//", Rust.LineComment())
	assert.Equal(t, "", Text.LineComment())
	assert.Equal(t, "text", Text.String())
	assert.False(t, Text.IsCode())
	assert.False(t, Language("cobol").IsCode())
	for _, l := range Languages() {
		assert.True(t, l.IsCode(), l)
		back, err := ParseLanguage(l.String())
		require.NoError(t, err)
		assert.Equal(t, l, back)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name, text, file string
		want             Language
	}{
		{"py hint", "x = 1\n", "a/b.py", Python},
		{"go hint", "", "main.go", Go},
		{"tsx hint", "x", "App.tsx", TSX},
		{"json hint", "def f():\n  pass\n", "data.json", Text},
		{"h with cpp content", "namespace a {\ntemplate <typename T> class X {};\n}\n", "x.h", CPP},
		{"h with c content", "#include <stdio.h>\nint main(void) {\n  printf(\"x\");\n}\n", "x.h", C},
		{"python content", "import os\n\ndef main():\n    return os.getcwd()\n", "", Python},
		{"go content", "package main\n\nfunc main() {\n\tx := 1\n}\n", "", Go},
		{"java content", "package a.b;\nimport java.util.List;\npublic class A {\n  public static void main(String[] a) {}\n}\n", "", Java},
		{"rust content", "use std::io;\npub fn main() {\n    let mut x = 1;\n}\n", "", Rust},
		{"c content", "#include <stdio.h>\n#include \"x.h\"\nint main(void) {\n  printf(\"hi\");\n  return 0;\n}\n", "", C},
		{"cpp content", "#include <vector>\nnamespace a {\nstd::vector<int> v;\n}\n", "", CPP},
		{"js content", "const fs = require('fs');\nfunction f(a) {\n  console.log(a === 1);\n}\n", "", JavaScript},
		{"ts content", "export interface A {\n  x: number;\n}\nfunction f(a: string): void {}\n", "", TypeScript},
		{"grep output", "src/a.py:12:def f():\nsrc/a.py:13:    return 1\nsrc/b.py:4:import os\n", "", Text},
		{"log", "2024-01-02 10:00:01 INFO start\n2024-01-02 10:00:02 ERROR boom\n  at def f()\n", "", Text},
		{"json", "{\n  \"a\": 1,\n  \"b\": [1, 2]\n}\n", "", Text},
		{"diff", "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-def f():\n+def g():\n", "", Text},
		{"prose", "The quick brown fox jumps over the lazy dog.\nNothing to see.\n", "", Text},
		{"empty", "", "", Text},
		{"unknown ext falls back to content", "package main\nfunc main() {}\n", "main.txt2", Go},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Detect(tt.text, tt.file))
		})
	}
}

func TestSplitLines(t *testing.T) {
	tests := []struct {
		text string
		want []string // content of each line
		term []string
	}{
		{"", nil, nil},
		{"a", []string{"a"}, []string{""}},
		{"a\n", []string{"a"}, []string{"\n"}},
		{"a\r\nb", []string{"a", "b"}, []string{"\r\n", ""}},
		{"a\rb\n\n", []string{"a\rb", ""}, []string{"\n", "\n"}},
		{"\r\n", []string{""}, []string{"\r\n"}},
		{"\r", []string{"\r"}, []string{""}},
	}
	for _, tt := range tests {
		lines := SplitLines(tt.text)
		require.Len(t, lines, len(tt.want), "%q", tt.text)
		for i, l := range lines {
			assert.Equal(t, tt.want[i], tt.text[l.Start:l.End], "%q line %d", tt.text, i)
			assert.Equal(t, tt.term[i], tt.text[l.End:l.TermEnd], "%q line %d", tt.text, i)
		}
	}
}

func TestParse(t *testing.T) {
	ctx := context.Background()
	tree, err := Parse(ctx, Python, []byte("def f(x):\n    return x\n"))
	require.NoError(t, err)
	assert.Zero(t, tree.Errors)
	assert.Equal(t, "module", tree.Nodes[0].Type())
	assert.Equal(t, int32(-1), tree.Nodes[0].Parent)
	assert.Equal(t, int32(len(tree.Nodes)), tree.Nodes[0].End)
	kids := tree.Children(0)
	require.Len(t, kids, 1)
	fn := kids[0]
	assert.Equal(t, "function_definition", tree.Nodes[fn].Type())
	assert.Equal(t, 1, tree.Nodes[fn].LastRow())
	var name string
	for _, c := range tree.Children(fn) {
		if tree.Nodes[c].Field() == "name" {
			name = tree.Text([]byte("def f(x):\n    return x\n"), c)
		}
	}
	assert.Equal(t, "f", name)

	bad, err := Parse(ctx, Go, []byte("func ( {"))
	require.NoError(t, err)
	assert.Positive(t, bad.Errors)

	_, err = Parse(ctx, Text, []byte("x"))
	assert.ErrorIs(t, err, ErrNotCode)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Parse(cancelled, Go, []byte("package x"))
	assert.ErrorIs(t, err, context.Canceled)
}

func TestParseEveryLanguage(t *testing.T) {
	samples := map[Language]string{
		Python:     "class A:\n    def f(self):\n        pass\n",
		Go:         "package a\n\nfunc F() int { return 1 }\n",
		JavaScript: "function f() { return 1; }\n",
		TypeScript: "function f(x: number): number { return x; }\n",
		TSX:        "const a = <div>{x}</div>;\n",
		Java:       "class A { int f() { return 1; } }\n",
		Rust:       "fn f() -> i32 { 1 }\n",
		C:          "int f(void) { return 1; }\n",
		CPP:        "namespace n { template <class T> T f(T x) { return x; } }\n",
	}
	for lang, src := range samples {
		tree, err := Parse(context.Background(), lang, []byte(src))
		require.NoError(t, err, lang)
		assert.Zero(t, tree.Errors, lang)
		assert.Greater(t, len(tree.Nodes), 3, lang)
	}
}

// TestParseDoesNotLeak parses 10,000 texts and checks that memory stays
// flat: tree-sitter allocates on the C heap, which Go's collector neither
// sees nor frees, so a forgotten Close shows up only here.
func TestParseDoesNotLeak(t *testing.T) {
	if runtime.GOOS != "linux" || cHeapInUse() < 0 {
		t.Skip("needs glibc and /proc/self/statm")
	}
	ctx := context.Background()
	src := []byte(strings.Repeat("def f(x):\n    if x:\n        return [x, x + 1]\n    return None\n", 4))
	parse := func(n int) {
		for i := 0; i < n; i++ {
			tree, err := Parse(ctx, Python, src)
			if err != nil || tree.Errors != 0 {
				t.Fatalf("parse %d: %v", i, err)
			}
		}
	}
	parse(200) // warm up allocator pools
	runtime.GC()
	rssBefore, cBefore := rssBytes(t), cHeapInUse()

	// go-tree-sitter also closes trees from finalizers, which would hide a
	// missing Close; with the collector off only explicit Closes free C
	// memory.
	old := debug.SetGCPercent(-1)
	parse(1000)
	cNoGC := cHeapInUse()
	debug.SetGCPercent(old)
	assert.Less(t, cNoGC-cBefore, int64(1<<20), "C heap grew without GC: a tree, cursor or parser is not closed")

	parse(10000)
	runtime.GC()
	rssAfter, cAfter := rssBytes(t), cHeapInUse()
	t.Logf("RSS %d -> %d KiB, C heap %d -> %d KiB", rssBefore>>10, rssAfter>>10, cBefore>>10, cAfter>>10)
	assert.Less(t, cAfter-cBefore, int64(1<<20))
	assert.Less(t, rssAfter-rssBefore, int64(32<<20))
}

func rssBytes(t *testing.T) int64 {
	t.Helper()
	data, err := readFile("/proc/self/statm")
	require.NoError(t, err)
	f := strings.Fields(data)
	require.GreaterOrEqual(t, len(f), 2)
	var pages int64
	for _, c := range f[1] {
		if c < '0' || c > '9' {
			require.FailNow(t, "bad statm")
		}
		pages = pages*10 + int64(c-'0')
	}
	return pages * int64(pageSize())
}

var errEmpty = errors.New("empty")
