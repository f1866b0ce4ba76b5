package syntax

import (
	"context"
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

// signal is one content cue for a language and its weight. Every match of
// re contains one of anchors, so a text without any of them has no match
// and the regexp, the costly part of detection, is not run. A line signal
// never matches across a line break, so it runs only on the lines that
// hold an anchor; the others run on the whole window.
type signal struct {
	lang    Language
	re      *regexp.Regexp
	weight  int
	anchors []string
	line    bool
}

func lineSig(l Language, re string, w int, anchors ...string) signal {
	return signal{l, regexp.MustCompile(re), w, anchors, true}
}

func textSig(l Language, re string, w int, anchors ...string) signal {
	return signal{l, regexp.MustCompile(re), w, anchors, false}
}

// maxSignalMatches caps the matches one signal counts, so a long file of
// one construct does not outvote everything else.
const maxSignalMatches = 20

var signals = []signal{
	lineSig(Python, `(?m)^\s*def \w+\(.*\)\s*(->.*)?:\s*$`, 4, "def "),
	lineSig(Python, `(?m)^\s*class \w+(\(.*\))?:\s*$`, 4, "class "),
	lineSig(Python, `(?m)^(from [\w.]+ import |import \w+(\.\w+)*\s*$)`, 3, "import "),
	lineSig(Python, `(?m)^\s*(elif .*|else|try|finally|except.*):\s*$`, 3, "elif ", "else", "try", "finally", "except"),
	lineSig(Python, `\bself\.\w+`, 1, "self."),
	lineSig(Go, `(?m)^package \w+\s*$`, 6, "package "),
	textSig(Go, `(?m)^func (\([^)]*\) )?\w+\(`, 5, "func "),
	lineSig(Go, `\w+ := `, 1, " := "),
	lineSig(Go, `(?m)^\s*if err != nil \{`, 3, "if err != nil {"),
	lineSig(Java, `(?m)^\s*(public |private |protected )?(abstract |final )?(class|interface|enum|record) \w+`, 3, "class ", "interface ", "enum ", "record "),
	lineSig(Java, `(?m)^import (static )?[\w.]+(\.\*)?;\s*$`, 4, "import "),
	lineSig(Java, `(?m)^package [\w.]+;\s*$`, 5, "package "),
	lineSig(Java, `\b(public|private|protected) (static )?(final )?[\w<>\[\]]+ \w+\(`, 3, "public ", "private ", "protected "),
	lineSig(Java, `System\.out\.|@Override`, 3, "System.out.", "@Override"),
	lineSig(Rust, `(?m)^\s*(pub(\(\w+\))? )?((const|unsafe|async|extern "C") )*fn \w+`, 5, "fn "),
	lineSig(Rust, `(?m)^\s*(pub )?use [\w:{}, *]+;\s*$`, 3, "use "),
	lineSig(Rust, `\blet mut \w+|\blet \w+: [\w<>&]+ =|\bimpl(<.*>)? \w+|(?m)^\s*#!?\[\w+|&mut self|&self\b|\bpub(\(crate\))? (struct|enum|trait|mod) `, 3, "let ", "impl", "#", "&mut self", "&self", "pub"),
	lineSig(C, `(?m)^#include [<"][\w/.]+\.h[>"]`, 3, "#include "),
	lineSig(C, `(?m)^(static )?(int|void|char|unsigned|long|size_t|struct \w+) \**\w+\(`, 2, "int", "void", "char", "unsigned", "long", "size_t", "struct "),
	lineSig(C, `\b(malloc|free|printf|sizeof)\(`, 1, "malloc(", "free(", "printf(", "sizeof("),
	lineSig(CPP, `(?m)^#include <\w+>`, 3, "#include <"),
	textSig(CPP, `\bstd::\w+[<(: ]|\bnamespace \w+\s*\{|\btemplate\s*<|(?m)^\s*(public|private|protected):`, 4, "std::", "namespace ", "template", "public", "private", "protected"),
	lineSig(JavaScript, `(?m)^\s*(export )?(async )?function\*? ?\w*\(`, 3, "function"),
	lineSig(JavaScript, `(?m)^\s*(const|let|var) \w+ = (require\(|\(.*\) =>|async )`, 3, "const ", "let ", "var "),
	lineSig(JavaScript, `(?m)^(import .* from ['"]|export (default |const |function |class ))`, 3, "import ", "export "),
	lineSig(JavaScript, `console\.log\(|===|!==|module\.exports|document\.|window\.`, 2, "console.log(", "===", "!==", "module.exports", "document.", "window."),
	textSig(JavaScript, `(?m)^\s*(const|let|var) \w+ = |=> \{|\bfunction\s*\(`, 1, "const ", "let ", "var ", "=> {", "function"),
	lineSig(TypeScript, `(?m)^\s*(export )?(interface|type) \w+(<.*>)? (=|\{)`, 4, "interface ", "type "),
	lineSig(TypeScript, `\w\??: (string|number|boolean|any|void|unknown)\b`, 3, ": string", ": number", ": boolean", ": any", ": void", ": unknown"),
	lineSig(TypeScript, `(?m)^\s*(public|private|readonly) \w+:`, 2, "public ", "private ", "readonly "),
}

// count returns how many times s matches body, at most maxSignalMatches.
func (s *signal) count(body string) int {
	if !s.line {
		if !containsAny(body, s.anchors) {
			return 0
		}
		return len(s.re.FindAllStringIndex(body, maxSignalMatches))
	}
	n := 0
	for rest := body; rest != "" && n < maxSignalMatches; {
		// Jump to the next line holding an anchor.
		at := indexAny(rest, s.anchors)
		if at < 0 {
			break
		}
		start := strings.LastIndexByte(rest[:at], '\n') + 1
		end := strings.IndexByte(rest[at:], '\n')
		if end < 0 {
			end = len(rest)
		} else {
			end += at
		}
		n += len(s.re.FindAllStringIndex(rest[start:end], maxSignalMatches-n))
		if end == len(rest) {
			break
		}
		rest = rest[end+1:]
	}
	return n
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// indexAny returns the smallest index of any of subs in s, or -1.
func indexAny(s string, subs []string) int {
	best := -1
	for _, sub := range subs {
		lim := s
		if best >= 0 {
			lim = s[:min(len(s), best+len(sub))]
		}
		if i := strings.Index(lim, sub); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
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
	for i := range signals {
		scores[signals[i].lang] += signals[i].count(body) * signals[i].weight
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

// maxDetectErrors is the most ERROR and MISSING nodes per 100 lines a
// parse of the detection window may hold for content detection's answer
// to stand. Chosen on the val splits without their file names: of 1,565
// texts of real code (labelled code questions, commit cases, mined
// questions) 31 exceed it (2%), all windows cut mid-construct; of the 142
// tool outputs content detection calls code (git blame and test logs
// quoting code, among 775) 127 do (89%), at up to 460 errors per 100
// lines. Text taken for code costs far more than code taken for text:
// the repair pass then keeps whole runs of it as the rest of a statement.
const maxDetectErrors = 20

// Named reports whether filename's extension decides the language, so
// that Detect does not read the content.
func Named(filename string) bool {
	if filename == "" {
		return false
	}
	_, ok := extLanguage(filename)
	return ok
}

// Plausible reports whether a parse of text (or of a prefix of it, whose
// lines count) holds at most maxDetectErrors ERROR and MISSING nodes per
// 100 lines: whether text can be the language content detection said.
func Plausible(t *Tree, text string) bool {
	lines := strings.Count(text, "\n") + 1
	return 100*t.Errors <= maxDetectErrors*lines
}

// DetectParsed is Detect, with content detection confirmed by the
// grammar it names (Confirm). A file name's language is trusted.
func DetectParsed(ctx context.Context, text, filename string) Language {
	lang := Detect(text, filename)
	if Named(filename) {
		return lang
	}
	return Confirm(ctx, text, lang)
}

// Confirm returns lang when the detection window of text parses as it
// (Plausible), else Text; a lang that is not code, or a window that cannot
// be parsed, is returned as it is.
func Confirm(ctx context.Context, text string, lang Language) Language {
	if !lang.IsCode() {
		return lang
	}
	window := text
	if len(window) > detectWindow {
		window = window[:detectWindow]
		// A cut line would count as an error of its own.
		if nl := strings.LastIndexByte(window, '\n'); nl > 0 {
			window = window[:nl+1]
		}
	}
	t, err := Parse(ctx, lang, []byte(window))
	if err != nil || t == nil {
		return lang
	}
	if !Plausible(t, window) {
		return Text
	}
	return lang
}
