package pruner

import (
	"cmp"
	"math"
	"slices"

	"github.com/prunekit/pruner/chunk"
)

// budgetCost returns the budget limit and the cost of each line in the
// budget's unit: lines, or tokens of the line (terminator included).
func (p *Pruner) budgetCost(text string, lines []chunk.Line, ts *tokenScores) (limit int, cost []int) {
	cost = make([]int, len(lines))
	b := p.cfg.budget
	if b.lines > 0 {
		for i := range cost {
			cost[i] = 1
		}
		return max(1, int(math.Round(b.lines*float64(len(lines))))), cost
	}
	toks := ts.textToks
	if toks == nil {
		toks = p.encode(text)
	}
	// Tokens are assigned to the line holding their first byte.
	li := 0
	for _, t := range toks {
		for li < len(lines)-1 && t.ByteStart >= lines[li].TermEnd {
			li++
		}
		cost[li]++
	}
	if b.tokens > 0 {
		return b.tokens, cost
	}
	return max(1, int(math.Ceil(float64(len(toks))/b.ratio))), cost
}

// repairFunc returns the repaired form of a keep mask (the mask itself when
// there is no repair pass).
type repairFunc func(keep []bool) ([]bool, error)

// budgetOutcome says how a budget selection went.
type budgetOutcome int

const (
	budgetMet        budgetOutcome = iota
	budgetUnrepaired               // no repaired line fitted: lines kept without their repair
	budgetExceeded                 // the always-keep lines alone exceed the budget
)

// selectByBudget chooses model lines in order of descending score (ties to
// the earlier line) and accepts a line when the repaired selection with it
// still costs at most limit, so the output never exceeds the budget. model
// holds the lines already kept (always-keep) on entry and the chosen lines
// on return; final is the repaired selection. When not even one line fits
// with its repair, the best lines that fit on their own are kept unrepaired
// (budgetUnrepaired): a readable output cannot be had within that budget,
// and an empty one helps nobody. Lines without a scored character, or with
// score 0, are never chosen on their own.
func selectByBudget(scores []float64, covered, keep []bool, cost []int, limit int, repair repairFunc) (final []bool, outcome budgetOutcome, err error) {
	model := slices.Clone(keep)
	defer func() { copy(keep, model) }()
	if repair == nil {
		repair = func(k []bool) ([]bool, error) { return k, nil }
	}
	total := func(k []bool) int {
		c := 0
		for i, on := range k {
			if on {
				c += cost[i]
			}
		}
		return c
	}
	if final, err = repair(slices.Clone(model)); err != nil {
		return nil, budgetMet, err
	}
	used := total(final)
	if used > limit {
		return final, budgetExceeded, nil
	}
	order := make([]int, 0, len(scores))
	for i := range scores {
		// A zero score is no evidence of relevance: such lines only come
		// in through repair, never to fill a budget.
		if covered[i] && !model[i] && scores[i] > 0 {
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
		trial := slices.Clone(model)
		trial[i] = true
		repaired, err := repair(trial)
		if err != nil {
			return nil, budgetMet, err
		}
		if c := total(repaired); c <= limit {
			model, final, used = trial, repaired, c
			chosen++
		}
	}
	if chosen > 0 || len(order) == 0 {
		return final, budgetMet, nil
	}
	// Nothing fits with its repair: take the best lines as they are.
	for _, i := range order {
		if !final[i] && used+cost[i] <= limit {
			model[i], final[i] = true, true
			used += cost[i]
			chosen++
		}
	}
	if chosen == 0 {
		return final, budgetMet, nil
	}
	return final, budgetUnrepaired, nil
}
