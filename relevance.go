package pruner

import (
	"context"

	"github.com/prunekit/pruner/internal/syntax"
)

// relevanceVerdict is the document-level judgement made after scoring:
// whether the text seems to answer the query at all.
type relevanceVerdict struct {
	offTopic bool   // fold the text to its required rows and a placeholder
	note     string // said in Result.Notes when offTopic
}

// judgeRelevance decides whether text answers query at all, from what the
// scorer produced. A text judged off-topic is rendered as its required rows
// and one placeholder when no budget is set.
//
// TODO(#11 item 3): a calibrated document-relevance gate; until then every
// text is judged on-topic.
func (p *Pruner) judgeRelevance(ctx context.Context, query, text string, lang syntax.Language, ts *tokenScores) (relevanceVerdict, error) {
	return relevanceVerdict{}, ctx.Err()
}
