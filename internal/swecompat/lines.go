package swecompat

import (
	"unicode/utf8"

	"github.com/prunekit/pruner/internal/lines"
)

// pyLine is one line of Python's str.splitlines(): text[start:end] without
// its terminator, cps code points long.
type pyLine struct {
	start, end int
	cps        int
}

// isSpace is Python's str.isspace() for one character (the CPython 3.11 set).
// Unlike unicode.IsSpace it includes the separators \x1c-\x1f.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\x1c', '\x1d', '\x1e', '\x1f', ' ',
		'\u0085', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000':
		return true
	}
	return r >= '\u2000' && r <= '\u200a'
}

// splitPy splits text as str.splitlines() (lines.SplitPython) and counts
// each line's code points.
func splitPy(text string) []pyLine {
	ls := lines.SplitPython(text)
	out := make([]pyLine, len(ls))
	for i, l := range ls {
		out[i] = pyLine{start: l.Start, end: l.End, cps: utf8.RuneCountInString(text[l.Start:l.End])}
	}
	return out
}

// SplitLines returns the lines of text as Python's str.splitlines(): it
// splits on \n, \r, \r\n, \v, \f, \x1c, \x1d, \x1e, \x85, \u2028 and \u2029,
// drops the terminators and does not add an empty line after a final
// terminator (so empty text has no lines).
func SplitLines(text string) []string {
	ls := splitPy(text)
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = text[l.start:l.end]
	}
	return out
}

// isBlank reports whether s.strip() == "" in Python.
func isBlank(s string) bool {
	for b := 0; b < len(s); {
		r, w := utf8.DecodeRuneInString(s[b:])
		if w == 1 && r == utf8.RuneError || !isSpace(r) {
			return false
		}
		b += w
	}
	return true
}

// leadingSpace returns s[:len(s)-len(s.lstrip())] in Python terms.
func leadingSpace(s string) string {
	for b := 0; b < len(s); {
		r, w := utf8.DecodeRuneInString(s[b:])
		if w == 1 && r == utf8.RuneError || !isSpace(r) {
			return s[:b]
		}
		b += w
	}
	return s
}

// endsWithColon reports whether s.rstrip().endswith(":") in Python.
func endsWithColon(s string) bool {
	for len(s) > 0 {
		r, w := utf8.DecodeLastRuneInString(s)
		if w == 1 && r == utf8.RuneError || !isSpace(r) {
			return r == ':'
		}
		s = s[:len(s)-w]
	}
	return false
}

// indentWidth is the fork's _indent_width: the number of leading spaces of
// s.expandtabs(4). Lines never hold \r or \n, so columns only grow.
func indentWidth(s string) int {
	col := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}
