package pruner

import (
	"context"
	"fmt"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/syntax"
)

// ScorerLine names the built-in line model: a small query-conditioned model
// trained with this library's own code (internal/linemodel, examples/train)
// and embedded in the binary. It scores whole lines on the CPU in
// milliseconds, needs no checkpoint and no network, and is what ScorerAuto
// uses when Load gets no checkpoint. Results say Scorer = "line".
const ScorerLine = "line"

// scoreLines scores text's lines with the embedded line model: a line's
// score is the model's probability that it belongs in the pruned view, and
// the document score is the best line's.
func (p *Pruner) scoreLines(ctx context.Context, query, text string, lang syntax.Language) (*tokenScores, error) {
	lines := chunk.SplitLines(text)
	probs := p.lines.Score(ctx, query, text, lang)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(probs) != len(lines) {
		return nil, fmt.Errorf("pruner: line model scored %d lines of %d", len(probs), len(lines))
	}
	scores := make([]float64, len(lines))
	doc := 0.0
	for i, l := range lines {
		scores[i] = float64(probs[i])
		if !isBlank(text[l.Start:l.End]) {
			doc = max(doc, scores[i])
		}
	}
	return p.lineScored(text, lines, scores, doc), nil
}
