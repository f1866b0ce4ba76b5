package syntax

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/testcorpus"
)

// oldSignals are the detection regexps as they ran before anchors and
// line-local matching (commit 349a111): every signal over the whole
// window. The new counting must give the same count for every signal.
var oldSignals = []struct {
	lang Language
	re   *regexp.Regexp
	w    int
}{
	{Python, regexp.MustCompile(`(?m)^\s*def \w+\(.*\)\s*(->.*)?:\s*$`), 4},
	{Python, regexp.MustCompile(`(?m)^\s*class \w+(\(.*\))?:\s*$`), 4},
	{Python, regexp.MustCompile(`(?m)^(from [\w.]+ import |import \w+(\.\w+)*\s*$)`), 3},
	{Python, regexp.MustCompile(`(?m)^\s*(elif .*|else|try|finally|except.*):\s*$`), 3},
	{Python, regexp.MustCompile(`\bself\.\w+`), 1},
	{Go, regexp.MustCompile(`(?m)^package \w+\s*$`), 6},
	{Go, regexp.MustCompile(`(?m)^func (\([^)]*\) )?\w+\(`), 5},
	{Go, regexp.MustCompile(`\w+ := `), 1},
	{Go, regexp.MustCompile(`(?m)^\s*if err != nil \{`), 3},
	{Java, regexp.MustCompile(`(?m)^\s*(public |private |protected )?(abstract |final )?(class|interface|enum|record) \w+`), 3},
	{Java, regexp.MustCompile(`(?m)^import (static )?[\w.]+(\.\*)?;\s*$`), 4},
	{Java, regexp.MustCompile(`(?m)^package [\w.]+;\s*$`), 5},
	{Java, regexp.MustCompile(`\b(public|private|protected) (static )?(final )?[\w<>\[\]]+ \w+\(`), 3},
	{Java, regexp.MustCompile(`System\.out\.|@Override`), 3},
	{Rust, regexp.MustCompile(`(?m)^\s*(pub(\(\w+\))? )?((const|unsafe|async|extern "C") )*fn \w+`), 5},
	{Rust, regexp.MustCompile(`(?m)^\s*(pub )?use [\w:{}, *]+;\s*$`), 3},
	{Rust, regexp.MustCompile(`\blet mut \w+|\blet \w+: [\w<>&]+ =|\bimpl(<.*>)? \w+|(?m)^\s*#!?\[\w+|&mut self|&self\b|\bpub(\(crate\))? (struct|enum|trait|mod) `), 3},
	{C, regexp.MustCompile(`(?m)^#include [<"][\w/.]+\.h[>"]`), 3},
	{C, regexp.MustCompile(`(?m)^(static )?(int|void|char|unsigned|long|size_t|struct \w+) \**\w+\(`), 2},
	{C, regexp.MustCompile(`\b(malloc|free|printf|sizeof)\(`), 1},
	{CPP, regexp.MustCompile(`(?m)^#include <\w+>`), 3},
	{CPP, regexp.MustCompile(`\bstd::\w+[<(: ]|\bnamespace \w+\s*\{|\btemplate\s*<|(?m)^\s*(public|private|protected):`), 4},
	{JavaScript, regexp.MustCompile(`(?m)^\s*(export )?(async )?function\*? ?\w*\(`), 3},
	{JavaScript, regexp.MustCompile(`(?m)^\s*(const|let|var) \w+ = (require\(|\(.*\) =>|async )`), 3},
	{JavaScript, regexp.MustCompile(`(?m)^(import .* from ['"]|export (default |const |function |class ))`), 3},
	{JavaScript, regexp.MustCompile(`console\.log\(|===|!==|module\.exports|document\.|window\.`), 2},
	{JavaScript, regexp.MustCompile(`(?m)^\s*(const|let|var) \w+ = |=> \{|\bfunction\s*\(`), 1},
	{TypeScript, regexp.MustCompile(`(?m)^\s*(export )?(interface|type) \w+(<.*>)? (=|\{)`), 4},
	{TypeScript, regexp.MustCompile(`\w\??: (string|number|boolean|any|void|unknown)\b`), 3},
	{TypeScript, regexp.MustCompile(`(?m)^\s*(public|private|readonly) \w+:`), 2},
}

// detectCorpus returns code and tool-output texts to compare detection on:
// the repair test files, the in-repository corpus, the shared eval sets
// where ../shared is beside the repository and, with -long, the training
// data.
func detectCorpus(t *testing.T) []string {
	var texts []string
	files, _ := filepath.Glob(filepath.Join("..", "..", "astrepair", "testdata", "clean", "*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		texts = append(texts, string(data))
	}
	rel := []string{"evalsets/dev", "evalsets/questions"}
	if *long {
		rel = append(rel, "traindata")
	}
	cases, err := testcorpus.Cases(rel...)
	require.NoError(t, err)
	for _, c := range cases {
		texts = append(texts, c.Text)
	}
	if _, ok := testcorpus.Shared("evalsets"); ok {
		require.Greater(t, len(texts), 400, "the shared eval sets are read")
	} else {
		t.Logf("%d texts: the in-repository corpus only; %s", len(texts), testcorpus.SkipReason("evalsets"))
		require.Greater(t, len(texts), 60)
	}
	return texts
}

// TestSignalCountsUnchanged compares every signal's count with the
// whole-window regexps on every corpus text, in the window Detect uses, and
// on a few edge cases (CRLF, blank lines, Allman braces).
func TestSignalCountsUnchanged(t *testing.T) {
	require.Len(t, signals, len(oldSignals))
	texts := append(detectCorpus(t),
		"def f(x):\r\n    return self.x\r\n",
		"\n\n\ndef f():\n\n\n    pass\n",
		"namespace a\n{\ntemplate\n<class T> T f();\n}\n",
		"func (r\n*T) M() {}\n",
		"x := 1; y := 2; z := 3\nself.a self.b\n",
	)
	for i, text := range texts {
		window := text
		if len(window) > detectWindow {
			window = window[:detectWindow]
		}
		body := stripComments(window)
		for j := range signals {
			require.Equal(t, signals[j].lang, oldSignals[j].lang)
			want := len(oldSignals[j].re.FindAllStringIndex(body, 20))
			if got := signals[j].count(body); got != want {
				t.Errorf("text %d, signal %d (%s %s): %d matches, want %d", i, j, signals[j].lang, signals[j].re, got, want)
			}
		}
	}
	t.Logf("%d texts", len(texts))
}
