package swecompat

import (
	"strconv"
	"strings"
)

// placeholderBaseLen is len("(filtered 0 lines)"): a filtered run with at
// most this many characters in its non-blank lines is cheaper to show than
// to replace.
const placeholderBaseLen = 18

func placeholder(n int) string {
	return "(filtered " + strconv.Itoa(n) + " lines)"
}

// keptSet marks 1-based line numbers of a text with lineCount lines;
// numbers outside [1, lineCount] are ignored.
func keptSet(kept []int, lineCount int) []bool {
	set := make([]bool, lineCount+1)
	for _, k := range kept {
		if k >= 1 && k <= lineCount {
			set[k] = true
		}
	}
	return set
}

// selectLines returns the 1-based lines kept by score: line n is kept when
// n <= first, n >= lastFrom, or its score is present and >= threshold.
func selectLines(lineCount int, lineScores map[int]float64, threshold float64, first, lastFrom int) []int {
	kept := make([]int, 0, lineCount)
	for n := 1; n <= lineCount; n++ {
		s, ok := lineScores[n]
		if n <= first || n >= lastFrom || ok && s >= threshold {
			kept = append(kept, n)
		}
	}
	return kept
}

// PruneLines is SWE-Pruner's prune_code_lines: KeptLines, then RenderLines
// of them. keptLines is the reference's kept_frags.
func PruneLines(text string, lineScores map[int]float64, threshold float64, alwaysKeepFirst bool) (keptLines []int, pruned string) {
	keptLines = KeptLines(text, lineScores, threshold, alwaysKeepFirst)
	return keptLines, RenderLines(text, keptLines)
}

// KeptLines is the selection half of SWE-Pruner's prune_code_lines. It keeps
// the lines (Python splitlines() numbering, 1-based) whose score is at least
// threshold, and line 1 when alwaysKeepFirst; then, in one pass over the
// kept lines, it adds the line between every two kept lines that are two
// apart. The result is sorted and includes those added lines.
func KeptLines(text string, lineScores map[int]float64, threshold float64, alwaysKeepFirst bool) []int {
	return KeptLinesAlways(text, lineScores, threshold, func(n int) bool { return alwaysKeepFirst && n == 1 })
}

// KeptLinesAlways is KeptLines with any line kept whatever its score when
// always(n) is true, as the service keeps its first line: the library's
// keep options (the last line, lines matching a pattern) under the
// service's selection and gap filling. always may be nil.
func KeptLinesAlways(text string, lineScores map[int]float64, threshold float64, always func(n int) bool) []int {
	lineCount := len(splitPy(text))
	kept := make([]int, 0, lineCount)
	for n := 1; n <= lineCount; n++ {
		s, ok := lineScores[n]
		if always != nil && always(n) || ok && s >= threshold {
			kept = append(kept, n)
		}
	}
	// Selected lines are ascending, so each gap line lands in order.
	filled := make([]int, 0, len(kept)*2)
	for i, k := range kept {
		if i > 0 && k-kept[i-1] == 2 {
			filled = append(filled, k-1)
		}
		filled = append(filled, k)
	}
	return filled
}

// RenderLines is the rendering half of SWE-Pruner's prune_code_lines for the
// given kept lines (1-based). Blank lines (Python strip() == "") count as
// filtered even when kept. A run of filtered lines before a kept line is
// re-emitted verbatim when its non-blank lines hold at most 18 characters in
// total, else replaced by "(filtered N lines)" (N counts the blank lines
// too); a trailing run always becomes a placeholder. Lines are joined with
// "\n", whatever their original terminators.
func RenderLines(text string, keptLines []int) string {
	out, _ := RenderLinesMapped(text, keptLines)
	return out
}

// Placeholder is one "(filtered N lines)" line of a rendering: its 1-based
// line in the output and the 1-based input lines (Python splitlines
// numbering) it stands for.
type Placeholder struct {
	OutputLine, FirstLine, LastLine int
}

// RenderLinesMapped is RenderLines that also returns where each placeholder
// is and what it replaces; every other output line is an input line, in
// order (kept lines and re-emitted short runs).
func RenderLinesMapped(text string, keptLines []int) (string, []Placeholder) {
	lines := splitPy(text)
	kept := keptSet(keptLines, len(lines))
	var out []string
	var phs []Placeholder
	emitPlaceholder := func(first, n int) {
		out = append(out, placeholder(n))
		phs = append(phs, Placeholder{OutputLine: len(out), FirstLine: first, LastLine: first + n - 1})
	}
	filtered, chars := 0, 0
	for i, l := range lines {
		line := text[l.start:l.end]
		if isBlank(line) {
			filtered++
			continue
		}
		if !kept[i+1] {
			filtered++
			chars += l.cps
			continue
		}
		if filtered > 0 {
			if chars > placeholderBaseLen {
				emitPlaceholder(i+1-filtered, filtered)
			} else {
				for _, f := range lines[i-filtered : i] {
					out = append(out, text[f.start:f.end])
				}
			}
			filtered, chars = 0, 0
		}
		out = append(out, line)
	}
	if filtered > 0 {
		emitPlaceholder(len(lines)+1-filtered, filtered)
	}
	return strings.Join(out, "\n"), phs
}

// PruneLinesFork is the LaMR fork's prune_code_lines without AST repair
// (ast_graph=None): it keeps the lines whose score is at least threshold,
// line 1 when alwaysKeepFirst and the last line when alwaysKeepLast, with no
// gap filling, and renders them with RenderFork.
func PruneLinesFork(text string, lineScores map[int]float64, threshold float64, alwaysKeepFirst, alwaysKeepLast bool) (keptLines []int, pruned string) {
	lineCount := len(splitPy(text))
	first, lastFrom := 0, lineCount+1
	if alwaysKeepFirst {
		first = 1
	}
	if alwaysKeepLast {
		lastFrom = max(1, lineCount)
	}
	kept := selectLines(lineCount, lineScores, threshold, first, lastFrom)
	return kept, RenderFork(text, kept)
}

// RenderFork is the LaMR fork's rendering without AST information. Blank
// lines count as filtered even when kept. Each run of filtered lines becomes
// one line "<indent># (filtered N lines)", indent being the leading
// whitespace of the run's first line. When the last kept line before the run
// ends with ":" (after trailing whitespace) and the next kept line is not
// indented deeper (or there is none), the run becomes "<indent>pass  #
// (filtered N lines)" instead, with the indent pushed to the header's
// indent plus four spaces if it is not deeper than the header. Indent widths
// expand tabs to 4 columns. Lines are joined with "\n". Given kept lines
// from the fork's AST repair, the output matches the fork except where the
// fork takes the "pass" indent from a multi-line suite header's first line,
// which needs the AST.
func RenderFork(text string, keptLines []int) string {
	lines := splitPy(text)
	kept := keptSet(keptLines, len(lines))
	lineText := func(i int) string { return text[lines[i].start:lines[i].end] }
	var out []string
	filtered, runStart, lastKept := 0, -1, -1
	flush := func(next int) {
		indent := leadingSpace(lineText(runStart))
		ph := "# " + placeholder(filtered)
		if lastKept >= 0 {
			prev := lineText(lastKept)
			prevIndent := indentWidth(prev)
			nextIndent := -1
			if next >= 0 {
				nextIndent = indentWidth(lineText(next))
			}
			if endsWithColon(prev) && (next < 0 || nextIndent <= prevIndent) {
				if indentWidth(indent) <= prevIndent {
					indent = leadingSpace(prev) + "    "
				}
				ph = "pass  # " + placeholder(filtered)
			}
		}
		out = append(out, indent+ph)
		filtered, runStart = 0, -1
	}
	for i := range lines {
		line := lineText(i)
		if isBlank(line) || !kept[i+1] {
			filtered++
			if runStart < 0 {
				runStart = i
			}
			continue
		}
		if filtered > 0 {
			flush(i)
		}
		out = append(out, line)
		lastKept = i
	}
	if filtered > 0 {
		flush(-1)
	}
	return strings.Join(out, "\n")
}
