// Package scoring holds what a built-in scorer hands the pruning pipeline
// (package pruner): per-line scores, and what only some scorers have — the
// skimmer's token scores and window counts, the line model's parse tree
// (which the repair pass reuses) and its relevance gate's judgement. Each built-in scorer lives in its own package
// (internal/skimmer, internal/linemodel, internal/lexical) and returns a
// Result; the root package composes it with decision, repair and
// rendering.
package scoring

import (
	"context"
	"strings"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/syntax"
)

// Result is a scorer's judgement of one text.
type Result struct {
	// Spans are the merged scored spans in code points of the text: the
	// skimmer's tokens (TokenLevel) or one span per non-empty line.
	Spans []chunk.ScoredSpan
	// TokenLevel says Spans are model token scores, reported in
	// Result.TokenScores.
	TokenLevel bool
	// LineScores has one score per line of Lines; nil: derive them from
	// Spans.
	LineScores []float64
	// Lines is chunk.SplitLines(text), when the scorer split it.
	Lines []chunk.Line
	// Covered marks the lines with a scored character (LineScores only).
	Covered []bool
	// Mass is each line's share of the scorer's relevance mass (its
	// ranking softmax; summing to 1), when it ranks by a distribution: a
	// budget then weighs what a line is worth against what keeping it
	// costs. nil: the scores alone order the lines.
	Mass []float64
	// Tree is the scorer's parse of the text, if it made one.
	Tree *syntax.Tree
	// TextToks are the text's tokens, when the scorer tokenized it whole.
	TextToks []chunk.Token
	// Doc is the document-level score in [0,1].
	Doc float64
	// InputToks counts the text's tokens, ModelToks the tokens the model
	// read (prompts and overlaps included), Windows its windows.
	InputToks, ModelToks, Windows int
	// Notes are said in Result.Notes.
	Notes []string
	// Judged says the scorer estimated Relevance, its calibrated
	// probability that the text answers the query, and RelevanceMin, below
	// which it calls the text off-topic (the line model's relevance gate).
	Judged                  bool
	Relevance, RelevanceMin float64
	// RelevanceFull, when set, is the relevance from which a text keeps
	// the whole mass its threshold promises (0: the pipeline's default);
	// a gate that separates off-topic texts better can withhold more.
	RelevanceFull float64

	bytes []chunk.ScoredSpan // Spans in bytes, computed on first use
}

// ByteSpans returns Spans in byte offsets of text.
func (r *Result) ByteSpans(text string) []chunk.ScoredSpan {
	if r.bytes == nil && r.Spans != nil {
		r.bytes = chunk.SpansToBytes(text, r.Spans)
	}
	return r.bytes
}

// Counter counts the tokens of a text (the tokenizer of Result.Tokens).
type Counter func(ctx context.Context, text string) (int, error)

// LineScored shapes per-line scores like the skimmer's token scores (one
// span per non-empty line, in code points), so that the same decision,
// repair and rendering follow, and counts the text's tokens.
func LineScored(ctx context.Context, count Counter, text string, lines []chunk.Line, scores []float64, doc float64) (*Result, error) {
	covered := make([]bool, len(lines))
	// One span per line, in code points, lets the SWE-Pruner renderer
	// aggregate line scores like token scores.
	spans := make([]chunk.ScoredSpan, 0, len(lines))
	cp := 0
	for i, l := range lines {
		covered[i] = strings.TrimSpace(text[l.Start:l.End]) != ""
		n := chunk.CodePointLen(text[l.Start:l.End])
		if n > 0 {
			spans = append(spans, chunk.ScoredSpan{Start: cp, End: cp + n, Score: scores[i]})
		}
		cp += n + chunk.CodePointLen(text[l.End:l.TermEnd])
	}
	// Only the count is kept: a token budget counts again per line, so a
	// call without one never holds the token list.
	n, err := count(ctx, text)
	if err != nil {
		return nil, err
	}
	return &Result{Spans: spans, LineScores: scores, Lines: lines, Covered: covered, Doc: doc, InputToks: n}, nil
}
