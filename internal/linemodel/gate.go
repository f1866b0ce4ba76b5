package linemodel

import (
	"context"
	"math"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/lexical"
	"github.com/prunekit/pruner/internal/scoring"
)

// The relevance gate estimates whether a text answers a query at all, so
// that the pipeline can fold an off-topic text to a skeleton instead of
// keeping the lines that rank best among irrelevant ones (the nucleus
// threshold keeps more lines the flatter the ranking). It is a logistic
// regression over relevanceFeatures, trained on matched commit queries
// against queries from other repositories (shared/traindata's train split;
// TestFitRelevanceGate refits gate_weights.go) with its threshold chosen
// on the val split.

// relevanceFeatures describes a (query, text) pair for the gate: the
// ranking's shape, the strongest query-match features pooled over the
// lines and the query's lexical coverage of the text.
func relevanceFeatures(ctx context.Context, query, text string, lines []chunk.Line, ev *evidence) ([]float64, error) {
	coverage := ev.coverage
	if !ev.hasCoverage {
		var err error
		if _, coverage, err = (lexical.Scorer{}).ScoreLinesContext(ctx, query, text, lines); err != nil {
			return nil, err
		}
	}
	pieces := math.Log1p(float64(len(lexical.QueryTokens(query))))
	f := []float64{
		ev.top, ev.entropy, ev.nucleus, ev.keepTop,
		coverage, pieces, math.Log1p(float64(len(lines))),
		coverage * pieces, math.Log(ev.top + 1e-9), coverage * coverage,
	}
	return append(f, ev.pooled...), nil
}

// gateProb is the gate's logistic regression over standardized features.
func gateProb(f []float64) float64 {
	z := gateBias
	for j, v := range f {
		z += gateWeights[j] * (v - gateMean[j]) / gateScale[j]
	}
	return 1 / (1 + math.Exp(-z))
}

// judgeRelevance sets res's relevance judgement.
func judgeRelevance(ctx context.Context, query, text string, lines []chunk.Line, ev *evidence, res *scoring.Result) error {
	f, err := relevanceFeatures(ctx, query, text, lines, ev)
	if err != nil {
		return err
	}
	if len(f) != len(gateWeights) {
		// A gate fitted on other features is no judgement at all.
		return nil
	}
	res.Judged, res.Relevance, res.RelevanceMin = true, gateProb(f), gateThreshold
	return nil
}

// queryCoverage is the share of the query's distinct pieces that occur in
// the text — the lexical scorer's document score — read from the features,
// which matched every piece already, so the gate does not scan the text a
// second time. ok is false when the features cannot tell: no lines, or
// more pieces than a match mask holds.
func queryCoverage(in Input, query string) (coverage float64, ok bool) {
	if in.rows == nil {
		return 0, false
	}
	nq := len(lexical.QueryTokens(query))
	if nq > maxQueryPieces {
		return 0, false
	}
	if nq == 0 {
		return 0, true
	}
	return float64(in.rows.exact.present) / float64(nq), true
}
