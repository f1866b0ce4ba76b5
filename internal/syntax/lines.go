package syntax

import "github.com/prunekit/pruner/internal/lines"

// Line is one line of a text under the library's line rule (SPEC §4): lines
// end at '\n' only, a '\r' right before the '\n' belongs to the terminator, a
// lone '\r' is content, and there is no empty line after a final '\n'.
type Line = lines.Line

// SplitLines returns the lines of text (lines.Split; one rule for the
// whole library). Empty text has zero lines.
func SplitLines(text string) []Line { return lines.Split(text) }
