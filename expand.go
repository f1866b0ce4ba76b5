package pruner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/internal/swecompat"
	"github.com/prunekit/pruner/internal/syntax"
)

// ErrLineRange is wrapped by the errors of Expand and ParseLineRanges for
// ranges that are malformed, outside the input or overlapping.
var ErrLineRange = errors.New("invalid line range")

// ErrNotExpandable is returned by Expand on a Result that does not hold its
// input (one decoded from JSON): prune the text again and expand that.
var ErrNotExpandable = errors.New("result cannot be expanded")

// LineRange is a range of 1-based input lines, inclusive: what a
// placeholder's "(120-159)" names.
type LineRange struct {
	First int `json:"first_line"`
	Last  int `json:"last_line"`
}

// String formats r as the placeholders do: "120-159", or "7" for one line.
func (r LineRange) String() string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last)
}

// ParseLineRanges parses comma-separated ranges as placeholders print
// them, "120-159,300-310,42" (blanks allowed); an empty string gives none.
// It checks the form only: Expand checks the ranges against the input.
func ParseLineRanges(s string) ([]LineRange, error) {
	var out []LineRange
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			if strings.TrimSpace(s) == "" {
				return nil, nil
			}
			return nil, fmt.Errorf("%w: empty range in %s", ErrLineRange, quoteCut(s))
		}
		r, err := parseLineRange(part)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func parseLineRange(s string) (LineRange, error) {
	a, b, isRange := strings.Cut(s, "-")
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := first, error(nil)
	if isRange {
		last, err2 = strconv.Atoi(strings.TrimSpace(b))
	}
	if err1 != nil || err2 != nil {
		return LineRange{}, fmt.Errorf("%w: %s: want FIRST-LAST or LINE, 1-based input line numbers", ErrLineRange, quoteCut(s))
	}
	r := LineRange{First: first, Last: last}
	if first < 1 || last < first {
		return LineRange{}, fmt.Errorf("%w: %s: want 1 ≤ FIRST ≤ LAST", ErrLineRange, quoteCut(s))
	}
	return r, nil
}

// quoteCut quotes s for an error message, cut after 64 bytes: a request's
// megabytes of ranges are not echoed back whole.
func quoteCut(s string) string {
	if len(s) <= 64 {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:64]) + "…"
}

// UnmarshalJSON accepts a range as an object {"first_line":120,
// "last_line":159} or as a string "120-159".
func (r *LineRange) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%w: %w", ErrLineRange, err)
		}
		v, err := parseLineRange(s)
		if err != nil {
			return err
		}
		*r = v
		return nil
	}
	type plain LineRange
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = LineRange(v)
	return nil
}

// expandSource is what a Result keeps of its Prune call to render the
// input again with more lines.
type expandSource struct {
	p      *Pruner
	text   string
	lang   syntax.Language
	compat bool // the SWE-Pruner renderer
	naming astrepair.Naming
}

// Expand returns a copy of r with the input lines of ranges shown in full,
// byte-identical to the input: what a reader asks for after reading a
// placeholder such as `// ... 40 lines omitted (120-159)`. The other lines
// stay as r kept them; placeholders are split and renumbered around the
// expanded lines (and name what they still fold). The copy's expanded lines
// have Reason ReasonExpanded and Tokens.Kept counts the new text; no budget
// applies. Ranges may cover kept lines, but must lie within the input's
// lines and must not overlap one another (ErrLineRange); a Result that does
// not hold its input, as one decoded from JSON, cannot be expanded
// (ErrNotExpandable). With no ranges, Expand returns a copy of r.
func (r *Result) Expand(ranges ...LineRange) (*Result, error) {
	return r.ExpandContext(context.Background(), ranges...)
}

// ExpandContext is Expand with a context for the re-rendering (a parse of
// the input for code).
func (r *Result) ExpandContext(ctx context.Context, ranges ...LineRange) (*Result, error) {
	if err := checkRanges(ranges, len(r.Lines)); err != nil {
		return nil, err
	}
	return r.expand(ctx, ranges, nil)
}

// expand is ExpandContext for checked ranges; a, when not nil, is the
// analysis of the input already made (for Unfold's names).
func (r *Result) expand(ctx context.Context, ranges []LineRange, a *astrepair.Analysis) (*Result, error) {
	out := *r
	out.Lines = slices.Clone(r.Lines)
	out.Placeholders = slices.Clone(r.Placeholders)
	out.Notes = slices.Clone(r.Notes)
	out.Expanded = slices.Clone(r.Expanded)
	if len(ranges) == 0 || r.Unpruned != "" || !r.folded() {
		return &out, nil // nothing is folded
	}
	if r.src == nil {
		return nil, fmt.Errorf("pruner: expand: %w: it does not hold its input (decoded from JSON?); prune the text again", ErrNotExpandable)
	}
	keep := make([]bool, len(r.Lines))
	for i, l := range r.Lines {
		keep[i] = l.Kept
	}
	for _, rg := range ranges {
		for n := rg.First; n <= rg.Last; n++ {
			if !keep[n-1] {
				keep[n-1] = true
				out.Lines[n-1].Kept, out.Lines[n-1].Reason = true, ReasonExpanded
			}
		}
	}
	s := r.src
	if s.compat {
		var kept []int
		for i, k := range keep {
			if k {
				kept = append(kept, i+1)
			}
		}
		text, phs := swecompat.RenderLinesMapped(s.text, kept)
		out.Text, out.Placeholders = text, compatPlaceholders(phs)
	} else {
		var err error
		if a == nil && s.lang.IsCode() {
			a, err = astrepair.Analyze(ctx, s.text, s.lang)
		}
		var rend astrepair.Rendered
		if err == nil && a != nil && s.lang.IsCode() {
			rend, err = a.Render(ctx, keep, astrepair.WithNaming(s.naming))
		} else {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("pruner: expand: %w", ctx.Err())
			}
			rend, err = astrepair.Render(ctx, s.text, s.lang, keep, astrepair.WithNaming(s.naming))
		}
		if err != nil {
			return nil, fmt.Errorf("pruner: expand: %w", err)
		}
		out.Text = rend.Text
		out.Placeholders = libraryPlaceholders(rend.Placeholders)
	}
	n, err := s.p.tok.CountContext(ctx, out.Text)
	if err != nil {
		return nil, fmt.Errorf("pruner: expand: %w", err)
	}
	out.Tokens.Kept = n
	return &out, nil
}

// CheckLineRanges returns the error Expand would return for ranges over a
// text of n lines: ranges outside lines 1-n or overlapping one another are
// refused (ErrLineRange). Front doors use it to refuse a request before
// pruning.
func CheckLineRanges(n int, ranges ...LineRange) error {
	return checkRanges(ranges, n)
}

// checkRanges refuses ranges outside lines 1..n and ranges that overlap.
func checkRanges(ranges []LineRange, n int) error {
	sorted := slices.Clone(ranges)
	// cmp.Compare, not a.First-b.First: that overflows for ranges such as
	// {MinInt, 1} and {MaxInt, MaxInt}, which a JSON request can hold.
	slices.SortFunc(sorted, func(a, b LineRange) int { return cmp.Compare(a.First, b.First) })
	for i, rg := range sorted {
		if rg.First < 1 || rg.Last < rg.First {
			return fmt.Errorf("pruner: expand: %w: %d-%d: want 1 ≤ first ≤ last", ErrLineRange, rg.First, rg.Last)
		}
		if rg.Last > n {
			return fmt.Errorf("pruner: expand: %w: %s is outside the input's lines 1-%d", ErrLineRange, rg, n)
		}
		if i > 0 && rg.First <= sorted[i-1].Last {
			return fmt.Errorf("pruner: expand: %w: %s and %s overlap", ErrLineRange, sorted[i-1], rg)
		}
	}
	return nil
}

// compatPlaceholders converts the SWE-Pruner renderer's placeholders to
// the Result's (its output lines are 1-based already).
func compatPlaceholders(phs []swecompat.Placeholder) []Placeholder {
	var out []Placeholder
	for _, ph := range phs {
		out = append(out, Placeholder{OutputLine: ph.OutputLine, FirstLine: ph.FirstLine, LastLine: ph.LastLine})
	}
	return out
}

// libraryPlaceholders converts a rendering's placeholders to the Result's
// (1-based output lines).
func libraryPlaceholders(phs []astrepair.Placeholder) []Placeholder {
	var out []Placeholder
	for _, ph := range phs {
		out = append(out, Placeholder{OutputLine: ph.OutputLine + 1, FirstLine: ph.FirstLine, LastLine: ph.LastLine, Names: ph.Names, More: ph.More, Hint: ph.Hint})
	}
	return out
}

// folded says whether any input line is left out. A result can fold lines
// without a placeholder: a budget below the smallest output returns none.
func (r *Result) folded() bool {
	for _, l := range r.Lines {
		if !l.Kept {
			return true
		}
	}
	return false
}
