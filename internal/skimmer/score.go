package skimmer

import (
	"context"
	"fmt"
	"math"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/scoring"
)

// Scorer is the Qwen3 skimmer of SWE-Pruner and LaMR checkpoints as a
// scorer for the pruning pipeline: it scores the tokens of a text in
// overlapping windows, decided by keep probabilities or the final CRF.
type Scorer struct {
	Model  *Model
	Params crf.Params // final CRF (ModeViterbi, ModeMarginal); zero when absent
	CRF    bool       // Params is set
	Prefix []int32    // prompt ids before the query part
	Suffix []int32    // and after the text
}

// Mode is how window outputs become token keep scores.
type Mode int

const (
	ModeProb     Mode = iota // the fused keep probability
	ModeViterbi              // 0/1 from the final CRF's Viterbi path
	ModeMarginal             // the final CRF's keep marginal
)

// Options are the pipeline's settings a ScoreText call uses.
type Options struct {
	Instruction, BudgetInstruction string // the prompt's; BudgetInstruction sizes windows ("" = Instruction)
	MaxLength                      int    // model window in tokens
	Overlap                        int    // window overlap in tokens (0: none)
	BatchSize                      int    // windows per model call
	Mode                           Mode
}

// budgetInstruction is the instruction that sizes windows.
func (o Options) budgetInstruction() string {
	if o.BudgetInstruction != "" {
		return o.BudgetInstruction
	}
	return o.Instruction
}

// fitQuery returns query, shortened when its prompt would leave fewer than
// chunk.MinTextTokens tokens per window for text (the reference refuses to
// prune then; we keep the head of the query, where an agent's question puts
// its point, and say so in a note).
func (s *Scorer) FitQuery(enc chunk.Encoder, o Options, query string) (string, []string) {
	// shortfall is how many tokens q's prompt must lose (≤ 0: it fits).
	shortfall := func(q string) int {
		worst := 0
		for _, instr := range []string{o.Instruction, o.budgetInstruction()} {
			n := len(enc.Encode(chunk.FormatQuery(instr, q)))
			worst = max(worst, chunk.MinTextTokens-chunk.TextBudget(o.MaxLength, len(s.Prefix), n, len(s.Suffix)))
		}
		return worst
	}
	over := shortfall(query)
	if over <= 0 {
		return query, nil
	}
	qt := enc.Encode(query)
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

// ScoreText runs the model over text in windows and returns merged token
// scores, decided by o.Mode. Windows go through the model in batches of
// o.BatchSize; ctx is checked between batches.
func (s *Scorer) ScoreText(ctx context.Context, enc chunk.Encoder, o Options, query, text string) (*scoring.Result, error) {
	query, notes := s.FitQuery(enc, o, query)
	overlap := o.Overlap
	if overlap == 0 {
		overlap = -1 // chunk.Options reads 0 as "default"
	}
	plan, err := chunk.Prepare(enc, query, text, chunk.Options{
		Instruction: o.Instruction, BudgetInstruction: o.budgetInstruction(),
		MaxLength: o.MaxLength, Overlap: overlap, PrefixIDs: s.Prefix, SuffixIDs: s.Suffix,
	})
	if err != nil {
		return nil, fmt.Errorf("skimmer: %w", err)
	}
	out := &scoring.Result{InputToks: plan.TextTokens, TextToks: plan.Tokens, Notes: notes, TokenLevel: true}
	windows, inputs := plan.Windows, plan.Inputs
	for _, in := range inputs {
		out.ModelToks += len(in.IDs)
	}
	out.Windows = len(windows)
	scored := make([]chunk.WindowScores, len(windows))
	docScores := make([]float64, len(windows))
	mode := o.Mode
	batch := max(1, o.BatchSize)
	for lo := 0; lo < len(inputs); lo += batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+batch, len(inputs))
		rows := make([][]int32, hi-lo)
		for i := range rows {
			rows[i] = inputs[lo+i].IDs
		}
		outs, err := s.Model.Run(ctx, rows)
		if err != nil {
			return nil, fmt.Errorf("skimmer: model: %w", err)
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
	out.Spans = chunk.Merge(chunk.CodePointLen(text), scored...)
	out.Doc = chunk.DocumentScore(docScores...)
	return out, nil
}

// decide turns one window's model outputs at text positions [lo, hi) into
// per-token keep scores.
func (s *Scorer) decide(o Output, lo, hi int, mode Mode) ([]float64, error) {
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
	case ModeViterbi, ModeMarginal:
		em, err := crf.NewEmissions(fused, 2)
		if err != nil {
			return nil, fmt.Errorf("skimmer: crf: %w", err)
		}
		if mode == ModeViterbi {
			path, _, err := crf.Viterbi(s.Params, em, nil)
			if err != nil {
				return nil, fmt.Errorf("skimmer: viterbi: %w", err)
			}
			for i, t := range path {
				scores[i] = float64(t)
			}
			return scores, nil
		}
		marg, err := crf.Marginals(s.Params, em, nil)
		if err != nil {
			return nil, fmt.Errorf("skimmer: marginals: %w", err)
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
