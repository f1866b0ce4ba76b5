package chunk

import (
	"math"
	"unicode/utf8"

	"github.com/prunekit/pruner/internal/lines"
)

// Line is one line of a text as the library numbers them (SPEC §4; the
// rule is package internal/lines's). Offsets are bytes: text[Start:End] is
// the content without terminator and text[End:TermEnd] is the terminator
// ("\n", "\r\n" or empty for a last line without one).
type Line = lines.Line

// SplitLines splits text into lines the way cat -n, git and editors count
// them: lines end at "\n" only; a "\r" right before the "\n" belongs to the
// terminator (so CRLF files number like LF files) while a lone "\r" is
// content; a final "\n" does not start an extra empty line; empty text has no
// lines. Concatenating text[l.Start:l.TermEnd] over all lines gives text back,
// byte for byte, whatever the bytes are.
func SplitLines(text string) []Line { return lines.Split(text) }

// CountLines returns len(SplitLines(text)) without building the lines.
func CountLines(text string) int { return lines.Count(text) }

// LineScores computes the library's line scores of text from token scores
// given as byte spans of text (see SpansToBytes), for lines of the same text
// (from SplitLines).
//
// The rule: a character is a code point of a line's content (the terminator
// is not part of the line; an invalid UTF-8 byte is one character). A span
// covers every character it overlaps by at least one byte, so a token
// holding part of a multi-byte character covers the whole character. Spans
// are applied in order and a later span overwrites an earlier one (as the
// reference does); scores are clamped to [0, 1] and NaN scores are skipped.
// A line's score is the mean over its covered characters, so every character
// weighs the same. covered[i] reports whether any character of lines[i] is
// covered; scores[i] is 0 when it is not.
func LineScores(text string, lines []Line, spans []ScoredSpan) (scores []float64, covered []bool) {
	scores = make([]float64, len(lines))
	covered = make([]bool, len(lines))
	if len(lines) == 0 {
		return scores, covered
	}
	counts := make([]int, len(lines))
	if sortedDisjoint(text, lines, spans) {
		sweepLineScores(text, lines, spans, scores, counts)
	} else {
		paintLineScores(text, lines, spans, scores, counts)
	}
	for i, n := range counts {
		if n > 0 {
			scores[i] /= float64(n)
			covered[i] = true
		}
	}
	return scores, covered
}

// usableSpan returns the byte range a span covers, widened at the start to
// a character boundary, its clamped score, and false for a span that covers
// nothing.
func usableSpan(text string, s ScoredSpan) (start, end int, score float64, ok bool) {
	if math.IsNaN(s.Score) {
		return 0, 0, 0, false
	}
	start, end = max(s.Start, 0), min(s.End, len(text))
	if start >= end {
		return 0, 0, 0, false
	}
	return charStart(text, start), end, min(max(s.Score, 0), 1), true
}

// sortedDisjoint reports whether lines are in order and inside the text and
// the usable spans are
// in order and touch no character twice, so that every character has at
// most one score and one forward sweep computes the line scores.
func sortedDisjoint(text string, lines []Line, spans []ScoredSpan) bool {
	prevEnd := 0
	for _, l := range lines {
		if l.Start < prevEnd || l.End < l.Start || l.End > len(text) {
			return false
		}
		prevEnd = l.End
	}
	prevEnd = 0
	for _, s := range spans {
		start, end, _, ok := usableSpan(text, s)
		if !ok {
			continue
		}
		if start < prevEnd {
			return false
		}
		prevEnd = end
	}
	return true
}

// sweepLineScores sums the scores of the characters of sorted, disjoint
// spans into their lines without a per-byte buffer. It adds in the same
// order as paintLineScores, so both give bit-identical results.
func sweepLineScores(text string, lines []Line, spans []ScoredSpan, sums []float64, counts []int) {
	li := 0
	for _, s := range spans {
		b, end, score, ok := usableSpan(text, s)
		if !ok {
			continue
		}
		for b < end {
			for li < len(lines) && lines[li].End <= b {
				li++
			}
			if li == len(lines) {
				return
			}
			l := lines[li]
			if b < l.Start {
				// In a terminator: resume at the next line's content.
				b = l.Start
				continue
			}
			sums[li] += score
			counts[li]++
			if text[b] < utf8.RuneSelf {
				b++
			} else {
				_, w := utf8.DecodeRuneInString(text[b:l.End])
				b += w
			}
		}
	}
}

// paintLineScores handles arbitrary spans: it paints each span's score on
// the bytes it covers, later spans overwriting earlier ones, then averages
// per line over the bytes that start a character.
func paintLineScores(text string, lines []Line, spans []ScoredSpan, sums []float64, counts []int) {
	paint := make([]float64, len(text))
	for i := range paint {
		paint[i] = math.NaN()
	}
	for _, s := range spans {
		start, end, score, ok := usableSpan(text, s)
		if !ok {
			continue
		}
		for b := start; b < end; b++ {
			paint[b] = score
		}
	}
	for i, l := range lines {
		lo, hi := max(l.Start, 0), min(l.End, len(text))
		for b := lo; b < hi; {
			if v := paint[b]; !math.IsNaN(v) {
				sums[i] += v
				counts[i]++
			}
			if text[b] < utf8.RuneSelf {
				b++
			} else {
				_, w := utf8.DecodeRuneInString(text[b:hi])
				b += w
			}
		}
	}
}

// charStart returns the byte offset of the character (decoding unit) that
// contains byte b of text.
func charStart(text string, b int) int {
	for p := b; p >= 0 && p > b-utf8.UTFMax; p-- {
		if !utf8.RuneStart(text[p]) {
			continue
		}
		// A rune-start byte is always a decoding boundary: continuation
		// bytes of a valid sequence are never rune-start bytes.
		if _, w := utf8.DecodeRuneInString(text[p:]); p+w > b {
			return p
		}
		break
	}
	return b
}
