package swecompat

import "unicode/utf8"

// clampScore is max(0.0, min(1.0, x)) with Python's comparison semantics:
// min keeps 1.0 unless x < 1.0, max keeps 0.0 unless the value is > 0.0, so
// NaN becomes 1.0.
func clampScore(x float64) float64 {
	v := 1.0
	if x < 1 {
		v = x
	}
	if v > 0 {
		return v
	}
	return 0
}

// AggregateLines is the reference's aggregate_token_scores_to_lines. spans
// are token spans [start, end) in code points of text, scores their scores
// (pairs beyond the shorter slice are ignored). Every character in a span
// gets its clamped score, later tokens overwriting earlier ones. Lines are
// Python splitlines() lines, but line i is taken to cover [pos, pos+len) with
// pos advancing by len+1, as if every terminator were one character: with
// "\r\n" the windows drift one character per line (reproduced on purpose).
// A line's score is the plain mean over its covered characters; lines with
// no covered character are absent from the result. Keys are 1-based line
// numbers.
func AggregateLines(text string, spans [][2]int, scores []float64) map[int]float64 {
	n := utf8.RuneCountInString(text)
	charScore := make([]float64, n)
	covered := make([]bool, n)
	for i := range min(len(spans), len(scores)) {
		s := min(max(spans[i][0], 0), n)
		e := min(max(spans[i][1], 0), n)
		sc := clampScore(scores[i])
		for p := s; p < e; p++ {
			charScore[p] = sc
			covered[p] = true
		}
	}
	out := make(map[int]float64)
	pos := 0
	for i, l := range splitPy(text) {
		end := min(pos+l.cps, n)
		sum, cnt := 0.0, 0
		for p := pos; p < end; p++ {
			if covered[p] {
				// Sequential left-to-right sum, as Python's sum() over floats.
				sum += charScore[p]
				cnt++
			}
		}
		if cnt > 0 {
			out[i+1] = sum / float64(cnt)
		}
		pos += l.cps + 1
	}
	return out
}
