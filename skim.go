package pruner

import (
	"context"
	"fmt"
	"math"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/skimmer"
)

// tokenScores is what a scorer hands to the shared pipeline.
type tokenScores struct {
	spans      []chunk.ScoredSpan // merged, code points of the text
	bytes      []chunk.ScoredSpan // spans in bytes, computed on first use
	lineScores []float64          // per library line; nil = derive from spans
	covered    []bool
	textToks   []chunk.Token
	doc        float64
	inputToks  int
	modelToks  int
	windows    int
	notes      []string
}

// queryTokens returns the query-part tokens of the model input and of window
// budgeting, shortening the query when it would leave fewer than
// chunk.MinTextTokens tokens per window for text.
func (p *Pruner) queryTokens(query string) (input, budget []chunk.Token, notes []string) {
	budgetInstr := p.cfg.budgetInstr
	if budgetInstr == "" {
		budgetInstr = p.cfg.instruction
	}
	room := func(q []chunk.Token) int {
		return chunk.TextBudget(p.cfg.maxLength, len(p.prefix), len(q), len(p.suffix))
	}
	input = p.encode(chunk.FormatQuery(p.cfg.instruction, query))
	budget = input
	if budgetInstr != p.cfg.instruction {
		budget = p.encode(chunk.FormatQuery(budgetInstr, query))
	}
	if room(input) >= chunk.MinTextTokens && room(budget) >= chunk.MinTextTokens {
		return input, budget, nil
	}
	// Keep the head of the query: an agent's question leads with its point.
	qt := p.encode(query)
	over := max(chunk.MinTextTokens-room(input), chunk.MinTextTokens-room(budget))
	keep := max(0, len(qt)-over)
	for {
		short := ""
		if keep > 0 {
			short = query[:qt[keep-1].ByteEnd]
		}
		input = p.encode(chunk.FormatQuery(p.cfg.instruction, short))
		budget = input
		if budgetInstr != p.cfg.instruction {
			budget = p.encode(chunk.FormatQuery(budgetInstr, short))
		}
		if (room(input) >= chunk.MinTextTokens && room(budget) >= chunk.MinTextTokens) || keep == 0 {
			notes = append(notes, fmt.Sprintf("query truncated from %d to %d tokens to leave %d tokens per window for text",
				len(qt), keep, chunk.MinTextTokens))
			return input, budget, notes
		}
		keep--
	}
}

// scoreTokens runs the model over text in windows and returns merged token
// scores. Windows go through the model in batches; ctx is checked between
// batches.
func (p *Pruner) scoreTokens(ctx context.Context, query, text string) (*tokenScores, error) {
	qInput, qBudget, notes := p.queryTokens(query)
	budget := chunk.TextBudget(p.cfg.maxLength, len(p.prefix), len(qBudget), len(p.suffix))
	textToks := p.encode(text)
	out := &tokenScores{inputToks: len(textToks), textToks: textToks, notes: notes}
	if len(textToks) == 0 {
		return out, nil
	}
	windows, err := chunk.PlanWindows(text, textToks, budget, p.cfg.overlap)
	if err != nil {
		return nil, fmt.Errorf("pruner: plan windows: %w", err)
	}
	inputs := make([]chunk.Input, len(windows))
	for i, w := range windows {
		toks := textToks
		if len(windows) > 1 {
			toks = p.encode(w.Text(text))
		}
		if inputs[i], err = chunk.BuildInput(p.prefix, qInput, toks, p.suffix, p.cfg.maxLength); err != nil {
			return nil, fmt.Errorf("pruner: window %d: %w", i, err)
		}
		out.modelToks += len(inputs[i].IDs)
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
		outs, err := p.model.Run(ctx, rows)
		if err != nil {
			return nil, fmt.Errorf("pruner: model: %w", err)
		}
		for i, o := range outs {
			in := inputs[lo+i]
			scores, err := p.decide(o, in.DocStart, in.DocEnd, mode)
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
func (p *Pruner) decide(o skimmer.Output, lo, hi int, mode Decision) ([]float64, error) {
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
			path, _, err := crf.Viterbi(p.params, em, nil)
			if err != nil {
				return nil, fmt.Errorf("pruner: viterbi: %w", err)
			}
			for i, t := range path {
				scores[i] = float64(t)
			}
			return scores, nil
		}
		marg, err := crf.Marginals(p.params, em, nil)
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
