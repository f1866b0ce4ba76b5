package pruner

import (
	"context"
	"fmt"
	"math"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/lexical"
	"github.com/prunekit/pruner/internal/scoring"
)

// relevanceVerdict is the document-level judgement made after scoring:
// whether the text seems to answer the query at all.
type relevanceVerdict struct {
	offTopic bool    // fold the text to its required rows and a placeholder
	prob     float64 // estimated probability that the text answers the query
	judged   bool    // prob was estimated
	note     string  // said in Result.Notes when offTopic
}

// relevanceFeatures describes a (query, text) pair for the relevance gate:
// the line model's ranking shape and the query's lexical coverage of the
// text. Without line-model evidence it returns nil.
func relevanceFeatures(ctx context.Context, query, text string, lines []chunk.Line, ev *scoring.Evidence) ([]float64, error) {
	if ev == nil {
		return nil, nil
	}
	_, coverage, err := lexical.Scorer{}.ScoreLinesContext(ctx, query, text, lines)
	if err != nil {
		return nil, err
	}
	pieces := math.Log1p(float64(len(lexical.QueryTokens(query))))
	f := []float64{
		ev.Top, ev.Entropy, ev.Nucleus, ev.KeepTop,
		coverage, pieces, math.Log1p(float64(len(lines))),
		coverage * pieces, math.Log(ev.Top + 1e-9), coverage * coverage,
	}
	return append(f, ev.Pooled...), nil
}

// gateProb is the relevance gate's logistic regression over standardized
// features (gateMean, gateScale, gateWeights, gateBias; relevance_gate.go).
func gateProb(f []float64) float64 {
	z := gateBias
	for j, v := range f {
		z += gateWeights[j] * (v - gateMean[j]) / gateScale[j]
	}
	return 1 / (1 + math.Exp(-z))
}

// judgeRelevance decides whether text answers query at all. The gate is a
// logistic regression trained on the line model's outputs (matched commit
// queries against queries from other repositories, shared/traindata's train
// split; TestFitRelevanceGate refits it), so only the line model is judged;
// the other scorers' texts are always on-topic. Below the minimum relevance
// (WithMinRelevance; default gateThreshold, chosen on the val split) the
// text is off-topic; WithMinRelevance(0) turns the judgement off.
func (p *Pruner) judgeRelevance(ctx context.Context, query, text string, ts *tokenScores) (relevanceVerdict, error) {
	if err := ctx.Err(); err != nil {
		return relevanceVerdict{}, err
	}
	if ts.Evidence == nil || len(ts.Lines) == 0 || p.cfg.minRelevanceSet && p.cfg.minRelevance == 0 {
		return relevanceVerdict{}, nil
	}
	f, err := relevanceFeatures(ctx, query, text, ts.Lines, ts.Evidence)
	if err != nil {
		return relevanceVerdict{}, err
	}
	if len(f) != len(gateWeights) {
		// A gate fitted on other features is no judgement at all.
		return relevanceVerdict{}, nil
	}
	v := relevanceVerdict{prob: gateProb(f), judged: true}
	min := gateThreshold
	if p.cfg.minRelevanceSet {
		min = p.cfg.minRelevance
	}
	if v.prob < min {
		v.offTopic = true
		v.note = fmt.Sprintf("the text does not seem to answer the query (relevance %.2f < %.2f, WithMinRelevance): only a skeleton is kept", v.prob, min)
	}
	return v, nil
}
