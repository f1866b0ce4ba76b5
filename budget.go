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
		return max(1, int(math.RoundToEven(b.lines*float64(len(lines))))), cost, 1
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
func selectByBudget(ctx context.Context, scores []float64, covered, keep []bool, cost []int, phCost, limit int, sel selector) (final []bool, outcome budgetOutcome, err error) {
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
	for _, i := range order {
		if m.used >= limit {
			break
		}
		// Keeping a line removes at most the placeholder of its run.
		if final[i] || m.used+cost[i]-phCost > limit {
			continue // already in the output, or too expensive even alone
		}
		// The selector's kept lines are exactly final, so the lines it
		// names are all new. The walk stops once their cost exceeds
		// what is left (with room for the placeholders they may save):
		// a line too expensive for the budget costs that much work at
		// most, however deep it lies (and astrepair stops at once at
		// items it has proven too expensive before).
		lines, _, fits, err := sel.CostWithin(ctx, i, cost, limit-m.used+2*phCost)
		if err != nil {
			return nil, budgetMet, err
		}
		if !fits || m.used+m.delta(lines) > limit {
			continue
		}
		added, err := sel.Add(ctx, i)
		if err != nil {
			return nil, budgetMet, err
		}
		m.add(append(added, i))
		keep[i] = true
		chosen++
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
