package pruner

import (
	"context"
	"fmt"
	"math"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/syntax"
)

// ScorerLine names the built-in line model: a small query-conditioned model
// trained with this library's own code (internal/linemodel, examples/train)
// and embedded in the binary. It scores whole lines on the CPU in
// milliseconds, needs no checkpoint and no network, and is what ScorerAuto
// uses when Load gets no checkpoint. Results say Scorer = "line".
const ScorerLine = "line"

// scoreLines scores text's lines with the embedded line model.
//
// A line's score is its ranking score relative to the best line's,
// exp(rankᵢ − max rank) in (0, 1]: the ranking head is trained listwise (a
// softmax over a file's lines), so the ratio is how much of the relevance
// the model puts on the line compared with the best one, and a threshold of
// 0.5 reads "at least half as relevant as the best line" — the same reading
// as the lexical scorer's scores. The fused CRF's keep marginals are not the
// decision: they are trained on the rubric labels, which are mostly
// structure (headers, imports, closing lines) that the repair pass adds
// anyway. The document score is the best line's keep marginal.
func (p *Pruner) scoreLines(ctx context.Context, query, text string, lang syntax.Language) (*tokenScores, error) {
	lines := chunk.SplitLines(text)
	in := linemodel.NewInput(ctx, query, text, lang)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if in.N != len(lines) {
		return nil, fmt.Errorf("pruner: line model read %d lines of %d", in.N, len(lines))
	}
	out := p.lines.Forward(in)
	rank := p.lines.RankOutputs(out)
	best := math.Inf(-1)
	for i, l := range lines {
		if !isBlank(text[l.Start:l.End]) {
			best = max(best, float64(rank[i]))
		}
	}
	scores := make([]float64, len(lines))
	doc := 0.0
	for i, l := range lines {
		if isBlank(text[l.Start:l.End]) || math.IsInf(best, -1) {
			continue
		}
		// NaN (only from corrupt weights) scores 0, like an uncovered line.
		if s := math.Exp(float64(rank[i]) - best); s >= 0 {
			scores[i] = min(s, 1)
		}
		if k := float64(out.Keep[i]); k >= 0 && k <= 1 {
			doc = max(doc, k)
		}
	}
	return p.lineScored(text, lines, scores, doc), nil
}
