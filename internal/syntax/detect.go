package syntax

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// detectWindow bounds how much of a text Detect looks at, so detection
// stays cheap on multi-megabyte inputs.
const detectWindow = 16 << 10

var (
	// grepLine matches "path:line:" or "path-line-" prefixes of grep -n
	// output and "path:line:col:" of compiler diagnostics.
	grepLine = regexp.MustCompile(`^[^\s:]+[:-]\d+[:-]`)
	// logLine matches lines that open with a timestamp or a log level.
	logLine = regexp.MustCompile(`^(\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{2}:\d{2}:\d{2}|\[?(?i:trace|debug|info|warn|warning|error|fatal|critical)\]?[\s:]|[IWEF]\d{4} )`)
	// diffLine matches unified-diff structure lines.
	diffLine = regexp.MustCompile(`^(diff --git |index [0-9a-f]+\.\.|--- |\+\+\+ |@@ -\d)`)
)

// signal is one content cue for a language and its weight.
type signal struct {
	lang   Language
	re     *regexp.Regexp
	weight int
}

var signals = []signal{
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

// Detect guesses the language of text. A file name hint with a known
// extension wins (".json", ".log" and similar map to Text); otherwise the
// content decides. Text that looks like logs, grep or compiler output,
// diffs or JSON is Text even when it quotes code.
func Detect(text, filename string) Language {
	if filename != "" {
		if l, ok := extLanguage(filename); ok {
			if l == TypeScript && tsxHint(text) {
				return TSX
			}
			return l
		}
	}
	window := text
	if len(window) > detectWindow {
		window = window[:detectWindow]
		// Do not cut a UTF-8 sequence; invalid tails only confuse regexps.
		for len(window) > 0 && !utf8.ValidString(window[len(window)-1:]) && window[len(window)-1] >= 0x80 {
			window = window[:len(window)-1]
		}
	}
	if strings.TrimSpace(window) == "" || looksLikeText(window) {
		return Text
	}
	scores := map[Language]int{}
	body := stripComments(window)
	for _, s := range signals {
		n := len(s.re.FindAllStringIndex(body, 20))
		scores[s.lang] += n * s.weight
	}
	// TypeScript is a superset of JavaScript: its cues add to the shared
	// base, and C++ cues add to C's.
	scores[TypeScript] += scores[JavaScript]
	scores[CPP] += scores[C]
	best, bestScore := Text, 0
	for _, l := range []Language{Python, Go, Java, Rust, CPP, C, TypeScript, JavaScript} {
		if scores[l] > bestScore {
			best, bestScore = l, scores[l]
		}
	}
	if bestScore < 3 {
		return Text
	}
	if best == TypeScript && scores[TypeScript] == scores[JavaScript] {
		best = JavaScript
	}
	if best == CPP && scores[CPP] == scores[C] {
		best = C
	}
	if filename != "" && strings.HasSuffix(strings.ToLower(filename), ".h") && best != CPP {
		return C
	}
	if (best == TypeScript || best == JavaScript) && tsxHint(window) && best == TypeScript {
		return TSX
	}
	return best
}

// tsxHint reports JSX-looking markup, which the plain TypeScript grammar
// rejects.
func tsxHint(text string) bool {
	if len(text) > detectWindow {
		text = text[:detectWindow]
	}
	return strings.Contains(text, "</") && (strings.Contains(text, "return (") || strings.Contains(text, "/>"))
}

// looksLikeText recognises tool output that quotes code but is not code:
// when most non-blank lines are grep hits, log records or diff structure,
// or the whole text is a JSON document.
func looksLikeText(window string) bool {
	trimmed := strings.TrimSpace(window)
	if (strings.HasPrefix(trimmed, "{") && strings.Contains(trimmed, "\":")) ||
		(strings.HasPrefix(trimmed, "[") && (strings.HasPrefix(trimmed[1:], "{") || strings.HasPrefix(strings.TrimSpace(trimmed[1:]), "{") || strings.HasPrefix(strings.TrimSpace(trimmed[1:]), "\""))) {
		return true
	}
	total, grep, logs, diff := 0, 0, 0, 0
	for _, ln := range strings.Split(window, "\n") {
		ln = strings.TrimRight(ln, "\r")
		if strings.TrimSpace(ln) == "" {
			continue
		}
		total++
		switch {
		case diffLine.MatchString(ln):
			diff += 3
		case grepLine.MatchString(ln):
			grep++
		case logLine.MatchString(ln):
			logs++
		}
		if total >= 400 {
			break
		}
	}
	if total == 0 {
		return true
	}
	return grep*2 > total || logs*2 > total || diff >= 3 && diff*4 > total
}

// stripComments drops whole-line comments, whose prose and commented-out
// code would otherwise vote for the wrong language. "#" lines go only when
// followed by a space, so C preprocessor lines survive.
func stripComments(window string) string {
	var sb strings.Builder
	sb.Grow(len(window))
	for _, ln := range strings.SplitAfter(window, "\n") {
		t := strings.TrimLeft(ln, " \t")
		if strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "* ") ||
			strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "#!") && !strings.HasPrefix(t, "#![") {
			continue
		}
		sb.WriteString(ln)
	}
	return sb.String()
}
