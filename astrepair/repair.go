package astrepair

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/prunekit/pruner/internal/syntax"
)

// ErrMaskLength is returned when a mask does not have one entry per line.
var ErrMaskLength = errors.New("astrepair: mask length does not match line count")

// ErrLineRange is returned when a line index is outside the text.
var ErrLineRange = errors.New("astrepair: line out of range")

// DefaultMaxHops is how many definition hops Repair follows by default:
// the imports and file-level definitions of names used on kept lines, but
// not the names those definitions use in turn.
const DefaultMaxHops = 1

// Result is a repaired mask.
type Result struct {
	// Keep has one entry per line: the repaired mask.
	Keep []bool
	// Reason has one entry per line: why the line is kept.
	Reason []Reason
	// Added counts the lines repair added to the caller's mask, the cost a
	// budget has to account for.
	Added int
}

type config struct {
	maxHops int
	returns bool
}

// Option configures Repair and Closure.
type Option func(*config)

// WithMaxHops bounds how many definition hops repair follows from kept
// lines (0 disables dependency repair; negative values count as 0).
func WithMaxHops(n int) Option {
	return func(c *config) {
		if n < 0 {
			n = 0
		}
		c.maxHops = n
	}
}

// WithReturns turns the trivial-return rule on or off (default on).
func WithReturns(on bool) Option {
	return func(c *config) { c.returns = on }
}

func newConfig(opts []Option) config {
	c := config{maxHops: DefaultMaxHops, returns: true}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// state is the mutable part of one closure computation. Closures of
// single lines touch few rows, so they use maps instead of full-length
// slices.
type state struct {
	keep   []bool
	reason []Reason
	done   []bool

	sparse     map[int32]Reason
	sparseDone map[int32]bool

	queue []int32
	added []int32

	// base, when set, is a committed selection this sparse state extends
	// without modifying it.
	base *state
}

func (s *state) has(r int32) bool {
	if s.base != nil && s.base.has(r) {
		return true
	}
	if s.sparse != nil {
		_, ok := s.sparse[r]
		return ok
	}
	return s.keep[r]
}

func (s *state) add(r int32, why Reason) {
	if s.has(r) {
		return
	}
	if s.sparse != nil {
		s.sparse[r] = why
	} else {
		s.keep[r] = true
		s.reason[r] = why
	}
	s.queue = append(s.queue, r)
	s.added = append(s.added, r)
}

func (s *state) isDone(i int32) bool {
	if s.base != nil && s.base.isDone(i) {
		return true
	}
	if s.sparseDone != nil {
		return s.sparseDone[i]
	}
	return s.done[i]
}

func (s *state) markDone(i int32) {
	if s.sparseDone != nil {
		s.sparseDone[i] = true
	} else {
		s.done[i] = true
	}
}

// close adds the skeletons of every item that holds a queued row, and of
// their enclosing items, until nothing new is added.
func (a *Analysis) close(s *state, returns bool) {
	for len(s.queue) > 0 {
		r := s.queue[len(s.queue)-1]
		s.queue = s.queue[:len(s.queue)-1]
		for _, it := range a.rowItems[r] {
			for j := it; j >= 0; j = a.items[j].parent {
				if s.isDone(j) {
					// An item closed during a dependency hop has no return
					// yet; a chosen line inside it still earns one.
					if !returns {
						break
					}
					if a.items[j].ret >= 0 {
						s.add(a.items[j].ret, ReasonReturn)
					}
					continue
				}
				s.markDone(j)
				for _, sk := range a.items[j].skel {
					s.add(sk.row, sk.reason)
				}
				if returns && a.items[j].ret >= 0 {
					s.add(a.items[j].ret, ReasonReturn)
				}
			}
		}
	}
}

// run applies every rule to the rows queued in s.
func (a *Analysis) run(ctx context.Context, s *state, cfg config) error {
	if !a.parsed {
		return nil
	}
	frontier := append([]int32(nil), s.queue...)
	start := len(s.added)
	a.close(s, cfg.returns)
	frontier = append(frontier, s.added[start:]...)
	return a.hops(ctx, s, frontier, cfg)
}

// hops follows definition edges from frontier for cfg.maxHops rounds,
// closing over the structure of every line it adds.
func (a *Analysis) hops(ctx context.Context, s *state, frontier []int32, cfg config) error {
	for hop := 1; hop <= cfg.maxHops && len(frontier) > 0; hop++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("repair: %w", err)
		}
		mark := len(s.added)
		for _, r := range frontier {
			for _, id := range a.useNames[r] {
				for _, d := range a.defRows[id] {
					s.add(d, ReasonDependency)
				}
			}
		}
		a.close(s, false)
		frontier = append(frontier[:0], s.added[mark:]...)
	}
	return nil
}

// structureOf returns line and the lines its structure needs, ignoring
// what is already kept.
func (a *Analysis) structureOf(line int32, returns bool) []int32 {
	t := &state{sparse: map[int32]Reason{line: ReasonKept}, sparseDone: map[int32]bool{}, queue: []int32{line}}
	a.close(t, returns)
	return append([]int32{line}, t.added...)
}

// Repair returns keep with the lines syntax needs added back. The caller's
// mask is not modified. A mask whose length differs from the line count
// gives an error wrapping ErrMaskLength.
func (a *Analysis) Repair(ctx context.Context, keep []bool, opts ...Option) (Result, error) {
	if len(keep) != len(a.lines) {
		return Result{}, fmt.Errorf("repair: %d mask entries for %d lines: %w", len(keep), len(a.lines), ErrMaskLength)
	}
	cfg := newConfig(opts)
	n := len(a.lines)
	s := &state{keep: make([]bool, n), reason: make([]Reason, n), done: make([]bool, len(a.items))}
	for i, k := range keep {
		if k {
			s.keep[i] = true
			s.reason[i] = ReasonKept
			s.queue = append(s.queue, int32(i))
		}
	}
	if err := a.run(ctx, s, cfg); err != nil {
		return Result{}, err
	}
	return Result{Keep: s.keep, Reason: s.reason, Added: len(s.added)}, nil
}

// Closure returns the lines, other than line itself, that repair adds when
// line is the only kept line: the repair cost of taking that line. The
// result is sorted.
func (a *Analysis) Closure(ctx context.Context, line int, opts ...Option) ([]int, error) {
	if line < 0 || line >= len(a.lines) {
		return nil, fmt.Errorf("closure of line %d of %d: %w", line, len(a.lines), ErrLineRange)
	}
	cfg := newConfig(opts)
	s := &state{sparse: map[int32]Reason{int32(line): ReasonKept}, sparseDone: map[int32]bool{}}
	s.queue = append(s.queue, int32(line))
	if err := a.run(ctx, s, cfg); err != nil {
		return nil, err
	}
	out := make([]int, 0, len(s.added))
	for _, r := range s.added {
		out = append(out, int(r))
	}
	sort.Ints(out)
	return out, nil
}

// Repair analyses text and repairs keep in one call; see Analysis.Repair.
// For non-code text the mask comes back unchanged.
func Repair(ctx context.Context, text string, lang syntax.Language, keep []bool, opts ...Option) (Result, error) {
	a, err := Analyze(ctx, text, lang)
	if err != nil {
		return Result{}, err
	}
	return a.Repair(ctx, keep, opts...)
}

// Closure analyses text and returns the repair cost of line; see
// Analysis.Closure.
func Closure(ctx context.Context, text string, lang syntax.Language, line int, opts ...Option) ([]int, error) {
	a, err := Analyze(ctx, text, lang)
	if err != nil {
		return nil, err
	}
	return a.Closure(ctx, line, opts...)
}

// Selection is a growing repaired mask for budgeted selection: lines are
// added one at a time and each addition reports the lines it pulls in, so
// a budget can charge every line its repair cost given what is already
// kept. A Selection is not safe for concurrent use.
type Selection struct {
	a   *Analysis
	cfg config
	s   *state
}

// NewSelection starts an empty selection over the analysed text.
func (a *Analysis) NewSelection(opts ...Option) *Selection {
	n := len(a.lines)
	return &Selection{a: a, cfg: newConfig(opts), s: &state{keep: make([]bool, n), reason: make([]Reason, n), done: make([]bool, len(a.items))}}
}

// Cost returns the lines that Add(line) would newly keep, line included
// (empty when line is already kept), without changing the selection.
func (sel *Selection) Cost(ctx context.Context, line int) ([]int, error) {
	if line < 0 || line >= len(sel.a.lines) {
		return nil, fmt.Errorf("cost of line %d of %d: %w", line, len(sel.a.lines), ErrLineRange)
	}
	if sel.s.keep[line] && sel.s.reason[line] == ReasonKept {
		return nil, nil
	}
	t := &state{base: sel.s, sparse: map[int32]Reason{}, sparseDone: map[int32]bool{}}
	if sel.s.keep[line] {
		if err := sel.promote(ctx, t, int32(line)); err != nil {
			return nil, err
		}
	} else {
		t.add(int32(line), ReasonKept)
		if err := sel.a.run(ctx, t, sel.cfg); err != nil {
			return nil, err
		}
	}
	out := make([]int, 0, len(t.added))
	for _, r := range t.added {
		out = append(out, int(r))
	}
	sort.Ints(out)
	return out, nil
}

// Add keeps line and everything repair needs for it, and returns the lines
// newly kept (line included), sorted.
func (sel *Selection) Add(ctx context.Context, line int) ([]int, error) {
	if line < 0 || line >= len(sel.a.lines) {
		return nil, fmt.Errorf("add line %d of %d: %w", line, len(sel.a.lines), ErrLineRange)
	}
	if sel.s.keep[line] && sel.s.reason[line] == ReasonKept {
		return nil, nil
	}
	mark := len(sel.s.added)
	if sel.s.keep[line] {
		sel.s.reason[line] = ReasonKept
		if err := sel.promote(ctx, sel.s, int32(line)); err != nil {
			return nil, err
		}
	} else {
		sel.s.add(int32(line), ReasonKept)
		if err := sel.a.run(ctx, sel.s, sel.cfg); err != nil {
			return nil, err
		}
	}
	out := make([]int, 0, len(sel.s.added)-mark)
	for _, r := range sel.s.added[mark:] {
		out = append(out, int(r))
	}
	sort.Ints(out)
	return out, nil
}

// promote handles choosing a line that repair had already added: its
// structure is in place, but as a chosen line it is now also a source of
// dependency hops, as it would be in Repair.
func (sel *Selection) promote(ctx context.Context, s *state, line int32) error {
	s.queue = append(s.queue, line)
	sel.a.close(s, sel.cfg.returns)
	return sel.a.hops(ctx, s, sel.a.structureOf(line, sel.cfg.returns), sel.cfg)
}

// Result returns a copy of the selection as a repaired mask; Added counts
// the lines kept for repair rather than chosen.
func (sel *Selection) Result() Result {
	res := Result{Keep: make([]bool, len(sel.s.keep)), Reason: make([]Reason, len(sel.s.reason))}
	copy(res.Keep, sel.s.keep)
	copy(res.Reason, sel.s.reason)
	for _, r := range res.Reason {
		if r.Added() {
			res.Added++
		}
	}
	return res
}
