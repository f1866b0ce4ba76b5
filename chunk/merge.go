package chunk

import (
	"cmp"
	"math"
	"slices"
)

// ScoredSpan is a score for the span [Start, End) of a text. Whether the
// span counts code points or bytes is said by the function that takes or
// returns it.
type ScoredSpan struct {
	Start, End int
	Score      float64
}

// WindowScores holds the token scores of one window.
type WindowScores struct {
	// Start is the code-point offset of the window in the whole text.
	Start int
	// Tokens are the window's text tokens with code-point spans relative to
	// the window (Input.Tokens).
	Tokens []Token
	// Scores holds one score per token; extra tokens or scores are ignored.
	Scores []float64
}

// MergeTokenScores merges the token scores of several windows of a text of
// textLen code points as the reference's merge_token_scores_from_chunks:
// tokens are keyed by their absolute code-point span, all scores with the
// same key are averaged (across windows and duplicates inside one window),
// spans starting before 0 or at/after textLen or ending after textLen are
// dropped, and the result is sorted by (Start, End). Spans are in code
// points.
func MergeTokenScores(textLen int, windows ...WindowScores) []ScoredSpan {
	total := 0
	for _, w := range windows {
		total += min(len(w.Tokens), len(w.Scores))
	}
	all := make([]ScoredSpan, 0, total)
	for _, w := range windows {
		for i := range min(len(w.Tokens), len(w.Scores)) {
			s, e := w.Start+w.Tokens[i].Start, w.Start+w.Tokens[i].End
			if s < 0 || s >= textLen || e > textLen {
				continue
			}
			all = append(all, ScoredSpan{Start: s, End: e, Score: w.Scores[i]})
		}
	}
	// A stable sort keeps each key's scores in window order, so the sum is
	// accumulated in the reference's order and the average is bit-identical.
	slices.SortStableFunc(all, func(a, b ScoredSpan) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.End, b.End)
	})
	out := all[:0]
	for i := 0; i < len(all); {
		j := i + 1
		sum := all[i].Score
		for j < len(all) && all[j].Start == all[i].Start && all[j].End == all[i].End {
			sum += all[j].Score
			j++
		}
		out = append(out, ScoredSpan{Start: all[i].Start, End: all[i].End, Score: sum / float64(j-i)})
		i = j
	}
	return out
}

// Merge returns the token scores of a text scored through windows the way
// the reference's prune() does: a single window's tokens are used as they
// are (absolute spans, in token order, duplicates kept, nothing dropped),
// several windows go through MergeTokenScores. Spans are in code points.
func Merge(textLen int, windows ...WindowScores) []ScoredSpan {
	if len(windows) != 1 {
		return MergeTokenScores(textLen, windows...)
	}
	w := windows[0]
	out := make([]ScoredSpan, min(len(w.Tokens), len(w.Scores)))
	for i := range out {
		out[i] = ScoredSpan{Start: w.Start + w.Tokens[i].Start, End: w.Start + w.Tokens[i].End, Score: w.Scores[i]}
	}
	return out
}

// DocumentScore returns the document score of a text scored through windows:
// the largest window score (the reference's max), 0 when there is none. NaN
// scores are ignored unless all scores are NaN.
func DocumentScore(windowScores ...float64) float64 {
	if len(windowScores) == 0 {
		return 0
	}
	best := math.NaN()
	for _, s := range windowScores {
		if s > best || math.IsNaN(best) {
			best = s
		}
	}
	return best
}
