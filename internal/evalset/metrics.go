package evalset

import (
	"time"
	"unicode/utf8"
)

// Metrics are one case's scores, or their means over cases (see
// shared/evalsets/README.md, "Metrics").
type Metrics struct {
	// Recall is |kept ∩ gold| / |gold|.
	Recall float64 `json:"recall"`
	// Hit is 1 when every gold line is kept, else 0.
	Hit float64 `json:"hit"`
	// Precision is |kept ∩ gold| / |kept| (0 when nothing is kept).
	Precision float64 `json:"precision"`
	// F1 is 2PR/(P+R) of the case's precision and recall (0 when both are 0).
	F1 float64 `json:"f1"`
	// LineComp is 1 − |kept| / lines.
	LineComp float64 `json:"line_comp"`
	// CharComp is 1 − chars(kept) / chars(all), every line counted with its
	// newline; characters are code points, as Python's len counts them.
	CharComp float64 `json:"char_comp"`
	// OutComp is 1 − output lines / lines, where the output counts its
	// placeholder lines too; Score leaves it 0 and the caller, who has the
	// output, sets it.
	OutComp float64 `json:"out_comp"`
}

// Score computes the metrics of keeping the 1-based line numbers kept of
// lines (from Lines) when gold holds the relevant ones. Line numbers outside
// the text are ignored and duplicates count once, as in baselines.py.
func Score(lines []string, gold, kept []int) Metrics {
	n := len(lines)
	keep := make([]bool, n+1)
	nkept := 0
	for _, k := range kept {
		if k >= 1 && k <= n && !keep[k] {
			keep[k] = true
			nkept++
		}
	}
	isGold := make(map[int]bool, len(gold))
	for _, g := range gold {
		isGold[g] = true
	}
	inter := 0
	for g := range isGold {
		if g >= 1 && g <= n && keep[g] {
			inter++
		}
	}
	var m Metrics
	if len(isGold) > 0 {
		m.Recall = float64(inter) / float64(len(isGold))
	}
	if nkept > 0 {
		m.Precision = float64(inter) / float64(nkept)
	}
	if m.Precision+m.Recall > 0 {
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
	if inter == len(isGold) {
		m.Hit = 1
	}
	if n > 0 {
		m.LineComp = 1 - float64(nkept)/float64(n)
	}
	total, keptChars := 0, 0
	for i, l := range lines {
		c := utf8.RuneCountInString(l) + 1
		total += c
		if keep[i+1] {
			keptChars += c
		}
	}
	m.CharComp = 1 - float64(keptChars)/float64(max(total, 1))
	return m
}

// Score computes the metrics of keeping the 1-based line numbers kept.
func (c Case) Score(kept []int) Metrics { return Score(c.Lines(), c.GoldLines, kept) }

// ParseStatus says whether a pruned code output parses.
type ParseStatus int

// Parse outcomes. ParseUnchecked covers non-code outputs and runs that do
// not parse at all; they are left out of the parse-clean share.
const (
	ParseUnchecked ParseStatus = iota
	ParseClean                 // parsed without ERROR or MISSING nodes
	ParseErrors                // parsed with errors
)

// Observation is one case's outcome under one method.
type Observation struct {
	// Metrics are the case's scores.
	Metrics Metrics
	// Parse says whether the output was checked and parsed cleanly.
	Parse ParseStatus
	// Tokens is the size of the input (for instance Qwen3 tokens of the
	// text); 0 when not measured.
	Tokens int
	// Elapsed is the wall time the method took on the case.
	Elapsed time.Duration
}

// Summary aggregates observations: means of the metrics over cases, the
// share of checked outputs that parse cleanly, and the wall time per 1K
// input tokens.
type Summary struct {
	// Cases is the number of observations.
	Cases int `json:"cases"`
	// Mean holds the metrics averaged over cases.
	Mean Metrics `json:"mean"`
	// ParseChecked counts the outputs whose parse was checked.
	ParseChecked int `json:"parse_checked"`
	// ParseClean is the share of checked outputs that parse without
	// errors; 0 when none was checked (see ParseChecked).
	ParseClean float64 `json:"parse_clean"`
	// Tokens is the total input tokens.
	Tokens int `json:"tokens"`
	// Elapsed is the total wall time.
	Elapsed time.Duration `json:"elapsed_ns"`
	// MsPer1KTokens is Elapsed in milliseconds per 1000 input tokens,
	// pooled over cases (total time / total tokens) so long files weigh by
	// their size; 0 when no tokens were counted.
	MsPer1KTokens float64 `json:"ms_per_1k_tokens"`
}

// Summarize aggregates observations. Means are plain means over cases, in
// order, as baselines.py computes them.
func Summarize(obs []Observation) Summary {
	s := Summary{Cases: len(obs)}
	clean := 0
	for _, o := range obs {
		m := o.Metrics
		s.Mean.Recall += m.Recall
		s.Mean.Hit += m.Hit
		s.Mean.Precision += m.Precision
		s.Mean.F1 += m.F1
		s.Mean.LineComp += m.LineComp
		s.Mean.CharComp += m.CharComp
		s.Mean.OutComp += m.OutComp
		switch o.Parse {
		case ParseClean:
			s.ParseChecked++
			clean++
		case ParseErrors:
			s.ParseChecked++
		}
		s.Tokens += o.Tokens
		s.Elapsed += o.Elapsed
	}
	if n := float64(len(obs)); n > 0 {
		s.Mean.Recall /= n
		s.Mean.Hit /= n
		s.Mean.Precision /= n
		s.Mean.F1 /= n
		s.Mean.LineComp /= n
		s.Mean.CharComp /= n
		s.Mean.OutComp /= n
	}
	if s.ParseChecked > 0 {
		s.ParseClean = float64(clean) / float64(s.ParseChecked)
	}
	if s.Tokens > 0 {
		s.MsPer1KTokens = float64(s.Elapsed) / float64(time.Millisecond) * 1000 / float64(s.Tokens)
	}
	return s
}
