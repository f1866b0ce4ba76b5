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

// Item levels recorded by a closure. Both are upward closed: when an item
// has a level, every enclosing item has at least that level, so a walk up
// the ancestors stops at the first item that already has it, and each item
// is handled at most twice per closure whatever the nesting depth.
const (
	// levelStructure: the item's skeleton has been added.
	levelStructure uint8 = 1
	// levelReturn: the skeleton and the trivial return have been added.
	levelReturn uint8 = 2
)

// state is the mutable part of one closure computation. Closures of
// single lines touch few rows, so they use maps instead of full-length
// slices.
type state struct {
	keep   []bool
	reason []Reason
	level  []uint8 // item -> levelStructure, levelReturn or 0
	names  []bool  // name id -> its definitions have been added

	sparse      map[int32]Reason
	sparseLevel map[int32]uint8
	sparseNames map[int32]bool

	queue []int32
	added []int32

	// base, when set, is a committed selection this sparse state extends
	// without modifying it.
	base *state

	// followed marks items (Selection only) whose whole structure has been
	// a dependency frontier: every name used on it has its definitions in
	// the state. It is upward closed, like the levels.
	followed       []bool
	sparseFollowed map[int32]bool
	// prune, when set, makes close treat items followed in prune as done.
	prune *state

	// cap, when set, charges every added row its weight and stops the
	// walk (over) once the charge exceeds the cap (Selection.CostWithin).
	cap  *walkCap
	over bool
}

// newDense returns a state with one entry per line, item and name.
func (a *Analysis) newDense() *state {
	return &state{
		keep:   make([]bool, a.lines.n()),
		reason: make([]Reason, a.lines.n()),
		level:  make([]uint8, len(a.items)),
		names:  make([]bool, len(a.defRows)),
	}
}

// newSparse returns a state backed by maps, extending base when not nil.
func newSparse(base *state) *state {
	return &state{base: base, sparse: map[int32]Reason{}, sparseLevel: map[int32]uint8{}, sparseNames: map[int32]bool{}}
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
	if s.cap != nil && s.cap.charge(r) {
		s.over = true
	}
	s.queue = append(s.queue, r)
	s.added = append(s.added, r)
}

// levelOf returns the level item i has in s or its base.
func (s *state) levelOf(i int32) uint8 {
	var l uint8
	if s.base != nil {
		l = s.base.levelOf(i)
	}
	own := uint8(0)
	if s.sparseLevel != nil {
		own = s.sparseLevel[i]
	} else {
		own = s.level[i]
	}
	return max(l, own)
}

func (s *state) setLevel(i int32, l uint8) {
	if s.sparseLevel != nil {
		s.sparseLevel[i] = l
	} else {
		s.level[i] = l
	}
}

// isFollowed reports whether item i is followed in s or its base.
func (s *state) isFollowed(i int32) bool {
	if s.base != nil && s.base.isFollowed(i) {
		return true
	}
	if s.sparseFollowed != nil {
		return s.sparseFollowed[i]
	}
	return s.followed != nil && s.followed[i]
}

func (s *state) setFollowed(i int32) {
	if s.sparse != nil {
		if s.sparseFollowed == nil {
			s.sparseFollowed = map[int32]bool{}
		}
		s.sparseFollowed[i] = true
	} else {
		s.followed[i] = true
	}
}

// nameDone reports whether the definitions of name id are in s or its
// base; markName records that they are.
func (s *state) nameDone(id int32) bool {
	if s.base != nil && s.base.nameDone(id) {
		return true
	}
	if s.sparseNames != nil {
		return s.sparseNames[id]
	}
	return s.names[id]
}

func (s *state) markName(id int32) {
	if s.sparseNames != nil {
		s.sparseNames[id] = true
	} else {
		s.names[id] = true
	}
}

// close adds the skeletons of every item that holds a queued row, and of
// their enclosing items, until nothing new is added. With returns, the
// trivial returns of those items come too, also for items a dependency
// hop closed without them.
//
// Each row is dequeued once and each item reaches each level once, so the
// work is linear in the rows and skeleton entries visited.
func (a *Analysis) close(ctx context.Context, s *state, returns bool) error {
	want := levelStructure
	if returns {
		want = levelReturn
	}
	var tk ticker
	for len(s.queue) > 0 {
		if s.over {
			return errOverCap
		}
		r := s.queue[len(s.queue)-1]
		s.queue = s.queue[:len(s.queue)-1]
		for _, it := range a.rowItems.row(r) {
			for j := it; j >= 0; j = a.items[j].parent {
				if tk.stop(ctx) {
					return fmt.Errorf("repair: %w", ctx.Err())
				}
				l := s.levelOf(j)
				if l >= want || (s.prune != nil && s.prune.isFollowed(j)) {
					// Upward closed: every ancestor has the level too.
					break
				}
				if s.cap != nil {
					s.cap.steps++
					if s.over || s.cap.isDead(j) {
						s.over = true
						return errOverCap
					}
				}
				if l == 0 {
					for _, sk := range a.skelOf(j) {
						if tk.stop(ctx) {
							return fmt.Errorf("repair: %w", ctx.Err())
						}
						s.add(sk.row, sk.reason)
					}
				}
				s.setLevel(j, want)
				if returns && a.items[j].ret >= 0 {
					s.add(a.items[j].ret, ReasonReturn)
				}
			}
		}
	}
	return nil
}

// run applies every rule to the rows queued in s.
func (a *Analysis) run(ctx context.Context, s *state, cfg config) error {
	if !a.parsed {
		return nil
	}
	frontier := append([]int32(nil), s.queue...)
	start := len(s.added)
	if err := a.close(ctx, s, cfg.returns); err != nil {
		return err
	}
	frontier = append(frontier, s.added[start:]...)
	return a.hops(ctx, s, frontier, cfg)
}

// hops follows definition edges from frontier for cfg.maxHops rounds,
// closing over the structure of every line it adds. A name's definitions
// are added once per state, however many lines use it.
func (a *Analysis) hops(ctx context.Context, s *state, frontier []int32, cfg config) error {
	var tk ticker
	for hop := 1; hop <= cfg.maxHops && len(frontier) > 0; hop++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("repair: %w", err)
		}
		mark := len(s.added)
		for _, r := range frontier {
			for _, id := range a.useNames.row(r) {
				if tk.stop(ctx) {
					return fmt.Errorf("repair: %w", ctx.Err())
				}
				if s.nameDone(id) {
					continue
				}
				s.markName(id)
				for _, d := range a.defRows[id] {
					s.add(d, ReasonDependency)
				}
				if s.over {
					return errOverCap
				}
			}
		}
		if err := a.close(ctx, s, false); err != nil {
			return err
		}
		frontier = append(frontier[:0], s.added[mark:]...)
	}
	return nil
}

// structureOf returns line and the lines its structure needs, ignoring
// what is already kept, and the items it went through. Items followed in
// prune (and what lies above them) are left out: every name used there
// already has its definitions in prune, so as a dependency frontier they
// would add nothing.
func (a *Analysis) structureOf(ctx context.Context, prune *state, line int32, returns bool) (rows, items []int32, err error) {
	t := newSparse(nil)
	t.prune = prune
	t.sparse[line] = ReasonKept
	t.queue = append(t.queue, line)
	if err := a.close(ctx, t, returns); err != nil {
		return nil, nil, err
	}
	items = make([]int32, 0, len(t.sparseLevel))
	for j := range t.sparseLevel {
		items = append(items, j)
	}
	return append([]int32{line}, t.added...), items, nil
}

// Repair returns keep with the lines syntax needs added back. The caller's
// mask is not modified. A mask whose length differs from the line count
// gives an error wrapping ErrMaskLength; a cancelled ctx gives its error.
// The work is linear in the lines and syntax nodes of the text.
func (a *Analysis) Repair(ctx context.Context, keep []bool, opts ...Option) (Result, error) {
	if len(keep) != a.lines.n() {
		return Result{}, fmt.Errorf("repair: %d mask entries for %d lines: %w", len(keep), a.lines.n(), ErrMaskLength)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("repair: %w", err)
	}
	cfg := newConfig(opts)
	s := a.newDense()
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
	if line < 0 || line >= a.lines.n() {
		return nil, fmt.Errorf("closure of line %d of %d: %w", line, a.lines.n(), ErrLineRange)
	}
	cfg := newConfig(opts)
	s := newSparse(nil)
	s.sparse[int32(line)] = ReasonKept
	s.queue = append(s.queue, int32(line))
	if err := a.run(ctx, s, cfg); err != nil {
		return nil, err
	}
	return sortedInts(s.added), nil
}

// sortedInts returns rows as sorted ints.
func sortedInts(rows []int32) []int {
	out := make([]int, 0, len(rows))
	for _, r := range rows {
		out = append(out, int(r))
	}
	sort.Ints(out)
	return out
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
	a    *Analysis
	cfg  config
	s    *state
	memo *costMemo // what CostWithin has learned, for its last weight slice
	// steps counts the work of CostWithin's walks (rows charged, items
	// walked, items markDead looked at), for tests bounding it.
	steps int
}

// NewSelection starts an empty selection over the analysed text.
func (a *Analysis) NewSelection(opts ...Option) *Selection {
	s := a.newDense()
	s.followed = make([]bool, len(a.items))
	return &Selection{a: a, cfg: newConfig(opts), s: s}
}

// Cost returns the lines that Add(line) would newly keep, line included
// (empty when line is already kept), without changing the selection.
func (sel *Selection) Cost(ctx context.Context, line int) ([]int, error) {
	if line < 0 || line >= sel.a.lines.n() {
		return nil, fmt.Errorf("cost of line %d of %d: %w", line, sel.a.lines.n(), ErrLineRange)
	}
	if sel.s.keep[line] && sel.s.reason[line] == ReasonKept {
		return nil, nil
	}
	t := newSparse(sel.s)
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
	return sortedInts(t.added), nil
}

// Add keeps line and everything repair needs for it, and returns the lines
// newly kept (line included), sorted. After an error (ctx cancelled) the
// selection may hold part of what line needs; discard it.
func (sel *Selection) Add(ctx context.Context, line int) ([]int, error) {
	if line < 0 || line >= sel.a.lines.n() {
		return nil, fmt.Errorf("add line %d of %d: %w", line, sel.a.lines.n(), ErrLineRange)
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
	return sortedInts(sel.s.added[mark:]), nil
}

// promote handles choosing a line that repair had already added: its
// structure is in place, but as a chosen line it is now also a source of
// dependency hops, as it would be in Repair.
func (sel *Selection) promote(ctx context.Context, s *state, line int32) error {
	if !sel.a.parsed {
		return nil
	}
	s.queue = append(s.queue, line)
	if err := sel.a.close(ctx, s, sel.cfg.returns); err != nil {
		return err
	}
	if sel.cfg.maxHops == 0 {
		return nil // no hops: the structure walk below would feed nothing
	}
	// A line chosen after repair added it is a frontier with its whole
	// structure. Items whose structure already was one are skipped, so
	// promoting line after line costs what is new, not the nesting depth
	// each time.
	frontier, items, err := sel.a.structureOf(ctx, s, line, sel.cfg.returns)
	if err != nil {
		return err
	}
	if err := sel.a.hops(ctx, s, frontier, sel.cfg); err != nil {
		return err
	}
	for _, j := range items {
		s.setFollowed(j)
	}
	return nil
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
