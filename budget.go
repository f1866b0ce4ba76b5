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

// selectByBudget adds lines to keep in order of descending score (ties to
// the earlier line), each together with its repair closure, as long as the
// total cost of kept lines stays within limit. Lines already kept (always
// keep) count against the limit first. Lines without a scored character
// are never chosen on their own.
func selectByBudget(scores []float64, covered, keep []bool, cost []int, limit int, closure func(int) ([]int, error)) error {
	used := 0
	for i, k := range keep {
		if k {
			used += cost[i]
		}
	}
	order := make([]int, 0, len(scores))
	for i := range scores {
		if covered[i] && !keep[i] {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	for _, i := range order {
		if used >= limit {
			break
		}
		if keep[i] {
			continue // pulled in by an earlier line's closure
		}
		take := []int{i}
		if closure != nil {
			extra, err := closure(i)
			if err != nil {
				return err
			}
			take = append(take, extra...)
		}
		add := 0
		for _, j := range take {
			if !keep[j] {
				add += cost[j]
			}
		}
		if used+add > limit {
			continue // a cheaper line further down may still fit
		}
		for _, j := range take {
			keep[j] = true
		}
		used += add
	}
	return nil
}
