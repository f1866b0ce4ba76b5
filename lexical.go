package pruner

import (
	"context"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/lexical"
	"github.com/prunekit/pruner/internal/syntax"
)

// Scorer names accepted by WithScorer.
const (
	// ScorerAuto uses the checkpoint given to Load, or the embedded line
	// model (ScorerLine) when there is none.
	ScorerAuto = "auto"
	// ScorerLexical scores lines with BM25 over identifier pieces of the
	// query. It is the baseline and the last-resort fallback, and results
	// say so (Result.Scorer = "lexical").
	ScorerLexical = "lexical"
)

// lexicalScorer is the BM25 baseline.
type lexicalScorer struct{}

func (lexicalScorer) defaultThreshold() (float64, bool) { return 0, false }

func (lexicalScorer) hasCRF() bool { return false }

// score scores text's lines with BM25 and shapes the result like the
// model's, so the same decision, repair and rendering follow.
func (lexicalScorer) score(ctx context.Context, p *Pruner, query, text string, _ syntax.Language) (*tokenScores, error) {
	lines := chunk.SplitLines(text)
	scores, doc, err := lexical.Scorer{}.ScoreLinesContext(ctx, query, text, lines)
	if err != nil {
		return nil, err
	}
	return p.lineScored(ctx, text, lines, scores, doc)
}

// lineScored shapes per-line scores (from the lexical scorer or the line
// model) like the skimmer's token scores, so the same decision, repair and
// rendering follow.
func (p *Pruner) lineScored(ctx context.Context, text string, lines []chunk.Line, scores []float64, doc float64) (*tokenScores, error) {
	covered := make([]bool, len(lines))
	// One span per line, in code points, lets the SWE-Pruner renderer
	// aggregate line scores like token scores.
	spans := make([]chunk.ScoredSpan, 0, len(lines))
	cp := 0
	for i, l := range lines {
		covered[i] = !isBlank(text[l.Start:l.End])
		n := chunk.CodePointLen(text[l.Start:l.End])
		if n > 0 {
			spans = append(spans, chunk.ScoredSpan{Start: cp, End: cp + n, Score: scores[i]})
		}
		cp += n + chunk.CodePointLen(text[l.End:l.TermEnd])
	}
	// Only the count is kept: a token budget tokenizes again for its
	// per-line costs, so a call without one never holds the token list.
	n, err := p.tok.CountContext(ctx, text)
	if err != nil {
		return nil, err
	}
	return &tokenScores{
		spans:      spans,
		lineScores: scores,
		lines:      lines,
		covered:    covered,
		doc:        doc,
		inputToks:  n,
	}, nil
}
