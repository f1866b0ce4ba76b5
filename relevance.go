package pruner

import (
	"context"
	"fmt"
)

// relevanceVerdict is the document-level judgement made after scoring:
// whether the text seems to answer the query at all.
type relevanceVerdict struct {
	offTopic bool    // fold the text to its required rows and a placeholder
	prob     float64 // estimated probability that the text answers the query
	judged   bool    // prob was estimated
	note     string  // said in Result.Notes when offTopic
}

// judgeRelevance decides whether text answers query at all, from the
// scorer's calibrated judgement (the line model's relevance gate; the other
// scorers' texts are always on-topic). Below the minimum relevance
// (WithMinRelevance; default the scorer's) the text is off-topic;
// WithMinRelevance(0) turns the judgement off.
func (p *Pruner) judgeRelevance(ctx context.Context, ts *tokenScores) (relevanceVerdict, error) {
	if err := ctx.Err(); err != nil {
		return relevanceVerdict{}, err
	}
	if !ts.Judged || p.cfg.minRelevanceSet && p.cfg.minRelevance == 0 {
		return relevanceVerdict{}, nil
	}
	v := relevanceVerdict{prob: ts.Relevance, judged: true}
	min := ts.RelevanceMin
	if p.cfg.minRelevanceSet {
		min = p.cfg.minRelevance
	}
	if v.prob < min {
		v.offTopic = true
		v.note = fmt.Sprintf("the text does not seem to answer the query (relevance %.2f < %.2f, WithMinRelevance): only a skeleton is kept", v.prob, min)
	}
	return v, nil
}
