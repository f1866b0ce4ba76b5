package pruner

import (
	"context"
	"errors"
	"fmt"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/lexical"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/scoring"
	"github.com/prunekit/pruner/internal/skimmer"
	"github.com/prunekit/pruner/internal/syntax"
	"github.com/prunekit/pruner/internal/tokenizer"
)

// Scorer judges how relevant each line of a document is to a query. It is
// the first stage of the pipeline — score, decide, repair, render — and the
// only one that differs between the built-in models; New composes any
// Scorer with the same decision (threshold or budget), syntax repair and
// rendering the built-ins get.
//
// The contract the decision relies on:
//   - Scores.Lines has one score per line of Document.Lines, each in [0,1];
//     NaN is not allowed.
//   - Higher means more relevant, and only the order and the threshold
//     matter: a threshold t keeps the lines scoring at least t, a budget
//     takes lines in descending score order (ties to the earlier line)
//     until it is spent. A score of 0 says "no evidence": a budget never
//     takes such a line on its own (repair may still need it).
//   - Blank lines may score anything; rendering decides them.
//   - Scores.Doc in [0,1] is the document-level relevance, reported as
//     Result.Score.
//
// Score is called concurrently from every goroutine that prunes with the
// Pruner, so it must be safe for concurrent use, and it should return
// ctx.Err() promptly when ctx is done.
type Scorer interface {
	// Name labels the scorer in Result.Scorer.
	Name() string
	// Score scores doc's lines against query.
	Score(ctx context.Context, query string, doc *Document) (*Scores, error)
}

// DefaultThresholder is implemented by a Scorer whose scores call for a
// default threshold other than 0.5 (WithThreshold overrides it).
type DefaultThresholder interface {
	DefaultThreshold() float64
}

// Document is the text a Scorer scores, split and identified once by the
// Pruner.
type Document struct {
	// Text is the input, unmodified.
	Text string
	// Lines are Text's lines as the Pruner numbers them (chunk.SplitLines:
	// lines end at "\n"); Scores.Lines follows them.
	Lines []chunk.Line
	// Language is the detected or given language ("" for plain text).
	Language string
}

// Line returns line i's content, without its terminator.
func (d *Document) Line(i int) string { return d.Text[d.Lines[i].Start:d.Lines[i].End] }

// Scores is a Scorer's judgement of a Document.
type Scores struct {
	// Lines holds one relevance score in [0,1] per Document line.
	Lines []float64
	// Doc is the document-level relevance in [0,1].
	Doc float64
	// Notes are said in Result.Notes.
	Notes []string
}

// ErrScorer: a Scorer given to New broke its contract (wrong number of
// scores, a score outside [0,1]).
var ErrScorer = errors.New("scorer broke its contract")

// New returns a Pruner that scores with s and decides, repairs and renders
// as Load's Pruners do; opts apply as for Load (WithScorer, WithBackend and
// the decision modes, which belong to checkpoints, do not). Nothing is
// loaded but the embedded tokenizer, which counts tokens for budgets and
// Result.Tokens.
func New(s Scorer, opts ...Option) (*Pruner, error) {
	if s == nil {
		return nil, fmt.Errorf("pruner: %w: nil Scorer", ErrOption)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("pruner: %w", err)
		}
	}
	tok, err := tokenizer.Qwen3()
	if err != nil {
		return nil, fmt.Errorf("pruner: tokenizer: %w", err)
	}
	if d, ok := s.(DefaultThresholder); ok {
		if t := d.DefaultThreshold(); !(t >= 0 && t <= 1) {
			return nil, fmt.Errorf("pruner: %w: %s's default threshold %v is outside [0,1]", ErrScorer, s.Name(), t)
		}
	}
	p := &Pruner{cfg: cfg, tok: tok, sc: customScorer{s}, kind: s.Name()}
	if err := p.checkDecision(); err != nil {
		return nil, err
	}
	return p, nil
}

// scorer is what the pipeline needs from a scoring stage: the built-ins
// and customScorer implement it.
type scorer interface {
	// score scores text (in lang) against query with p's options.
	score(ctx context.Context, p *Pruner, query, text string, lang syntax.Language) (*tokenScores, error)
	// defaultThreshold is the threshold when WithThreshold is not given
	// (ok false: the option's default).
	defaultThreshold() (t float64, ok bool)
	// hasCRF says whether the scorer can decode with a CRF (Viterbi,
	// Marginal decisions).
	hasCRF() bool
	// slow says whether scoring takes long enough (a model, a caller's
	// scorer) that the render's own preparation should run beside it
	// (prework); a stage that parses the text itself says false.
	slow() bool
}

// customScorer adapts a user's Scorer to the pipeline.
type customScorer struct{ s Scorer }

func (c customScorer) score(ctx context.Context, p *Pruner, query, text string, lang syntax.Language) (*tokenScores, error) {
	lines := chunk.SplitLines(text)
	doc := &Document{Text: text, Lines: lines, Language: string(lang)}
	if lang == syntax.Text {
		doc.Language = ""
	}
	sc, err := c.s.Score(ctx, query, doc)
	if err != nil {
		return nil, fmt.Errorf("pruner: scorer %s: %w", c.s.Name(), err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if sc == nil || len(sc.Lines) != len(lines) {
		n := 0
		if sc != nil {
			n = len(sc.Lines)
		}
		return nil, fmt.Errorf("pruner: %w: %s returned %d line scores for %d lines", ErrScorer, c.s.Name(), n, len(lines))
	}
	for i, v := range sc.Lines {
		if !(v >= 0 && v <= 1) { // NaN included
			return nil, fmt.Errorf("pruner: %w: %s scored line %d %v, outside [0,1]", ErrScorer, c.s.Name(), i+1, v)
		}
	}
	if !(sc.Doc >= 0 && sc.Doc <= 1) { // NaN included
		return nil, fmt.Errorf("pruner: %w: %s scored the document %v, outside [0,1]", ErrScorer, c.s.Name(), sc.Doc)
	}
	ts, err := scoring.LineScored(ctx, p.tok.CountContext, text, lines, sc.Lines, sc.Doc)
	if err != nil {
		return nil, err
	}
	ts.Notes = append(ts.Notes, sc.Notes...)
	return ts, nil
}

func (c customScorer) defaultThreshold() (float64, bool) {
	if d, ok := c.s.(DefaultThresholder); ok {
		return d.DefaultThreshold(), true
	}
	return 0, false
}

func (customScorer) hasCRF() bool { return false }

func (customScorer) slow() bool { return true }

// Scorer names accepted by WithScorer.
const (
	// ScorerAuto uses the checkpoint given to Load, or the embedded line
	// model (ScorerLine) when there is none.
	ScorerAuto = "auto"
	// ScorerLexical scores lines with BM25 over identifier pieces of the
	// query. It is the baseline and the last-resort fallback, and results
	// say so (Result.Scorer = "lexical").
	ScorerLexical = "lexical"
	// ScorerLine names the built-in line model: a small query-conditioned
	// model trained with this library's own code (internal/linemodel,
	// examples/train) and embedded in the binary. It scores whole lines on
	// the CPU in milliseconds, needs no checkpoint and no network, and is
	// what ScorerAuto uses when Load gets no checkpoint. Results say
	// Scorer = "line".
	ScorerLine = "line"
)

// tokenScores is what a scoring stage hands the rest of the pipeline.
type tokenScores = scoring.Result

// threshold is the keep threshold in effect: WithThreshold's, else the
// scorer's default.
func (p *Pruner) threshold() float64 {
	if !p.cfg.thresholdSet {
		if t, ok := p.sc.defaultThreshold(); ok {
			return t
		}
	}
	return p.cfg.threshold
}

// The built-in scoring stages: each scorer lives in its own package
// (internal/skimmer, internal/linemodel, internal/lexical); these adapt
// them to the Pruner's options.

// skimStage is the Qwen3 skimmer of SWE-Pruner and LaMR checkpoints.
type skimStage struct{ s *skimmer.Scorer }

func (k skimStage) score(ctx context.Context, p *Pruner, query, text string, _ syntax.Language) (*tokenScores, error) {
	ts, err := k.s.ScoreText(ctx, encoderFunc(p.encode), p.skimOptions(), query, text)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("pruner: %w", err)
	}
	return ts, err
}

func (skimStage) defaultThreshold() (float64, bool) { return 0, false }

func (k skimStage) hasCRF() bool { return k.s.CRF }

func (skimStage) slow() bool { return true }

// skimOptions are p's options as the skimmer reads them.
func (p *Pruner) skimOptions() skimmer.Options {
	mode := skimmer.ModeProb
	switch p.decision() {
	case Viterbi:
		mode = skimmer.ModeViterbi
	case Marginal:
		mode = skimmer.ModeMarginal
	}
	return skimmer.Options{
		Instruction: p.cfg.instruction, BudgetInstruction: p.cfg.budgetInstr,
		MaxLength: p.cfg.maxLength, Overlap: p.cfg.overlap, BatchSize: p.cfg.batchSize, Mode: mode,
	}
}

// encoderFunc adapts a function to chunk.Encoder.
type encoderFunc func(string) []chunk.Token

func (f encoderFunc) Encode(text string) []chunk.Token { return f(text) }

// lineStage is the embedded line model.
type lineStage struct{ m *linemodel.Model }

func (s lineStage) score(ctx context.Context, p *Pruner, query, text string, lang syntax.Language) (*tokenScores, error) {
	judge := !(p.cfg.minRelevanceSet && p.cfg.minRelevance == 0) && p.cfg.renderer != RenderSWEPruner
	return s.m.ScoreText(ctx, p.tok.CountContext, query, text, lang, judge)
}

func (lineStage) defaultThreshold() (float64, bool) { return linemodel.DefaultThreshold, true }

func (lineStage) hasCRF() bool { return false }

func (lineStage) slow() bool { return false }

// lexicalStage is the BM25 baseline.
type lexicalStage struct{}

func (lexicalStage) score(ctx context.Context, p *Pruner, query, text string, _ syntax.Language) (*tokenScores, error) {
	return lexical.ScoreText(ctx, p.tok.CountContext, query, text)
}

func (lexicalStage) defaultThreshold() (float64, bool) { return 0, false }

func (lexicalStage) hasCRF() bool { return false }

func (lexicalStage) slow() bool { return false }
