package lexical

import (
	"context"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/scoring"
)

// ScoreText scores text's lines with BM25 (ScoreLinesContext) for the
// pruning pipeline: the BM25 baseline as a scorer.
func ScoreText(ctx context.Context, count scoring.Counter, query, text string) (*scoring.Result, error) {
	lines := chunk.SplitLines(text)
	scores, doc, err := Scorer{}.ScoreLinesContext(ctx, query, text, lines)
	if err != nil {
		return nil, err
	}
	return scoring.LineScored(ctx, count, text, lines, scores, doc)
}
