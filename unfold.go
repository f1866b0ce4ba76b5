package pruner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prunekit/pruner/astrepair"
)

// ErrUnknownName is wrapped by Unfold's error for a name that names no
// definition or record of the input; the error lists the closest names
// (errors.As with *astrepair.UnknownNameError gives them as a slice).
var ErrUnknownName = astrepair.ErrUnknownName

// Expansion records what one item of Unfold showed.
type Expansion struct {
	// Item is the item as asked ("120-159", "readEvents").
	Item string `json:"item"`
	// Lines are the input lines it shows: the range itself, or the lines
	// of each definition or record the name stands for.
	Lines []LineRange `json:"lines"`
	// Names are the full labels of the definitions or records a name
	// stands for, one per entry of Lines (none for a range).
	Names []string `json:"names,omitempty"`
}

// MaxUnfoldNames bounds the names one Unfold call looks up (ranges are not
// counted): each lookup reads every name of the input, so a request of
// thousands of names would cost as much as thousands of prunes.
const MaxUnfoldNames = 64

// ErrTooManyNames is returned by Unfold for more than MaxUnfoldNames names.
var ErrTooManyNames = errors.New("too many names")

// Unfold returns a copy of r with the lines of each item shown in full,
// as Expand does for ranges. An item is what a placeholder prints:
//   - a line range, "120-159" or "7", or a list of them, "120-159,300";
//   - a name of a definition or record: `readEvents`, `func (c *Client)
//     do` (or its short form `func do`), `Client.do`, `class Retry`,
//     `TestParse/case_01`, a path of grep or compiler output, a commit
//     subject, a label a placeholder cut (`func IsDefaultVi…`). A name
//     shows the smallest definition or record it names (its decorators and
//     doc comment, a test's output, a commit's message, a file's grep
//     lines); a name that matches several side by side shows each;
//   - several of these separated by commas, "readEvents, 120-159" (an item
//     that is itself a name holding commas, such as a commit subject, is
//     taken whole first).
//
// A name that matches nothing is refused with an error wrapping
// ErrUnknownName that lists the input's closest names; more than
// MaxUnfoldNames names are refused (ErrTooManyNames); ranges are checked
// as Expand checks them (ErrLineRange), though a name's lines may overlap
// anything. Each item is recorded in the copy's Expanded, after r's; the
// copy's new lines have Reason ReasonExpanded. A Result that does not hold
// its input (decoded from JSON) cannot be unfolded (ErrNotExpandable).
func (r *Result) Unfold(ctx context.Context, items ...string) (*Result, error) {
	var asked []LineRange // ranges as asked: they must not overlap
	var exps []Expansion
	var a *astrepair.Analysis
	names := 0
	// lookup looks name up; with report unset a name that matches nothing
	// is a plain ErrUnknownName, without the search for the closest names
	// (a comma list tried whole before its parts).
	lookup := func(name string, report bool) ([]astrepair.Match, error) {
		// A list tried whole is not one more name (CheckUnfoldItems
		// counts its parts).
		if report {
			names++
		}
		if names > MaxUnfoldNames {
			return nil, fmt.Errorf("pruner: expand: %w: more than %d in one call", ErrTooManyNames, MaxUnfoldNames)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("pruner: expand: %w", err)
		}
		if a == nil {
			if r.src == nil {
				return nil, fmt.Errorf("pruner: expand: %w: it does not hold its input (decoded from JSON?); prune the text again", ErrNotExpandable)
			}
			var err error
			if a, err = r.src.analysis(ctx); err != nil {
				return nil, fmt.Errorf("pruner: expand: %w", err)
			}
		}
		if !report {
			if ms, ok := a.Find(name); ok {
				return ms, nil
			}
			return nil, ErrUnknownName
		}
		return a.Lookup(name)
	}
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("pruner: expand: %w: an empty item (want a line range such as 120-159 or a name a placeholder prints)", ErrLineRange)
		}
		got, err := resolveItem(item, lookup, true)
		if err != nil {
			return nil, err
		}
		for _, e := range got {
			if e.Names == nil {
				asked = append(asked, e.Lines...)
			}
		}
		exps = append(exps, got...)
	}
	if err := checkRanges(asked, len(r.Lines)); err != nil {
		return nil, err
	}
	var all []LineRange
	for _, e := range exps {
		all = append(all, e.Lines...)
	}
	out, err := r.expand(ctx, mergeRanges(all), a)
	if err != nil {
		return nil, err
	}
	// Every call's items are recorded, an item asked again too: a front
	// door describes a call's unfolds by the entries it added.
	out.Expanded = append(slices.Clone(r.Expanded), exps...)
	return out, nil
}

// CheckUnfoldItems returns the error Unfold would return for items before
// any text is read: an empty item, a malformed range, or more than
// MaxUnfoldNames names (each comma-separated part that is not a range
// counts, so a name holding commas counts once per part). Front doors use
// it to refuse a request before pruning.
func CheckUnfoldItems(items ...string) error {
	names := 0
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return fmt.Errorf("pruner: expand: %w: an empty item (want a line range such as 120-159 or a name a placeholder prints)", ErrLineRange)
		}
		for _, part := range splitItems(item) {
			if !startsWithDigit(part) {
				names++
				continue
			}
			if _, err := ParseLineRanges(part); err != nil {
				return fmt.Errorf("pruner: expand: %w", err)
			}
		}
	}
	if names > MaxUnfoldNames {
		return fmt.Errorf("pruner: expand: %w: %d names, at most %d in one call", ErrTooManyNames, names, MaxUnfoldNames)
	}
	return nil
}

// resolveItem resolves one item: a range list, a name, or (split, when
// split is set) a comma-separated list of these.
func resolveItem(item string, lookup func(name string, report bool) ([]astrepair.Match, error), split bool) ([]Expansion, error) {
	parts := splitItems(item)
	if startsWithDigit(item) && !strings.Contains(item, ",") || len(parts) > 0 && !slices.ContainsFunc(parts, func(p string) bool { return !startsWithDigit(p) }) {
		rs, err := ParseLineRanges(item)
		if err != nil {
			return nil, fmt.Errorf("pruner: expand: %w", err)
		}
		return []Expansion{{Item: item, Lines: rs}}, nil
	}
	whole := !split || len(parts) < 2 // no parts to fall back on: report an unknown name
	ms, err := lookup(item, whole)
	if err == nil {
		e := Expansion{Item: item, Names: []string{}}
		for _, m := range ms {
			e.Lines = append(e.Lines, LineRange{First: m.First, Last: m.Last})
			e.Names = append(e.Names, m.Label)
		}
		return []Expansion{e}, nil
	}
	if !errors.Is(err, ErrUnknownName) {
		return nil, err // the lookup's own error, already saying expand
	}
	if whole {
		return nil, fmt.Errorf("pruner: expand: %w", err)
	}
	var out []Expansion
	for _, p := range parts {
		got, err := resolveItem(p, lookup, false)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// startsWithDigit reports an item that can only be line numbers: names do
// not start with a digit, so "12-x" is a malformed range, not a name.
func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// splitItems splits s at the commas outside brackets (a Go generic
// receiver `(l *List[K, V])` is one name), dropping empty parts.
func splitItems(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(', '[', '{', '<':
				depth++
				continue
			case ')', ']', '}', '>':
				depth = max(depth-1, 0)
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if p := strings.TrimSpace(s[start:i]); p != "" {
			out = append(out, p)
		}
		start = i + 1
	}
	return out
}

// mergeRanges returns the union of rs as sorted disjoint ranges.
func mergeRanges(rs []LineRange) []LineRange {
	if len(rs) == 0 {
		return nil
	}
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b LineRange) int { return a.First - b.First })
	out := []LineRange{s[0]}
	for _, r := range s[1:] {
		last := &out[len(out)-1]
		if r.First <= last.Last+1 {
			last.Last = max(last.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// analysis analyses the input for names: its parse when it is code, its
// records when not.
func (s *expandSource) analysis(ctx context.Context) (*astrepair.Analysis, error) {
	if s.compat {
		// Its lines are Python's splitlines, which the names' rows do not
		// follow.
		return nil, fmt.Errorf("%w: a SWE-Pruner compatible result unfolds by line ranges only", ErrNotExpandable)
	}
	return astrepair.Analyze(ctx, s.text, s.lang)
}
