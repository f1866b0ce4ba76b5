package pruner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/syntax"
)

// folder turns line scores into the output: which lines stay, why, and
// the rendering with placeholders. It enforces the output contract:
//   - a budget bounds the whole output in its unit, placeholders included;
//   - a run is folded only when its placeholder costs fewer tokens than the
//     run (the lines stay otherwise, with ReasonCheaper);
//   - without a budget, the output has fewer tokens than the input, or the
//     text comes back whole.
type folder struct {
	p          *Pruner
	text       string
	lines      []chunk.Line
	lang       syntax.Language
	a          *astrepair.Analysis // nil: no syntax pass
	repair     bool
	repairOpts []astrepair.Option
	tokCost    []int     // tokens of each line, terminator included
	mass       []float64 // the scorer's relevance mass per line; nil: none
	// naming bounds the names placeholders show (zero: none); a budget
	// the names do not fit shortens it (astrepair.ShortNaming).
	naming astrepair.Naming
}

// folding is a folder's decision.
type folding struct {
	keep    []bool
	why     []Reason
	out     astrepair.Rendered
	outToks int
	notes   []string
	whole   string // not empty: return the text whole, for this reason
}

// maxUnfoldRounds bounds the unfold-and-repair rounds: each round only
// adds lines, and runs left cheap after it stay folded.
const maxUnfoldRounds = 12

// maxBudgetRounds bounds the select-render-measure rounds of a budget; a
// round over the budget lowers the next round's limit by its excess.
const maxBudgetRounds = 4

// thresholded keeps the lines scoring at least the threshold, repairs
// them, unfolds runs cheaper than their placeholders and returns the text
// whole when folding would not shorten it.
func (f *folder) thresholded(ctx context.Context, scores []float64, covered, always []bool, verdict relevanceVerdict, inputToks int) (*folding, error) {
	fo := &folding{keep: slices.Clone(always), why: make([]Reason, len(always))}
	for i, k := range always {
		if k {
			fo.why[i] = ReasonAlwaysKeep
		}
	}
	if verdict.offTopic {
		fo.notes = append(fo.notes, verdict.note)
	} else {
		t := f.p.threshold()
		if verdict.withheld > 0 {
			// A score is 1 minus the mass ranked above the line: keeping
			// less of the nucleus raises the threshold accordingly.
			t = 1 - (1-t)*(1-verdict.withheld)
			fo.notes = append(fo.notes, verdict.note)
		}
		for i := range scores {
			if covered[i] && scores[i] >= t && !fo.keep[i] {
				fo.keep[i], fo.why[i] = true, ReasonModel
			}
		}
	}
	if err := f.repairInto(ctx, fo.keep, fo.why, nil); err != nil {
		return nil, err
	}
	anyFits := func([]int) bool { return true }
	f.required(fo.keep, fo.why, anyFits)
	bridgeBlankLines(f.text, f.lines, fo.keep, fo.why, anyFits)
	keep, why := slices.Clone(fo.keep), slices.Clone(fo.why)
	if err := f.unfold(ctx, fo, nil, f.repair); err != nil {
		return nil, err
	}
	for fo.outToks >= inputToks && f.shortenNames() {
		// Names made the output no shorter than the text: fewer names
		// before the text comes back whole.
		fo.keep, fo.why = slices.Clone(keep), slices.Clone(why)
		if err := f.unfold(ctx, fo, nil, f.repair); err != nil {
			return nil, err
		}
	}
	switch {
	case !slices.Contains(fo.keep, false):
		fo.whole = "every line is kept"
	case fo.outToks >= inputToks:
		fo.whole = fmt.Sprintf("folding would not shorten it (%d tokens pruned, %d whole)", fo.outToks, inputToks)
	}
	return fo, nil
}

// budgeted selects lines by score within the budget, measuring the whole
// output in the budget's unit; it renders and measures the real output and,
// when that exceeds the budget (placeholders and token boundaries are
// estimated during selection), selects again under a lower limit.
func (f *folder) budgeted(ctx context.Context, scores []float64, covered, always []bool, inputToks int) (*folding, error) {
	limit, cost, phCost := f.p.budgetCost(f.lines, f.tokCost, inputToks, f.lang)
	tokens := f.p.cfg.budget.lines == 0
	unit := "tokens"
	if !tokens {
		unit = "lines"
	}
	if tokens && inputToks <= limit {
		return &folding{whole: fmt.Sprintf("the text fits the budget (%d of %d tokens)", inputToks, limit)}, nil
	}
	eff := limit
	for round := 0; round < maxBudgetRounds && eff > 0; round++ {
		fo, used, err := f.budgetRound(ctx, scores, covered, always, cost, phCost, eff, tokens)
		if err != nil {
			return nil, err
		}
		if used > limit && tokens && f.naming.Max > astrepair.ShortNaming.Max {
			// Shorter names before fewer lines: one name a placeholder
			// (only ever cheaper, so no run needs unfolding again). The
			// selection counts placeholders without names: on the val
			// split, counting their names cost 2-3 points of recall at
			// 10-30% of the tokens; shortening or dropping them costs
			// none.
			f.naming = astrepair.ShortNaming
			if err := f.rerender(ctx, fo); err != nil {
				return nil, err
			}
			used = fo.outToks
			if used <= limit {
				fo.notes = append(fo.notes, noteNamesShortened)
			}
		}
		if used > limit && tokens && f.naming.Max > 0 {
			// Then names on the largest folds only, as many as fit.
			if err := f.unnameSmallest(ctx, fo, used-limit); err != nil {
				return nil, err
			}
			used = fo.outToks
			if used <= limit {
				fo.notes = append(fo.notes, noteNamesSome)
			}
		}
		if used > limit && tokens && f.naming.Max > 0 {
			// Then no names, before fewer lines.
			f.naming = astrepair.Naming{}
			if err := f.rerender(ctx, fo); err != nil {
				return nil, err
			}
			used = fo.outToks
			if used <= limit {
				fo.notes = append(fo.notes, noteNamesDropped)
			}
		}
		if used <= limit {
			return fo, nil
		}
		if slices.Contains(fo.notes, noteAlwaysOver) {
			// No lower limit can help: the always-kept lines are the
			// caller's and stay.
			fo.notes = append(fo.notes, fmt.Sprintf("output is %d %s for a budget of %d", used, unit, limit))
			return fo, nil
		}
		eff -= used - limit
	}
	return f.smallest(ctx, always, limit, tokens, unit)
}

// noteNamesShortened says a budget left room for one name a placeholder.
const noteNamesShortened = "placeholders name one thing they fold: the budget has no room for more"

// noteNamesSome says a budget left room for the names of the largest
// folds only.
const noteNamesSome = "only the largest folds' placeholders name what they fold: the budget has no room for more"

// noteNamesDropped says a budget left no room for placeholder names.
const noteNamesDropped = "placeholders do not name what they fold: the budget has no room for names"

// noteAlwaysOver says the caller's always-kept lines alone exceed the
// budget.
const noteAlwaysOver = "the always-kept lines alone exceed the budget"

// budgetRound is one selection within limit; used is the real output
// measured in the budget's unit.
func (f *folder) budgetRound(ctx context.Context, scores []float64, covered, always []bool, cost []int, phCost, limit int, tokens bool) (fo *folding, used int, err error) {
	var newSel func() selector
	if f.repair {
		newSel = func() selector { return f.a.NewSelection(f.repairOpts...) }
	}
	keep, final, outcome, err := selectBest(ctx, scores, f.mass, covered, always, cost, phCost, limit, newSel)
	if err != nil {
		return nil, 0, fmt.Errorf("pruner: budget: %w", err)
	}
	fo = &folding{keep: final, why: make([]Reason, len(final))}
	for i, k := range keep {
		switch {
		case always[i]:
			fo.why[i] = ReasonAlwaysKeep
		case k:
			fo.why[i] = ReasonModel
		}
	}
	repair := f.repair
	switch outcome {
	case budgetUnrepaired:
		fo.notes = append(fo.notes, "budget below the smallest repaired selection: lines kept without repair")
		repair = false
	case budgetExceeded:
		fo.notes = append(fo.notes, noteAlwaysOver)
	}
	if repair {
		// The selection is what fits; Repair only names the reasons of
		// the lines it added.
		rep, err := f.a.Repair(ctx, keep, f.repairOpts...)
		if err != nil {
			return nil, 0, fmt.Errorf("pruner: repair: %w", err)
		}
		for i, k := range final {
			if k && fo.why[i] == ReasonNone {
				fo.why[i] = repairReason(rep.Reason[i])
			}
		}
	}
	for i, k := range final {
		if k && fo.why[i] == ReasonNone {
			fo.why[i] = ReasonRepair
		}
	}
	m := newMeter(fo.keep, cost, phCost)
	fits := func(lines []int) bool {
		if m.used+m.delta(lines) > limit {
			return false
		}
		m.add(lines)
		return true
	}
	if repair {
		f.required(fo.keep, fo.why, fits)
	}
	bridgeBlankLines(f.text, f.lines, fo.keep, fo.why, fits)
	// Unfolding stays within the budget, and an unrepaired selection
	// (repair alone would exceed the budget) unfolds without repair.
	within := func(keep []bool) bool { return newMeter(keep, cost, phCost).used <= limit }
	if err := f.unfold(ctx, fo, within, repair); err != nil {
		return nil, 0, err
	}
	used = fo.outToks
	if !tokens {
		used = outputLines(fo)
	}
	return fo, used, nil
}

// smallest is the output of last resort: the always-kept lines and the
// language's required rows, else nothing at all.
func (f *folder) smallest(ctx context.Context, always []bool, limit int, tokens bool, unit string) (*folding, error) {
	fo := &folding{keep: slices.Clone(always), why: make([]Reason, len(always))}
	for i, k := range always {
		if k {
			fo.why[i] = ReasonAlwaysKeep
		}
	}
	if f.repair {
		f.required(fo.keep, fo.why, func([]int) bool { return true })
	}
	out, err := f.render(ctx, fo.keep)
	if err != nil {
		return nil, err
	}
	fo.out = out
	fo.outToks = f.p.tok.Count(out.Text)
	if tokens && fo.outToks > limit && f.naming.Max > 0 {
		f.naming = astrepair.Naming{}
		if err := f.rerender(ctx, fo); err != nil {
			return nil, err
		}
	}
	used := fo.outToks
	if !tokens {
		used = outputLines(fo)
	}
	if used <= limit {
		fo.notes = append(fo.notes, fmt.Sprintf("no scored line fits a budget of %d %s: only the lines the language or the options require are kept", limit, unit))
		return fo, nil
	}
	fo = &folding{keep: make([]bool, len(always)), why: make([]Reason, len(always))}
	fo.notes = append(fo.notes, fmt.Sprintf("a budget of %d %s is below the smallest output (%d %s): nothing is returned", limit, unit, used, unit))
	return fo, nil
}

// outputLines counts the output's lines: kept lines and placeholders.
func outputLines(fo *folding) int {
	n := len(fo.out.Placeholders)
	for _, k := range fo.keep {
		if k {
			n++
		}
	}
	return n
}

// repairInto repairs keep in place, naming the reasons of the lines added;
// a no-op without a repair pass. added, when not nil, collects them.
func (f *folder) repairInto(ctx context.Context, keep []bool, why []Reason, added *[]int) error {
	if !f.repair {
		return nil
	}
	rep, err := f.a.Repair(ctx, keep, f.repairOpts...)
	if err != nil {
		return fmt.Errorf("pruner: repair: %w", err)
	}
	for i, k := range rep.Keep {
		if k && !keep[i] {
			keep[i] = true
			why[i] = repairReason(rep.Reason[i])
			if added != nil {
				*added = append(*added, i)
			}
		}
	}
	return nil
}

// required keeps the language's required rows (Go's package clause) when
// nothing else is kept, so the output is still a file of its language;
// fits says whether a row may be added and adds it.
func (f *folder) required(keep []bool, why []Reason, fits func([]int) bool) {
	if !f.repair || slices.Contains(keep, true) {
		return
	}
	for _, r := range f.a.Required() {
		if r < len(keep) && !keep[r] && fits([]int{r}) {
			keep[r] = true
			why[r] = ReasonScope
		}
	}
}

// shortenNames steps the placeholders' naming down (full, one name, none)
// and reports whether there was a step to take.
func (f *folder) shortenNames() bool {
	switch {
	case f.naming.Max > astrepair.ShortNaming.Max:
		f.naming = astrepair.ShortNaming
	case f.naming.Max > 0:
		f.naming = astrepair.Naming{}
	default:
		return false
	}
	return true
}

// unnameSmallest takes the names off the placeholders of fo's smallest
// folds until what they cost covers excess tokens (the cost of a name is
// its placeholder line's tokens with it less without it), and renders
// again.
func (f *folder) unnameSmallest(ctx context.Context, fo *folding, excess int) error {
	type named struct{ first, size, cost int }
	var phs []named
	lines := strings.SplitAfter(fo.out.Text, "\n")
	for _, ph := range fo.out.Placeholders {
		if len(ph.Names) == 0 || ph.OutputLine >= len(lines) {
			continue
		}
		line := lines[ph.OutputLine]
		k := strings.Index(line, "): ")
		if k < 0 {
			continue
		}
		bare := line[:k+1]
		if strings.HasSuffix(strings.TrimRight(line, "\r\n"), " ...") {
			bare += " ..." // a text placeholder closes with its marker
		}
		cost := f.p.tok.Count(line) - f.p.tok.Count(bare)
		phs = append(phs, named{first: ph.FirstLine, size: ph.LastLine - ph.FirstLine + 1, cost: cost})
	}
	slices.SortStableFunc(phs, func(a, b named) int { return a.size - b.size })
	unnamed := map[int]bool{}
	saved := 0
	for _, ph := range phs {
		if saved >= excess {
			break
		}
		unnamed[ph.first] = true
		saved += ph.cost
	}
	f.naming.Unnamed = unnamed
	return f.rerender(ctx, fo)
}

// rerender renders fo.keep again (after the naming changed) and counts it.
func (f *folder) rerender(ctx context.Context, fo *folding) error {
	out, err := f.render(ctx, fo.keep)
	if err != nil {
		return err
	}
	fo.out = out
	fo.outToks, err = f.p.tok.CountContext(ctx, out.Text)
	return err
}

// render renders keep with the analysis when there is one.
func (f *folder) render(ctx context.Context, keep []bool) (astrepair.Rendered, error) {
	var r astrepair.Rendered
	var err error
	if f.a != nil {
		r, err = f.a.Render(ctx, keep, astrepair.WithNaming(f.naming))
	} else {
		r, err = astrepair.Render(ctx, f.text, f.lang, keep, astrepair.WithNaming(f.naming))
	}
	if err != nil {
		return r, fmt.Errorf("pruner: render: %w", err)
	}
	return r, nil
}

// unfold renders fo.keep and keeps every folded run whose placeholder
// costs at least as much as the run (ReasonCheaper), repairing what that
// newly keeps, until no such run is left or maxUnfoldRounds rounds have
// run: keeping lines moves repair's boundaries, which can leave new cheap
// runs. within, when not nil, is the budget: a round whose lines would not
// fit is retried run by run (at most maxUnfoldTries runs a round), keeping
// the runs that fit. It leaves the final rendering and its token count in
// fo.
func (f *folder) unfold(ctx context.Context, fo *folding, within func(keep []bool) bool, repair bool) error {
	for round := 0; ; round++ {
		out, err := f.render(ctx, fo.keep)
		if err != nil {
			return err
		}
		fo.out = out
		fo.outToks, err = f.p.tok.CountContext(ctx, out.Text)
		if err != nil {
			return err
		}
		if round == maxUnfoldRounds {
			return nil
		}
		cheap := f.cheapRuns(out)
		if len(cheap) == 0 {
			return nil
		}
		keep, why, err := f.keepRuns(ctx, fo.keep, fo.why, cheap, repair)
		if err != nil {
			return err
		}
		if within != nil && !within(keep) {
			grew := false
			for k := range cheap {
				if k == maxUnfoldTries {
					break
				}
				keep, why, err := f.keepRuns(ctx, fo.keep, fo.why, cheap[k:k+1], repair)
				if err != nil {
					return err
				}
				if within(keep) {
					fo.keep, fo.why, grew = keep, why, true
				}
			}
			if !grew {
				return nil
			}
			continue
		}
		fo.keep, fo.why = keep, why
	}
}

// maxUnfoldTries bounds the runs unfolded one at a time in a round of a
// budget, each costing a repair.
const maxUnfoldTries = 16

// keepRuns returns copies of keep and why with the runs kept
// (ReasonCheaper), repaired when repair is set.
func (f *folder) keepRuns(ctx context.Context, keep []bool, why []Reason, runs [][2]int, repair bool) ([]bool, []Reason, error) {
	keep, why = slices.Clone(keep), slices.Clone(why)
	for _, r := range runs {
		for i := r[0]; i <= r[1]; i++ {
			keep[i], why[i] = true, ReasonCheaper
		}
	}
	if repair {
		if err := f.repairInto(ctx, keep, why, nil); err != nil {
			return nil, nil, err
		}
	}
	return keep, why, nil
}

// cheapRuns returns the 0-based inclusive line ranges of the runs whose
// placeholder line costs at least as many tokens as the run's lines, and
// under a line budget the one-line runs too (the placeholder is a line as
// well and hides it).
func (f *folder) cheapRuns(out astrepair.Rendered) [][2]int {
	if len(out.Placeholders) == 0 {
		return nil
	}
	var cheap [][2]int
	phs := out.Placeholders
	line, pos := 0, 0
	for _, ph := range phs {
		// Walk the output to the placeholder's line.
		for line < ph.OutputLine {
			nl := strings.IndexByte(out.Text[pos:], '\n')
			if nl < 0 {
				pos = len(out.Text)
				break
			}
			pos += nl + 1
			line++
		}
		end := len(out.Text)
		if nl := strings.IndexByte(out.Text[pos:], '\n'); nl >= 0 {
			end = pos + nl + 1
		}
		if ph.FirstLine == ph.LastLine && f.p.cfg.budget.lines > 0 {
			cheap = append(cheap, [2]int{ph.FirstLine - 1, ph.LastLine - 1})
			continue
		}
		phToks := f.p.tok.Count(out.Text[pos:end])
		runToks := 0
		for i := ph.FirstLine - 1; i < ph.LastLine && runToks <= phToks; i++ {
			runToks += f.tokCost[i]
		}
		if phToks >= runToks {
			cheap = append(cheap, [2]int{ph.FirstLine - 1, ph.LastLine - 1})
		}
	}
	return cheap
}

// noteHintsDropped says a budget left no room for fold hints.
const noteHintsDropped = "placeholders do not say what is likely relevant in their folds: the budget has no room for it"

// hint adds the fold hints (WithFoldHints) to fo's rendering: the n folds
// whose best scoring line scores highest say what holds that line. The
// output must stay within limit tokens (a token budget; 0: none) and
// shorter than the input's inputToks, else it is rendered without hints,
// with a note under a budget. It returns the hints rendered.
func (f *folder) hint(ctx context.Context, fo *folding, scores []float64, covered []bool, limit, inputToks int) ([]astrepair.Hint, error) {
	type fold struct {
		first, last, best int
	}
	var folds []fold
	for i := 0; i < len(fo.keep); {
		if fo.keep[i] {
			i++
			continue
		}
		fd := fold{first: i, best: -1}
		for ; i < len(fo.keep) && !fo.keep[i]; i++ {
			if covered[i] && scores[i] > 0 && (fd.best < 0 || scores[i] > scores[fd.best]) {
				fd.best = i
			}
		}
		fd.last = i - 1
		// A fold of one or two lines costs about as much to unfold as to
		// hint at.
		if fd.best >= 0 && fd.last-fd.first >= 2 {
			folds = append(folds, fd)
		}
	}
	if len(folds) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(folds, func(x, y fold) int {
		switch {
		case scores[x.best] > scores[y.best]:
			return -1
		case scores[x.best] < scores[y.best]:
			return 1
		}
		return 0
	})
	var hints []astrepair.Hint
	for _, fd := range folds[:min(len(folds), f.p.cfg.foldHints)] {
		hints = append(hints, f.a.Hint(fd.best+1, fd.first+1, fd.last+1))
	}
	saved := f.naming
	f.naming.Hints = hints
	if err := f.rerender(ctx, fo); err != nil {
		return nil, err
	}
	if (limit == 0 || fo.outToks <= limit) && fo.outToks < inputToks {
		return hints, nil
	}
	f.naming = saved
	if err := f.rerender(ctx, fo); err != nil {
		return nil, err
	}
	if limit > 0 {
		fo.notes = append(fo.notes, noteHintsDropped)
	}
	return nil, nil
}
