// Package rubric derives per-line rubric labels from a binary keep mask, as
// LaMR §3.1 describes, to supervise the K=2 (semantic, dependency) heads.
//
// The semantic rubric gives each kept line the document's relevance score
// and every other line zero. The dependency rubric starts from the kept
// lines and follows AST edges — enclosing scope headers, control-flow
// headers and companions, the rest of multi-line statements, definitions
// and imports of used names, and call sites of defined functions — giving
// a line reached after h hops the weight decay^h. Both rubrics are
// binarized at a threshold.
package rubric

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/internal/syntax"
)

// Defaults for Build. With decay 0.6 and threshold 0.3 lines up to two
// hops away from a kept line are dependency-positive (0.6, 0.36) and a
// third hop is not (0.216).
const (
	DefaultDecay     = 0.6
	DefaultThreshold = 0.3
	DefaultMaxHops   = 3
	DefaultDocScore  = 1.0
)

// ErrMaskLength is returned when the mask does not have one entry per line.
var ErrMaskLength = errors.New("rubric: mask length does not match line count")

// ErrBadOption is returned for out-of-range option values.
var ErrBadOption = errors.New("rubric: invalid option")

// Labels holds per-line rubric scores and their binarized labels; every
// slice has one entry per line.
type Labels struct {
	// Semantic is the document score on kept lines, 0 elsewhere.
	Semantic []float64
	// Dependency is decay^h for a line h hops from the kept lines, 0 for
	// lines not reached.
	Dependency []float64
	// SemanticLabel and DependencyLabel are the scores binarized at the
	// threshold (score >= threshold).
	SemanticLabel   []bool
	DependencyLabel []bool
	// Hops is the hop at which each line was reached by the dependency
	// propagation, 0 if it was not.
	Hops []int
}

type config struct {
	docScore  float64
	decay     float64
	threshold float64
	maxHops   int
}

// Option configures Build.
type Option func(*config)

// WithDocScore sets the document-level relevance score in [0,1] that kept
// lines carry in the semantic rubric (default 1).
func WithDocScore(s float64) Option { return func(c *config) { c.docScore = s } }

// WithDecay sets the per-hop weight factor in (0,1] (default 0.6).
func WithDecay(d float64) Option { return func(c *config) { c.decay = d } }

// WithThreshold sets the binarization threshold (default 0.3).
func WithThreshold(t float64) Option { return func(c *config) { c.threshold = t } }

// WithMaxHops bounds the dependency propagation (default 3).
func WithMaxHops(n int) Option { return func(c *config) { c.maxHops = n } }

func newConfig(opts []Option) (config, error) {
	c := config{docScore: DefaultDocScore, decay: DefaultDecay, threshold: DefaultThreshold, maxHops: DefaultMaxHops}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	switch {
	case math.IsNaN(c.docScore) || c.docScore < 0 || c.docScore > 1:
		return c, fmt.Errorf("doc score %v: %w", c.docScore, ErrBadOption)
	case math.IsNaN(c.decay) || c.decay <= 0 || c.decay > 1:
		return c, fmt.Errorf("decay %v: %w", c.decay, ErrBadOption)
	case math.IsNaN(c.threshold):
		return c, fmt.Errorf("threshold %v: %w", c.threshold, ErrBadOption)
	case c.maxHops < 0:
		return c, fmt.Errorf("max hops %d: %w", c.maxHops, ErrBadOption)
	}
	return c, nil
}

// Build parses text as lang and derives rubric labels from keep. For
// non-code text the dependency rubric is all zero.
func Build(ctx context.Context, text string, lang syntax.Language, keep []bool, opts ...Option) (Labels, error) {
	a, err := astrepair.Analyze(ctx, text, lang)
	if err != nil {
		return Labels{}, fmt.Errorf("rubric: %w", err)
	}
	return FromAnalysis(ctx, a, keep, opts...)
}

// FromAnalysis derives rubric labels from keep over an analysed text, so a
// caller labelling many masks of one file parses it once.
func FromAnalysis(ctx context.Context, a *astrepair.Analysis, keep []bool, opts ...Option) (Labels, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return Labels{}, err
	}
	n := a.Lines()
	if len(keep) != n {
		return Labels{}, fmt.Errorf("rubric: %d mask entries for %d lines: %w", len(keep), n, ErrMaskLength)
	}
	l := Labels{
		Semantic: make([]float64, n), Dependency: make([]float64, n),
		SemanticLabel: make([]bool, n), DependencyLabel: make([]bool, n),
		Hops: make([]int, n),
	}
	var frontier []int
	for i, k := range keep {
		if k {
			l.Semantic[i] = cfg.docScore
			frontier = append(frontier, i)
		}
	}
	reached := make([]bool, n)
	weight := 1.0
	for hop := 1; hop <= cfg.maxHops && len(frontier) > 0; hop++ {
		if err := ctx.Err(); err != nil {
			return Labels{}, fmt.Errorf("rubric: %w", err)
		}
		weight *= cfg.decay
		targets, err := step(ctx, a, frontier)
		if err != nil {
			return Labels{}, fmt.Errorf("rubric: %w", err)
		}
		frontier = frontier[:0]
		for _, t := range targets {
			if reached[t] {
				continue
			}
			reached[t] = true
			l.Dependency[t] = weight
			l.Hops[t] = hop
			frontier = append(frontier, t)
		}
		if hop == 1 {
			// A kept line is dependency support only when another kept line
			// needs it directly; later hops would just lead back to it.
			for i, k := range keep {
				if k {
					reached[i] = true
				}
			}
		}
	}
	for i := range l.Semantic {
		l.SemanticLabel[i] = l.Semantic[i] > 0 && l.Semantic[i] >= cfg.threshold
		l.DependencyLabel[i] = l.Dependency[i] > 0 && l.Dependency[i] >= cfg.threshold
	}
	return l, nil
}

// step returns the lines one hop from rows: their structural needs, the
// definitions of names they use and the call sites of what they define,
// each with its own structure (a multi-line import counts as one hop).
func step(ctx context.Context, a *astrepair.Analysis, rows []int) ([]int, error) {
	seen := map[int]bool{}
	// Rows the language requires in any output (Go's package clause) are
	// part of every line's structure for repair, but no line depends on
	// them: they are not rubric dependencies.
	for _, r := range a.Required() {
		seen[r] = true
	}
	var out []int
	add := func(xs []int) {
		for _, x := range xs {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	st, err := a.Structure(ctx, rows)
	if err != nil {
		return nil, err
	}
	add(st)
	// One call for all rows: rows sharing a name cost that name's edges
	// once, not once per row.
	linked, err := a.Linked(ctx, rows)
	if err != nil {
		return nil, err
	}
	add(linked)
	if len(linked) > 0 {
		more, err := a.Structure(ctx, linked)
		if err != nil {
			return nil, err
		}
		add(more)
	}
	return out, nil
}
