package pruner

import (
	"context"
	"fmt"
	"math"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/skimmer"
	"github.com/prunekit/pruner/internal/syntax"
)

// tokenScores is what a scorer hands to the shared pipeline.
type tokenScores struct {
	spans      []chunk.ScoredSpan // merged, code points of the text
	bytes      []chunk.ScoredSpan // spans in bytes, computed on first use
	lineScores []float64          // per library line; nil = derive from spans
	lines      []chunk.Line       // chunk.SplitLines(text), when the scorer split it
	tree       *syntax.Tree       // the scorer's parse of the text, if it made one
	// rank, when set, orders lines for a budget instead of the line scores
	// (the line model ranks with a score trained for that); all > 0.
	rank      []float64
	covered   []bool
	textToks  []chunk.Token
	doc       float64
	inputToks int
	modelToks int
	windows   int
	notes     []string
	evidence  *lineEvidence // the line model's ranking shape, else nil
	// tokenLevel says spans are the model's token scores (the skimmer's),
	// reported in Result.TokenScores; else one span per line.
	tokenLevel bool
}

// lineEvidence is what the line model's ranking says about the whole
// text's relevance (see rankEvidence).
type lineEvidence struct {
	top     float64   // the best line's share of the ranking
	entropy float64   // the ranking's entropy ÷ log(lines): 1 is flat
	nucleus float64   // share of the lines the default threshold keeps
	keepTop float64   // mean keep marginal of the three best lines
	pooled  []float64 // poolFeatures of the model's input
}

// encoderFunc adapts a function to chunk.Encoder.
type encoderFunc func(string) []chunk.Token

func (f encoderFunc) Encode(text string) []chunk.Token { return f(text) }

// skimScorer is the Qwen3 skimmer of SWE-Pruner and LaMR checkpoints: it
// scores tokens in overlapping windows, decided by keep probabilities or
// the final CRF.
type skimScorer struct {
	model  *skimmer.Model
	params crf.Params // final CRF (Viterbi, Marginal); zero when absent
	crf    bool
	prefix []int32
	suffix []int32
}

func (s *skimScorer) score(ctx context.Context, p *Pruner, query, text string, _ syntax.Language) (*tokenScores, error) {
	return s.scoreTokens(ctx, p, query, text)
}

func (*skimScorer) defaultThreshold() (float64, bool) { return 0, false }

func (s *skimScorer) hasCRF() bool { return s.crf }

// budgetInstruction is the instruction that sizes windows.
func (p *Pruner) budgetInstruction() string {
	if p.cfg.budgetInstr != "" {
		return p.cfg.budgetInstr
	}
	return p.cfg.instruction
}

// fitQuery returns query, shortened when its prompt would leave fewer than
// chunk.MinTextTokens tokens per window for text (the reference refuses to
// prune then; we keep the head of the query, where an agent's question puts
// its point, and say so in a note).
func (s *skimScorer) fitQuery(p *Pruner, query string) (string, []string) {
	// shortfall is how many tokens q's prompt must lose (≤ 0: it fits).
	shortfall := func(q string) int {
		worst := 0
		for _, instr := range []string{p.cfg.instruction, p.budgetInstruction()} {
			n := len(p.encode(chunk.FormatQuery(instr, q)))
			worst = max(worst, chunk.MinTextTokens-chunk.TextBudget(p.cfg.maxLength, len(s.prefix), n, len(s.suffix)))
		}
		return worst
	}
	over := shortfall(query)
	if over <= 0 {
		return query, nil
	}
	qt := p.encode(query)
	// Token boundaries can shift when the query is cut, so the first guess
	// may miss by a token or two.
	for keep := max(0, len(qt)-over); ; keep-- {
		short := ""
		if keep > 0 {
			short = query[:qt[keep-1].ByteEnd]
		}
		if keep == 0 || shortfall(short) <= 0 {
			return short, []string{fmt.Sprintf("query truncated from %d to %d tokens to leave %d tokens per window for text",
				len(qt), keep, chunk.MinTextTokens)}
		}
	}
}

// scoreTokens runs the model over text in windows and returns merged token
// scores. Windows go through the model in batches; ctx is checked between
// batches.
func (s *skimScorer) scoreTokens(ctx context.Context, p *Pruner, query, text string) (*tokenScores, error) {
	query, notes := s.fitQuery(p, query)
	overlap := p.cfg.overlap
	if overlap == 0 {
		overlap = -1 // chunk.Options reads 0 as "default"
	}
	plan, err := chunk.Prepare(encoderFunc(p.encode), query, text, chunk.Options{
		Instruction: p.cfg.instruction, BudgetInstruction: p.budgetInstruction(),
		MaxLength: p.cfg.maxLength, Overlap: overlap, PrefixIDs: s.prefix, SuffixIDs: s.suffix,
	})
	if err != nil {
		return nil, fmt.Errorf("pruner: %w", err)
	}
	out := &tokenScores{inputToks: plan.TextTokens, textToks: plan.Tokens, notes: notes, tokenLevel: true}
	windows, inputs := plan.Windows, plan.Inputs
	for _, in := range inputs {
		out.modelToks += len(in.IDs)
	}
	out.windows = len(windows)
	scored := make([]chunk.WindowScores, len(windows))
	docScores := make([]float64, len(windows))
	mode := p.decision()
	for lo := 0; lo < len(inputs); lo += p.cfg.batchSize {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+p.cfg.batchSize, len(inputs))
		rows := make([][]int32, hi-lo)
		for i := range rows {
			rows[i] = inputs[lo+i].IDs
		}
		outs, err := s.model.Run(ctx, rows)
		if err != nil {
			return nil, fmt.Errorf("pruner: model: %w", err)
		}
		for i, o := range outs {
			in := inputs[lo+i]
			scores, err := s.decide(o, in.DocStart, in.DocEnd, mode)
			if err != nil {
				return nil, err
			}
			scored[lo+i] = chunk.WindowScores{Start: windows[lo+i].Start, Tokens: in.Tokens, Scores: scores}
			docScores[lo+i] = o.DocScore()
		}
	}
	out.spans = chunk.Merge(chunk.CodePointLen(text), scored...)
	out.doc = chunk.DocumentScore(docScores...)
	return out, nil
}

// decide turns one window's model outputs at text positions [lo, hi) into
// per-token keep scores.
func (s *skimScorer) decide(o skimmer.Output, lo, hi int, mode Decision) ([]float64, error) {
	n := hi - lo
	k := len(o.Emissions) / (2 * o.N)
	// fused[i] = Σ_k gate_k · (prune_k, keep_k), in float32 as the fork does.
	fused := make([]float32, 2*n)
	for i := 0; i < n; i++ {
		pos := lo + i
		if k == 1 {
			fused[2*i], fused[2*i+1] = o.Emissions[2*pos], o.Emissions[2*pos+1]
			continue
		}
		var e0, e1 float32
		for r := 0; r < k; r++ {
			g := o.Gates[pos*k+r]
			e0 += g * o.Emissions[(pos*k+r)*2]
			e1 += g * o.Emissions[(pos*k+r)*2+1]
		}
		fused[2*i], fused[2*i+1] = e0, e1
	}
	scores := make([]float64, n)
	if n == 0 {
		return scores, nil
	}
	switch mode {
	case Viterbi, Marginal:
		em, err := crf.NewEmissions(fused, 2)
		if err != nil {
			return nil, fmt.Errorf("pruner: crf: %w", err)
		}
		if mode == Viterbi {
			path, _, err := crf.Viterbi(s.params, em, nil)
			if err != nil {
				return nil, fmt.Errorf("pruner: viterbi: %w", err)
			}
			for i, t := range path {
				scores[i] = float64(t)
			}
			return scores, nil
		}
		marg, err := crf.Marginals(s.params, em, nil)
		if err != nil {
			return nil, fmt.Errorf("pruner: marginals: %w", err)
		}
		for i := range scores {
			scores[i] = marg[i][1]
		}
		return scores, nil
	default:
		for i := range scores {
			logit := fused[2*i+1] - fused[2*i]
			scores[i] = float64(float32(1 / (1 + math.Exp(-float64(logit)))))
		}
		return scores, nil
	}
}

// byteSpans returns the merged spans in byte offsets of text.
func (ts *tokenScores) byteSpans(text string) []chunk.ScoredSpan {
	if ts.bytes == nil && ts.spans != nil {
		ts.bytes = chunk.SpansToBytes(text, ts.spans)
	}
	return ts.bytes
}
