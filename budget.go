package pruner

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/syntax"
)

// budgetCost returns the budget's limit and unit costs: per line (1 for a
// line budget, else the line's tokens, terminator included) and of one
// placeholder line, so the whole output, placeholders included, is
// measured in the budget's unit. inputToks is the text's token count, which
// a compression divides.
func (p *Pruner) budgetCost(lines []chunk.Line, tokCost []int, inputToks int, lang syntax.Language) (limit int, cost []int, phCost int) {
	b := p.cfg.budget
	if b.lines > 0 {
		cost = make([]int, len(lines))
		for i := range cost {
			cost[i] = 1
		}
		// Placeholders are output lines too: below three, a line kept
		// in the middle of the text cannot fit beside the two that fold
		// what surrounds it, and the output would be placeholders alone.
		return max(min(3, len(lines)), int(math.RoundToEven(b.lines*float64(len(lines))))), cost, 1
	}
	phCost = p.placeholderTokens(len(lines), lang)
	if b.tokens > 0 {
		return b.tokens, tokCost, phCost
	}
	return max(1, int(math.Ceil(float64(inputToks)/b.ratio))), tokCost, phCost
}

// placeholderTokens estimates the tokens of one placeholder line of a text
// of n lines: the renderer's comment with line numbers of n's width and one
// token of indentation. The budget's final check counts the real output;
// this only keeps the selection close to it.
func (p *Pruner) placeholderTokens(n int, lang syntax.Language) int {
	d := strings.Repeat("9", len(strconv.Itoa(max(n, 1))))
	ph := "... 10 lines omitted (" + d + "-" + d + ") ...\n"
	if lang.IsCode() {
		ph = lang.LineComment() + " ... 10 lines omitted (" + d + "-" + d + ")\n"
	}
	return p.tok.Count(ph) + 1
}

// lineTokens counts each line's tokens, terminator included, without
// holding the text's token list. Counted line by line, a line's tokens are
// what it costs wherever it lands in the output; the sum can exceed the
// whole text's count by the few tokens that span blank lines.
func (p *Pruner) lineTokens(ctx context.Context, text string, lines []chunk.Line) ([]int, error) {
	cost := make([]int, len(lines))
	c := p.tok.NewCounter(ctx)
	for i, l := range lines {
		n, err := c.Count(text[l.Start:l.TermEnd])
		if err != nil {
			return nil, err
		}
		cost[i] = n
	}
	return cost, nil
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
	budgetExceeded                 // the always-kept lines alone exceed the budget
)

// meter accounts for an output in a budget's unit while lines are added to
// it: the kept lines' costs plus one placeholder per folded run.
type meter struct {
	keep   []bool
	cost   []int
	phCost int
	runs   int // folded runs of keep
	used   int
}

func newMeter(keep []bool, cost []int, phCost int) *meter {
	m := &meter{keep: keep, cost: cost, phCost: phCost}
	for i, k := range keep {
		if k {
			m.used += cost[i]
		} else if i == 0 || keep[i-1] {
			m.runs++
		}
	}
	m.used += phCost * m.runs
	return m
}

// delta returns what keeping lines would add (lines already kept and
// repeats are free): their costs, and a placeholder more or less for each
// run they split or remove.
func (m *meter) delta(lines []int) int {
	d := 0
	var marked []int
	for _, j := range lines {
		if m.keep[j] {
			continue
		}
		d += m.cost[j] + m.phCost*m.runChange(j)
		m.keep[j] = true
		marked = append(marked, j)
	}
	for _, j := range marked {
		m.keep[j] = false
	}
	return d
}

// runChange is how the number of folded runs changes when line j, folded
// now, is kept: a run split in two, shortened, or gone.
func (m *meter) runChange(j int) int {
	left := j > 0 && !m.keep[j-1]
	right := j+1 < len(m.keep) && !m.keep[j+1]
	switch {
	case left && right:
		return 1
	case !left && !right:
		return -1
	}
	return 0
}

// add keeps lines and returns the ones newly kept.
func (m *meter) add(lines []int) []int {
	var added []int
	for _, j := range lines {
		if m.keep[j] {
			continue
		}
		r := m.runChange(j)
		m.runs += r
		m.used += m.cost[j] + m.phCost*r
		m.keep[j] = true
		added = append(added, j)
	}
	return added
}

// selectByBudget chooses lines in order of descending score (ties to the
// earlier line) and accepts a line when what it newly keeps, repair
// included, still fits within limit, so the output never exceeds the
// budget: the kept lines' costs plus phCost for each folded run (the
// placeholder line that stands for it). keep holds the lines already kept
// (always-keep) on entry and the chosen lines on return; final is the
// repaired selection. When not even one line fits with its repair, the best
// lines that fit on their own are kept unrepaired (budgetUnrepaired): a
// readable output cannot be had within that budget, and an empty one helps
// nobody. Lines without a scored character, or with score 0, are never
// chosen on their own.
func selectByBudget(ctx context.Context, scores, mass []float64, covered, keep []bool, cost []int, phCost, limit int, sel selector) (final []bool, outcome budgetOutcome, err error) {
	final = make([]bool, len(keep))
	if sel == nil {
		sel = plainSelector{kept: slices.Clone(final)}
	}
	m := newMeter(final, cost, phCost)
	for i, k := range keep {
		if k {
			added, err := sel.Add(ctx, i)
			if err != nil {
				return nil, budgetMet, err
			}
			m.add(append(added, i))
		}
	}
	if m.used > limit {
		if slices.Contains(keep, true) {
			return final, budgetExceeded, nil
		}
		// Even the text folded whole is over: the caller decides.
		return final, budgetMet, nil
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
	// try weighs line i: d is what keeping it would add to the output,
	// repair included; dead says it can never fit (the budget left only
	// shrinks).
	try := func(i int) (d int, dead bool, err error) {
		// Keeping a line removes at most the placeholder of its run.
		if final[i] || m.used+cost[i]-phCost > limit {
			return 0, true, nil // already in the output, or too expensive even alone
		}
		// The selector's kept lines are exactly final, so the lines it
		// names are all new. The walk stops once their cost exceeds
		// what is left (with room for the placeholders they may save):
		// a line too expensive for the budget costs that much work at
		// most, however deep it lies (and astrepair stops at once at
		// items it has proven too expensive before).
		lines, _, fits, err := sel.CostWithin(ctx, i, cost, limit-m.used+2*phCost)
		if err != nil || !fits {
			return 0, !fits, err
		}
		d = m.delta(lines)
		return d, m.used+d > limit, nil
	}
	take := func(i int) error {
		added, err := sel.Add(ctx, i)
		if err != nil {
			return err
		}
		m.add(append(added, i))
		keep[i] = true
		chosen++
		return nil
	}
	next := 0 // order[:next] is decided
	if mass != nil {
		var err error
		if next, err = selectByMass(order, mass, try, take, func() bool { return m.used >= limit }); err != nil {
			return nil, budgetMet, err
		}
	}
	for _, i := range order[next:] {
		if m.used >= limit {
			break
		}
		_, dead, err := try(i)
		if err != nil {
			return nil, budgetMet, err
		}
		if dead {
			continue
		}
		if err := take(i); err != nil {
			return nil, budgetMet, err
		}
	}
	if chosen > 0 || len(order) == 0 {
		return final, budgetMet, nil
	}
	// Nothing fits with its repair: take the best lines as they are.
	for _, i := range order {
		if !final[i] && m.used+m.delta([]int{i}) <= limit {
			m.add([]int{i})
			keep[i] = true
			chosen++
		}
	}
	if chosen == 0 {
		return final, budgetMet, nil
	}
	return final, budgetUnrepaired, nil
}

// selectBest is selectByBudget from the always-kept lines, with a fresh
// selector from newSel (nil: no repair). With a relevance mass it selects
// twice, by mass per cost and in score order, and keeps the selection that
// keeps more mass: mass per cost alone can spend a tight budget on cheap
// lines of little worth, as greedy knapsacks do, and the better of the two
// bounds that loss. keep is the chosen lines, final the repaired selection.
func selectBest(ctx context.Context, scores, mass []float64, covered, always []bool, cost []int, phCost, limit int, newSel func() selector) (keep, final []bool, outcome budgetOutcome, err error) {
	choose := func(mass []float64) ([]bool, []bool, budgetOutcome, error) {
		keep := slices.Clone(always)
		var sel selector
		if newSel != nil {
			sel = newSel()
		}
		final, outcome, err := selectByBudget(ctx, scores, mass, covered, keep, cost, phCost, limit, sel)
		return keep, final, outcome, err
	}
	keep, final, outcome, err = choose(nil)
	if err != nil || mass == nil {
		return keep, final, outcome, err
	}
	k2, f2, o2, err := choose(mass)
	if err != nil {
		return nil, nil, 0, err
	}
	if keptMass(f2, mass) > keptMass(final, mass) {
		return k2, f2, o2, nil
	}
	return keep, final, outcome, nil
}

// keptMass sums the relevance mass of the kept lines.
func keptMass(keep []bool, mass []float64) float64 {
	t := 0.0
	for i, k := range keep {
		if k {
			t += mass[i]
		}
	}
	return t
}

// massCostExp is the exponent of a line's cost in selectByMass's value
// per cost. Chosen on the val split of the training mix (commits, mined
// questions, tool output) through Prune: at a 20% line budget 0 (score
// order alone) reaches recall 0.647 / hit 0.509, 0.5 0.666 / 0.543, 1
// 0.668 / 0.544, 1.5 0.665 / 0.542; at 10% 0.490 / 0.370, 0.497 / 0.386,
// 0.499 / 0.390, 0.494 / 0.385.
const massCostExp = 1.0

// massScan bounds the candidates selectByMass weighs per choice, and
// massScanTotal (times the candidates) all it weighs: past either, the
// budget fills in score order, so the selection stays linear in the lines.
const (
	massScan      = 16
	massScanTotal = 8
)

// selectByMass chooses, one at a time, the line with the most relevance
// mass per unit of what keeping it costs (its repair closure and the
// placeholders it adds or saves, mass/cost^massCostExp), among the best
// candidates by mass: a line whose closure is already kept, or that joins
// two kept runs, costs less than one that opens a new function, so the
// budget goes to answers rather than to structure. order is by descending
// mass; it returns how much of order is decided (chosen or dead): the rest
// is left to the plain pass.
func selectByMass(order []int, mass []float64, try func(int) (int, bool, error), take func(int) error, full func() bool) (int, error) {
	// The candidates still alive form a linked list over order's
	// positions, so that removing one costs O(1) however many are left.
	next := make([]int, len(order))
	prev := make([]int, len(order))
	for k := range order {
		next[k], prev[k] = k+1, k-1
	}
	head, alive := 0, len(order)
	remove := func(k int) {
		if prev[k] >= 0 {
			next[prev[k]] = next[k]
		} else {
			head = next[k]
		}
		if next[k] < len(order) {
			prev[next[k]] = prev[k]
		}
		alive--
	}
	budget := massScanTotal*len(order) + 64
	for alive > 0 && !full() && budget > 0 {
		best, bestV := -1, 0.0
		n := 0
		for k := head; k < len(order) && n < massScan; k = next[k] {
			v := mass[order[k]]
			if v <= bestV {
				break // the cost is at least 1: no later line can do better
			}
			n++
			budget--
			d, dead, err := try(order[k])
			if err != nil {
				return 0, err
			}
			if dead {
				remove(k)
				continue
			}
			if v /= math.Pow(float64(max(d, 1)), massCostExp); v > bestV {
				best, bestV = k, v
			}
		}
		if best < 0 {
			if n == 0 {
				break
			}
			continue
		}
		if err := take(order[best]); err != nil {
			return 0, err
		}
		remove(best)
	}
	// The lines still alive go to the plain pass, in mass order, at the
	// end of order.
	rest := make([]int, 0, alive)
	for k := head; k < len(order); k = next[k] {
		rest = append(rest, order[k])
	}
	decided := len(order) - len(rest)
	copy(order[decided:], rest)
	return decided, nil
}
