// Package syntax detects the language of a text and parses it with
// tree-sitter into a plain Go tree, so that callers never hold C memory.
package syntax

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Language names a programming language the library can parse. The zero
// value, Text, stands for text that is not code (logs, grep output, JSON,
// diffs, prose) and skips the syntax pass.
type Language string

// The languages known to the library.
const (
	Text       Language = ""
	Python     Language = "python"
	Go         Language = "go"
	JavaScript Language = "javascript"
	TypeScript Language = "typescript"
	TSX        Language = "tsx"
	Java       Language = "java"
	Rust       Language = "rust"
	C          Language = "c"
	CPP        Language = "cpp"
)

// ErrUnknownLanguage is returned when a language name or alias is not
// recognised.
var ErrUnknownLanguage = errors.New("syntax: unknown language")

// Languages lists every parseable language, in a stable order.
func Languages() []Language {
	return []Language{Python, Go, JavaScript, TypeScript, TSX, Java, Rust, C, CPP}
}

// IsCode reports whether l is a parseable programming language.
func (l Language) IsCode() bool {
	switch l {
	case Python, Go, JavaScript, TypeScript, TSX, Java, Rust, C, CPP:
		return true
	}
	return false
}

// String returns the canonical name, or "text" for non-code.
func (l Language) String() string {
	if l == Text {
		return "text"
	}
	return string(l)
}

// LineComment returns the token that starts a line comment in l, or ""
// for non-code text.
func (l Language) LineComment() string {
	switch l {
	case Python:
		return "#"
	case Text:
		return ""
	}
	if l.IsCode() {
		return "//"
	}
	return ""
}

// ParseLanguage maps a user-supplied name or common alias (case-insensitive,
// e.g. "py", "golang", "js", "ts", "c++", "text") to a Language. Unknown
// names yield an error wrapping ErrUnknownLanguage.
func ParseLanguage(name string) (Language, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	key = strings.TrimPrefix(key, ".")
	switch key {
	case "python", "py", "python3", "py3":
		return Python, nil
	case "go", "golang":
		return Go, nil
	case "javascript", "js", "jsx", "node", "mjs", "cjs", "ecmascript":
		return JavaScript, nil
	case "typescript", "ts", "mts", "cts":
		return TypeScript, nil
	case "tsx":
		return TSX, nil
	case "java":
		return Java, nil
	case "rust", "rs":
		return Rust, nil
	case "c", "h":
		return C, nil
	case "cpp", "c++", "cxx", "cc", "hpp", "hh", "hxx", "cplusplus":
		return CPP, nil
	case "text", "txt", "plain", "plaintext", "none", "log", "json", "diff":
		return Text, nil
	}
	return Text, fmt.Errorf("%w: %q", ErrUnknownLanguage, name)
}

// extLanguage maps file extensions to languages; ok is false for an unknown
// extension. Extensions of well-known non-code formats map to Text with ok.
func extLanguage(filename string) (Language, bool) {
	ext := strings.ToLower(filepath.Ext(filename))
	switch ext {
	case ".py", ".pyi", ".pyw":
		return Python, true
	case ".go":
		return Go, true
	case ".js", ".jsx", ".mjs", ".cjs":
		return JavaScript, true
	case ".ts", ".mts", ".cts":
		return TypeScript, true
	case ".tsx":
		return TSX, true
	case ".java":
		return Java, true
	case ".rs":
		return Rust, true
	case ".c":
		return C, true
	case ".h":
		// Headers are shared by C and C++; C++ is the superset grammar, but
		// plain C headers parse as C more reliably, so content decides later.
		return C, false
	case ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp":
		return CPP, true
	case ".json", ".jsonl", ".log", ".txt", ".md", ".rst", ".diff", ".patch",
		".yaml", ".yml", ".toml", ".ini", ".csv", ".tsv", ".xml", ".html", ".out":
		return Text, true
	}
	return Text, false
}
