package pruner

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/prunekit/pruner/chunk"
)

// budgetCost returns the budget limit and the cost of each line in the
// budget's unit: lines, or tokens of the line (terminator included).
func (p *Pruner) budgetCost(ctx context.Context, text string, lines []chunk.Line, ts *tokenScores) (limit int, cost []int, err error) {
	cost = make([]int, len(lines))
	b := p.cfg.budget
	if b.lines > 0 {
		for i := range cost {
			cost[i] = 1
		}
		return max(1, int(math.RoundToEven(b.lines*float64(len(lines))))), cost, nil
	}
	// Tokens are assigned to the line holding their first byte.
	n := 0
	li := 0
	count := func(byteStart int) {
		for li < len(lines)-1 && byteStart >= lines[li].TermEnd {
			li++
		}
		cost[li]++
		n++
	}
	if ts.textToks != nil {
		for _, t := range ts.textToks {
			count(t.ByteStart)
		}
	} else {
		// The line scorers keep no token list; it lives only for this loop.
		toks, err := p.tok.EncodeContext(ctx, text)
		if err != nil {
			return 0, nil, err
		}
		for _, t := range toks {
			count(t.ByteStart)
		}
	}
	if b.tokens > 0 {
		return b.tokens, cost, nil
	}
	return max(1, int(math.Ceil(float64(n)/b.ratio))), cost, nil
}

// selector grows a repaired selection one chosen line at a time:
// CostWithin says which lines choosing line would newly keep (line
// included) and their weight, stopping once it exceeds limit (ok false);
// Add chooses it. astrepair.Selection is one; plainSelector (no repair)
// another.
type selector interface {
	CostWithin(ctx context.Context, line int, weight []int, limit int) (lines []int, cost int, ok bool, err error)
	Add(ctx context.Context, line int) ([]int, error)
}

// plainSelector keeps exactly the chosen lines.
type plainSelector struct{ kept []bool }

func (s plainSelector) CostWithin(_ context.Context, line int, weight []int, limit int) ([]int, int, bool, error) {
	if s.kept[line] {
		return nil, 0, limit >= 0, nil
	}
	if weight[line] > limit {
		return nil, weight[line], false, nil
	}
	return []int{line}, weight[line], true, nil
}

func (s plainSelector) Add(_ context.Context, line int) ([]int, error) {
	if s.kept[line] {
		return nil, nil
	}
	s.kept[line] = true
	return []int{line}, nil
}

// budgetOutcome says how a budget selection went.
type budgetOutcome int

const (
	budgetMet        budgetOutcome = iota
	budgetUnrepaired               // no repaired line fitted: lines kept without their repair
	budgetExceeded                 // the always-keep lines alone exceed the budget
)

// selectByBudget chooses lines in order of descending score (ties to the
// earlier line) and accepts a line when what it newly keeps, repair
// included, still fits within limit, so the output never exceeds the
// budget. keep holds the lines already kept (always-keep) on entry and the
// chosen lines on return; final is the repaired selection. When not even
// one line fits with its repair, the best lines that fit on their own are
// kept unrepaired (budgetUnrepaired): a readable output cannot be had within
// that budget, and an empty one helps nobody. Lines without a scored
// character, or with score 0, are never chosen on their own.
func selectByBudget(ctx context.Context, scores []float64, covered, keep []bool, cost []int, limit int, sel selector) (final []bool, outcome budgetOutcome, err error) {
	final = make([]bool, len(keep))
	if sel == nil {
		sel = plainSelector{kept: slices.Clone(final)}
	}
	used := 0
	take := func(lines []int) {
		for _, j := range lines {
			if !final[j] {
				final[j] = true
				used += cost[j]
			}
		}
	}
	for i, k := range keep {
		if k {
			added, err := sel.Add(ctx, i)
			if err != nil {
				return nil, budgetMet, err
			}
			take(append(added, i))
		}
	}
	if used > limit {
		return final, budgetExceeded, nil
	}
	order := make([]int, 0, len(scores))
	for i := range scores {
		// A zero score is no evidence of relevance: such lines only come
		// in through repair, never to fill a budget.
		if covered[i] && !keep[i] && scores[i] > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	chosen := 0
	for _, i := range order {
		if used >= limit {
			break
		}
		if final[i] || used+cost[i] > limit {
			continue // already in the output, or too expensive even alone
		}
		// The selector's kept lines are exactly final, so the lines it
		// names are all new. The walk stops once they exceed what is
		// left: a line too expensive for the budget costs that much
		// work at most, however deep it lies (and astrepair stops at
		// once at items it has proven too expensive before).
		_, _, fits, err := sel.CostWithin(ctx, i, cost, limit-used)
		if err != nil {
			return nil, budgetMet, err
		}
		if !fits {
			continue
		}
		added, err := sel.Add(ctx, i)
		if err != nil {
			return nil, budgetMet, err
		}
		take(append(added, i))
		keep[i] = true
		chosen++
	}
	if chosen > 0 || len(order) == 0 {
		return final, budgetMet, nil
	}
	// Nothing fits with its repair: take the best lines as they are.
	for _, i := range order {
		if !final[i] && used+cost[i] <= limit {
			keep[i], final[i] = true, true
			used += cost[i]
			chosen++
		}
	}
	if chosen == 0 {
		return final, budgetMet, nil
	}
	return final, budgetUnrepaired, nil
}
