package lexical

import (
	"context"

	"github.com/prunekit/pruner/chunk"
)

// Scorer scores lines by BM25 against a query. The zero value is ready to
// use and safe for concurrent use (it holds no state).
type Scorer struct{}

// Name labels the scorer in results, so a lexical fallback is never
// mistaken for a model's judgement.
func (Scorer) Name() string { return "lexical" }

// ScoreLines scores lines of text (from chunk.SplitLines(text)) against
// query.
//
// Line scores are BM25 (see BM25) divided by the best line's score, so they
// lie in [0, 1] and the best line scores 1. Raw BM25 has no absolute scale —
// it grows with the query's length and the rarity of its pieces in this very
// text — so a fixed threshold on it would mean something different for
// every call; relative to the best line, a threshold of 0.5 reads "at least
// half as relevant as the best line". The division is monotone, so a top-k
// budget on these scores selects exactly the lines the BM25 baseline does.
// Lines without a query piece, blank lines included, score 0.
//
// doc is the share of the query's pieces (unique, without stopwords and
// 1-character pieces) that occur in some line. It is in [0, 1], 0
// for an empty query, and, unlike line scores, is an absolute judgement: a
// text that mentions none of the query's identifiers is irrelevant to a
// lexical scorer however its lines rank among themselves.
//
// Lines whose offsets fall outside text score 0 rather than panic.
func (s Scorer) ScoreLines(query, text string, lines []chunk.Line) (scores []float64, doc float64) {
	scores, doc, _ = s.ScoreLinesContext(context.Background(), query, text, lines)
	return scores, doc
}

// ScoreLinesContext is ScoreLines that stops early, returning ctx.Err(),
// when ctx is done.
func (Scorer) ScoreLinesContext(ctx context.Context, query, text string, lines []chunk.Line) (scores []float64, doc float64, err error) {
	content := func(i int) string {
		l := lines[i]
		if l.Start < 0 || l.End > len(text) || l.Start > l.End {
			return ""
		}
		return text[l.Start:l.End]
	}
	scores, doc, err = bm25(ctx, query, len(lines), content)
	if err != nil {
		return nil, 0, err
	}
	best := 0.0
	for _, s := range scores {
		best = max(best, s)
	}
	if best > 0 {
		for i, s := range scores {
			scores[i] = s / best
		}
	}
	return scores, doc, nil
}
