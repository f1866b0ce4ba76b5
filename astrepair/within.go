package astrepair

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// ErrWeight is returned by Selection.CostWithin for weights that do not
// have one non-negative entry per line.
var ErrWeight = errors.New("astrepair: line weights must be one non-negative entry per line")

// errOverCap stops a capped walk (state.cap) once its charge exceeds the
// cap; CostWithin turns it into ok == false.
var errOverCap = errors.New("astrepair: over the cost cap")

// walkCap is the running charge of one capped walk.
type walkCap struct {
	weight []int
	limit  int
	spent  int
	steps  int // rows charged and items walked
	// memo and abs (the walk's absolute threshold: the selection's weight
	// plus limit) let the walk stop at an item the memo proved too
	// expensive; memo is nil when that proof does not hold (dependency
	// hops on).
	memo *costMemo
	abs  int
}

// charge adds row r's weight and reports whether the charge now exceeds
// the cap.
func (c *walkCap) charge(r int32) bool {
	c.steps++
	c.spent += c.weight[r]
	return c.spent > c.limit
}

// isDead reports whether forcing item j (its skeleton, returns and
// enclosing items) is known to exceed the walk's threshold on its own.
func (c *walkCap) isDead(j int32) bool {
	return c.memo != nil && c.memo.deadAt != nil && c.memo.deadAt[j] > c.abs
}

// costMemo is what a Selection learns from capped walks with one weight
// slice, so that later walks are cheaper. It never changes a result.
//
// Without dependency hops a line's newly kept lines are C(line) minus the
// kept lines S, for a set C(line) that does not depend on S (every kept
// row has its own closure kept, every item with a level has its closure
// kept). So used+cost, with used the weight of S, never decreases as S
// grows: when choosing item j's closure is proven to weigh more than
// A - used for an absolute threshold A, it does so for every later S and
// every threshold up to A. deadAt records, per item, 1 + the largest such
// A (0: nothing proven); a walk that must force a dead item stops there.
type costMemo struct {
	weight  []int // the slice the memo was built for (identity, not contents)
	used    int   // weight of the selection's first counted added rows
	counted int
	deadAt  []int    // item -> 1 + threshold it is proven to exceed, 0 if none
	stamp   []uint32 // row -> markDead pass that counted it
	pass    uint32
}

// memoFor returns the selection's memo for weight, starting a new one
// (checking the weights) when weight is not the slice of the last call.
func (sel *Selection) memoFor(weight []int) (*costMemo, error) {
	m := sel.memo
	if m == nil || len(m.weight) != len(weight) || len(weight) == 0 || &m.weight[0] != &weight[0] {
		for i, w := range weight {
			if w < 0 {
				return nil, fmt.Errorf("cost: weight %d of line %d: %w", w, i, ErrWeight)
			}
		}
		m = &costMemo{weight: weight}
		sel.memo = m
	}
	for _, r := range sel.s.added[m.counted:] {
		m.used += weight[r]
	}
	m.counted = len(sel.s.added)
	return m, nil
}

// CostWithin is Cost with a cap, for budgets: weight gives every line its
// cost in the budget's unit (1 per line, or its tokens), and the walk over
// what line would newly keep stops as soon as their weight exceeds limit.
//
// When the lines fit (their weight is at most limit), ok is true and
// lines and cost are exactly Cost's lines (sorted, line included unless
// already kept) and the sum of their weights. Otherwise ok is false, lines
// is nil and cost is the weight charged when the walk stopped: over limit,
// or less when it stopped at an item already proven too expensive (below).
// The work is bounded by what is charged before the walk stops, not by the
// nesting depth above line.
//
// weight must have one non-negative entry per line (else ErrWeight). The
// selection remembers, per weight slice, which items were proven too
// expensive, so later calls with the same slice and a limit no larger
// than the remaining budget stop at once (used + limit, with used the
// weight of the kept lines, is the threshold the proof is for); the
// contents of weight must not change while it is in use. Without
// dependency hops this makes a budget loop's failing lines cost O(1) each
// once their enclosing items are known to be too expensive.
func (sel *Selection) CostWithin(ctx context.Context, line int, weight []int, limit int) (lines []int, cost int, ok bool, err error) {
	n := sel.a.lines.n()
	if line < 0 || line >= n {
		return nil, 0, false, fmt.Errorf("cost of line %d of %d: %w", line, n, ErrLineRange)
	}
	if len(weight) != n {
		return nil, 0, false, fmt.Errorf("cost of line %d: %d weights for %d lines: %w", line, len(weight), n, ErrWeight)
	}
	m, err := sel.memoFor(weight)
	if err != nil {
		return nil, 0, false, err
	}
	if sel.s.keep[line] && sel.s.reason[line] == ReasonKept {
		return nil, 0, limit >= 0, nil
	}
	c := &walkCap{weight: weight, limit: limit, abs: m.used + limit}
	if sel.cfg.maxHops == 0 && sel.a.parsed && limit >= 0 && limit < math.MaxInt-m.used {
		c.memo = m
	}
	t := newSparse(sel.s)
	t.cap = c
	if sel.s.keep[line] {
		err = sel.promote(ctx, t, int32(line))
	} else {
		t.add(int32(line), ReasonKept)
		if !t.over {
			err = sel.a.run(ctx, t, sel.cfg)
		}
	}
	sel.steps += c.steps
	if err != nil && err != errOverCap {
		return nil, 0, false, err
	}
	if t.over || c.spent > limit {
		if c.memo != nil && !sel.s.keep[line] {
			if err := sel.markDead(ctx, m, int32(line), c.abs); err != nil {
				return nil, 0, false, err
			}
		}
		return nil, c.spent, false, nil
	}
	return sortedInts(t.added), c.spent, true, nil
}

// markDead records the items above line whose closure alone is proven to
// weigh more than abs - used (see costMemo). For each item holding line it
// walks the enclosing items up to the first one already kept or already
// dead, then sums the skeleton and return rows not kept from the top down:
// a lower bound of each item's closure (it leaves out the items that
// skeleton rows pull in besides their ancestors), nondecreasing downward,
// so the dead items are a bottom run of the chain. Each item is marked once
// per threshold, so over a budget loop the marking is linear in the items
// plus the live part of each walked chain.
func (sel *Selection) markDead(ctx context.Context, m *costMemo, line int32, abs int) error {
	if abs < 0 {
		return nil
	}
	a := sel.a
	if m.deadAt == nil {
		m.deadAt = make([]int, len(a.items))
		m.stamp = make([]uint32, a.lines.n())
	}
	want := levelStructure
	if sel.cfg.returns {
		want = levelReturn
	}
	var tk ticker
	var chain []int32
	for _, it := range a.rowItems.row(line) {
		chain = chain[:0]
		topDead := false
		for j := it; j >= 0; j = a.items[j].parent {
			if tk.stop(ctx) {
				return fmt.Errorf("repair: %w", ctx.Err())
			}
			sel.steps++
			if sel.s.level[j] >= want {
				break
			}
			if m.deadAt[j] > abs {
				topDead = true
				break
			}
			chain = append(chain, j)
		}
		if len(chain) == 0 {
			continue
		}
		from := len(chain) // chain[:from] is dead: all of it below a dead item
		if !topDead {
			m.pass++
			if m.pass == 0 { // wrapped: forget old stamps
				clear(m.stamp)
				m.pass = 1
			}
			sum := m.used
			from = 0
			for k := len(chain) - 1; k >= 0; k-- {
				j := chain[k]
				for _, sk := range a.skelOf(j) {
					sum += sel.unkeptWeight(m, sk.row)
				}
				if r := a.items[j].ret; sel.cfg.returns && r >= 0 {
					sum += sel.unkeptWeight(m, r)
				}
				if sum > abs {
					from = k + 1
					break
				}
			}
		}
		for _, j := range chain[:from] {
			m.deadAt[j] = abs + 1
		}
	}
	return nil
}

// unkeptWeight returns row r's weight if it is not kept and not yet
// counted in this markDead pass, else 0.
func (sel *Selection) unkeptWeight(m *costMemo, r int32) int {
	sel.steps++
	if sel.s.keep[r] || m.stamp[r] == m.pass {
		return 0
	}
	m.stamp[r] = m.pass
	return m.weight[r]
}
