// Package lines owns what the library calls a line: how a text is split
// into numbered lines (Split, the rule every front door, placeholder range
// and Result.Lines entry follows), the Python str.splitlines() rule that
// the SWE-Pruner compatibility mode alone follows (SplitPython), and how a
// line is printed with its number (AppendNumbered, as nl -ba does).
//
// Packages that need lines in another form (chunk maps token scores onto
// them; astrepair keeps 4-byte line ends for large texts) build on Split's
// rule and are tested against it.
package lines

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line is one line of a text. Offsets are bytes: text[Start:End] is the
// content without terminator and text[End:TermEnd] is the terminator ("\n",
// "\r\n" or empty for a last line without one; under SplitPython any of
// its line breaks).
type Line struct {
	// Number is the 1-based line number.
	Number int
	// Start and End delimit the line content.
	Start, End int
	// TermEnd is the end of the line including its terminator.
	TermEnd int
}

// Split splits text into lines the way cat -n, git and editors count them
// (SPEC §4): lines end at "\n" only; a "\r" right before the "\n" belongs
// to the terminator (so CRLF files number like LF files) while a lone "\r"
// is content; a final "\n" does not start an extra empty line; empty text
// has no lines. Concatenating text[l.Start:l.TermEnd] over all lines gives
// text back, byte for byte, whatever the bytes are.
func Split(text string) []Line {
	if text == "" {
		return nil
	}
	out := make([]Line, 0, strings.Count(text, "\n")+1)
	for start := 0; start < len(text); {
		nl := strings.IndexByte(text[start:], '\n')
		if nl < 0 {
			out = append(out, Line{Number: len(out) + 1, Start: start, End: len(text), TermEnd: len(text)})
			break
		}
		end := start + nl
		termEnd := end + 1
		if end > start && text[end-1] == '\r' {
			end--
		}
		out = append(out, Line{Number: len(out) + 1, Start: start, End: end, TermEnd: termEnd})
		start = termEnd
	}
	return out
}

// Count returns len(Split(text)) without building the lines.
func Count(text string) int {
	if text == "" {
		return 0
	}
	n := strings.Count(text, "\n")
	if text[len(text)-1] != '\n' {
		n++
	}
	return n
}

// IsPythonBreak reports whether r ends a line for Python's
// str.splitlines().
func IsPythonBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// SplitPython splits text as Python's str.splitlines() does, the rule of
// the SWE-Pruner reference: every one of \n, \r, \r\n, \v, \f, \x1c, \x1d,
// \x1e, \x85, \u2028 and \u2029 ends a line, and a final terminator does
// not start an empty line (so empty text has no lines). An invalid UTF-8
// byte is content. Only the SWE-Pruner compatibility mode numbers lines
// this way.
func SplitPython(text string) []Line {
	var out []Line
	start := 0
	for b := 0; b < len(text); {
		r, w := utf8.DecodeRuneInString(text[b:])
		if w == 1 && r == utf8.RuneError || !IsPythonBreak(r) {
			b += w
			continue
		}
		end := b
		b += w
		if r == '\r' && b < len(text) && text[b] == '\n' {
			b++
		}
		out = append(out, Line{Number: len(out) + 1, Start: start, End: end, TermEnd: b})
		start = b
	}
	if start < len(text) {
		out = append(out, Line{Number: len(out) + 1, Start: start, End: len(text), TermEnd: len(text)})
	}
	return out
}

// Contents returns the content of each line of text, without terminators.
func Contents(text string, ls []Line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = text[l.Start:l.End]
	}
	return out
}

// NumberWidth is the width of the number column of AppendNumbered.
const NumberWidth = 6

// AppendNumbered appends line to b as nl -ba prints it: its number
// right-aligned in NumberWidth columns and a tab; num ≤ 0 leaves the column
// blank (a placeholder, which stands for no one line). line is appended as
// given, terminator included.
func AppendNumbered(b []byte, num int, line string) []byte {
	var digits [20]byte
	d := digits[:0]
	if num > 0 {
		d = strconv.AppendInt(d, int64(num), 10)
	}
	for i := len(d); i < NumberWidth; i++ {
		b = append(b, ' ')
	}
	b = append(b, d...)
	b = append(b, '\t')
	return append(b, line...)
}
