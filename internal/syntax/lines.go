package syntax

// Line is one line of a text under the library's line rule: lines end at
// '\n' only, a '\r' right before the '\n' belongs to the terminator, a lone
// '\r' is content, and there is no empty line after a final '\n'.
type Line struct {
	// Start and End delimit the content bytes; the terminator follows.
	Start, End int
	// TermEnd is one past the terminator ("\n" or "\r\n"); equals End for a
	// final line without terminator.
	TermEnd int
}

// SplitLines returns the lines of text. Empty text has zero lines.
func SplitLines(text string) []Line {
	var out []Line
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '\n' {
			continue
		}
		end := i
		if end > start && text[end-1] == '\r' {
			end--
		}
		out = append(out, Line{Start: start, End: end, TermEnd: i + 1})
		start = i + 1
	}
	if start < len(text) {
		out = append(out, Line{Start: start, End: len(text), TermEnd: len(text)})
	}
	return out
}
