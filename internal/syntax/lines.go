package syntax

import "github.com/prunekit/pruner/chunk"

// Line is one line of a text under the library's line rule (SPEC §4): lines
// end at '\n' only, a '\r' right before the '\n' belongs to the terminator, a
// lone '\r' is content, and there is no empty line after a final '\n'.
type Line = chunk.Line

// SplitLines returns the lines of text (chunk.SplitLines; one rule for the
// whole library). Empty text has zero lines.
func SplitLines(text string) []Line { return chunk.SplitLines(text) }
