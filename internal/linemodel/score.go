package linemodel

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/scoring"
	"github.com/prunekit/pruner/internal/syntax"
)

// DefaultThreshold is the line model's default threshold on its scores:
// keep the best lines until they are expected to hold 80% of the lines that
// matter (among the best nucleusLines lines). On the val split this keeps
// 25% of the lines (before repair) with a gold-line recall of 0.75.
const DefaultThreshold = 0.2

// ScoreText scores text's lines with the model for the pruning pipeline.
//
// The model's ranking head is trained listwise: the softmax of its scores
// over a file's lines estimates each line's share of the lines that matter.
// A line's score is 1 minus the share held by the lines ranked above it, so
// the best line scores 1 and a threshold t keeps the best lines until they
// hold a 1−t share (the "nucleus"): the expected recall of a threshold is
// about 1−t whatever the file, and a flat, unsure ranking keeps more lines
// than a confident one. On the val split, t = 0.5 keeps 9% of the lines with
// a recall of 0.47, t = 0.2 keeps 25% with 0.75. The order is the ranking
// order, so budgets take the same lines as a top-k. The document score is
// the best line's keep marginal from the model's CRF.
//
// With judge, the relevance gate (gate.go) also estimates whether the text
// answers the query at all (Result.Judged, Relevance, RelevanceMin).
func (m *Model) ScoreText(ctx context.Context, count scoring.Counter, query, text string, lang syntax.Language, judge bool) (*scoring.Result, error) {
	res, ev, err := m.scoreText(ctx, count, query, text, lang)
	if err != nil || !judge {
		return res, err
	}
	if err := judgeRelevance(ctx, query, text, res.Lines, ev, res); err != nil {
		return nil, err
	}
	return res, nil
}

// scoreText is ScoreText without the judgement, returning the ranking's
// evidence for it.
func (m *Model) scoreText(ctx context.Context, count scoring.Counter, query, text string, lang syntax.Language) (*scoring.Result, *evidence, error) {
	lines := chunk.SplitLines(text)
	// The rows of the feature matrix are computed as the forward pass
	// needs them: a large text never holds the whole matrix.
	in := NewInputRows(ctx, query, text, lang)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if in.N != len(lines) {
		return nil, nil, fmt.Errorf("pruner: line model read %d lines of %d", in.N, len(lines))
	}
	out, err := m.ForwardContext(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	rank := m.RankOutputs(out)
	// Blank lines are never relevant on their own (repair and rendering
	// decide them): they take no share.
	blank := make([]bool, len(lines))
	for i, l := range lines {
		blank[i] = strings.TrimSpace(text[l.Start:l.End]) == ""
	}
	scores, order, share, total := NucleusScores(rank, blank, m.Cfg.Temperature(!lang.IsCode()))
	doc := 0.0
	for _, i := range order {
		if k := float64(out.Keep[i]); k >= 0 && k <= 1 {
			doc = max(doc, k)
		}
	}
	ts, err := scoring.LineScored(ctx, count, text, lines, scores, doc)
	if err != nil {
		return nil, nil, err
	}
	ts.Tree = in.Tree
	ts.Mass = make([]float64, len(lines))
	for j, i := range order {
		ts.Mass[i] = share[j] / total
	}
	ev := rankEvidence(order, share, total, out.Keep)
	ev.pooled = poolFeatures(in)
	ev.coverage, ev.hasCoverage = queryCoverage(in, query)
	return ts, ev, nil
}

// nucleusLines bounds the lines a threshold's nucleus is measured among:
// the share a line holds is relative to the best nucleusLines lines, not
// to the whole text. The temperatures were fitted on texts of at most 500
// lines; over a longer text the ranking's tail, each line a little mass
// but more lines the longer the text, would hold a share that grows with
// the length, and the default threshold would keep a fixed fraction of
// any text however large: 21% of 8 MB of unrelated Go sources (280K
// lines) for a question about HTTP redirects, where it now keeps 0.3%.
// 1,000 is twice the longest text of the fit, so no text of the val
// splits is affected; on concatenations of 16 tool outputs of the val
// split (about 1,700 lines) it moves the default from 14.8% of the lines
// at recall 0.918 to 11.7% at 0.884, and with another output's question
// from 19.1% to 15.1%.
const nucleusLines = 1000

// NucleusScores returns each line's score as ScoreText computes it: 1
// minus the share, under softmax(rank / temp), of the lines ranked above
// it, so that a threshold t keeps the best lines until they hold a 1−t
// share (of the best nucleusLines lines' mass: below them a line scores
// at most 1e-9). Lines marked skip (blank) and NaN or −Inf ranks score 0
// and take no share.
// It also returns the ranked lines, their unnormalized shares and the
// shares' total, for the relevance evidence.
func NucleusScores(rank []float32, skip []bool, temp float64) (scores []float64, order []int, share []float64, total float64) {
	order = make([]int, 0, len(rank))
	best := math.Inf(-1)
	for i, r := range rank {
		// NaN and -Inf ranks (RankOutputs turns NaN into -Inf; only corrupt
		// weights give either) take no share.
		if !skip[i] && !math.IsNaN(float64(r)) && !math.IsInf(float64(r), -1) {
			order = append(order, i)
			best = max(best, float64(r))
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rank[b], rank[a]) })
	share = make([]float64, len(order))
	for j, i := range order {
		share[j] = math.Exp((float64(rank[i]) - best) / temp)
		total += share[j]
	}
	scores = make([]float64, len(rank))
	// The nucleus is measured among the best nucleusLines lines.
	nucleus := total
	if len(order) > nucleusLines {
		nucleus = 0
		for _, x := range share[:nucleusLines] {
			nucleus += x
		}
	}
	above := 0.0
	for j, i := range order {
		// Ties and rounding keep the score in (0, 1] and non-increasing
		// down the order; past the nucleus's lines it stays below any
		// threshold above 1e-9, still in rank order for budgets.
		tail := 1e-9 * float64(len(order)-j) / float64(len(order))
		scores[i] = max(1-above/nucleus, tail, math.SmallestNonzeroFloat64)
		above += share[j]
	}
	return scores, order, share, total
}

// gatePooled names the line model's features whose maximum and mean over
// the lines the relevance gate reads: how strongly the best lines match
// the query, and how broadly.
var gatePooled = []string{"idf_share", "max_idf", "exact_ident", "stem_share", "def_name_share", "bm25_log", "win3_bm25"}

// poolFeatures returns the maximum and the mean over the lines of each
// gatePooled feature of in (raw, before the model standardizes them).
func poolFeatures(in Input) []float64 {
	out := make([]float64, 2*len(gatePooled))
	for k, name := range gatePooled {
		if j := slices.Index(FeatureNames, name); j >= 0 {
			out[2*k], out[2*k+1] = in.Pooled(j)
		}
	}
	return out
}

// evidence is what the model's ranking says about the whole text's
// relevance.
type evidence struct {
	top     float64   // the best line's share of the ranking
	entropy float64   // the ranking's entropy ÷ log(lines): 1 is flat
	nucleus float64   // share of the lines the default threshold keeps
	keepTop float64   // mean keep marginal of the three best lines
	pooled  []float64 // poolFeatures of the model's input
	// coverage is queryCoverage, when hasCoverage.
	coverage    float64
	hasCoverage bool
}

// rankEvidence summarizes how the line model's ranking is shaped, for the
// relevance judgement: a query the text answers concentrates the ranking on
// a few lines, one it does not leaves it flat. order is the ranked lines,
// share their unnormalized softmax weights (total their sum), keep the
// model's keep marginals.
func rankEvidence(order []int, share []float64, total float64, keep []float32) *evidence {
	ev := &evidence{}
	n := len(order)
	if n == 0 || !(total > 0) {
		return ev
	}
	ev.top = share[0] / total
	h := 0.0
	above := 0.0
	nucleus := n
	for j, s := range share {
		q := s / total
		if q > 0 {
			h -= q * math.Log(q)
		}
		if above < 1-DefaultThreshold {
			nucleus = j + 1
		}
		above += q
	}
	if n > 1 {
		ev.entropy = h / math.Log(float64(n))
	}
	ev.nucleus = float64(nucleus) / float64(n)
	k := min(3, n)
	for _, i := range order[:k] {
		if m := float64(keep[i]); m >= 0 && m <= 1 {
			ev.keepTop += m / float64(k)
		}
	}
	return ev
}
