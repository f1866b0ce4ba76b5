package astrepair

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrUnknownName is wrapped by the error Lookup returns for a name that
// names no definition or record of the text (see UnknownNameError).
var ErrUnknownName = errors.New("unknown name")

// UnknownNameError is the error of a name Lookup cannot find: it lists the
// text's names closest to it, so a reader can ask again.
type UnknownNameError struct {
	Name    string   // the name asked for (cut to 64 bytes)
	Closest []string // up to five names of the text, closest first
}

func (e *UnknownNameError) Error() string {
	msg := fmt.Sprintf("%v: %q names no definition or record of the text", ErrUnknownName, e.Name)
	if len(e.Closest) == 0 {
		return msg + " (it has none to unfold by name; ask for a line range)"
	}
	return msg + "; closest: " + strings.Join(e.Closest, ", ")
}

func (e *UnknownNameError) Unwrap() error { return ErrUnknownName }

// Match is a definition or record a name stands for.
type Match struct {
	// Label is its name as placeholders print it in full (`func (c
	// *Client) do`, `--- FAIL: TestParse/case_01`).
	Label string
	// First and Last are the 1-based input lines it spans: a definition
	// with its decorators and doc comment, a record with the lines that
	// belong to it (a test's indented output, a commit's message and
	// diff, the lines of one file in grep output).
	First, Last int
}

// Lookup returns what name stands for among the definitions (code) or
// records (tool output) that placeholders name: the names a placeholder
// prints (`func (c *Client) do`, its short form `func do`, `class Retry`,
// `--- FAIL: TestParse/case_01`, a path, a commit subject), a bare or
// qualified identifier (`do`, `Client.do`, `Retry.__init__`), the tail of a
// record's label (`TestParse/case_01`), or a label a placeholder cut
// (`func IsDefaultVi…`). Blanks are collapsed; a match that ignores case
// counts only when none respects it.
//
// When a name matches a definition and one nested in it, the nested
// (smallest) one is returned; a name that matches several definitions side
// by side (two classes' `__init__`) returns each, in line order, and a
// label shared by records returns each record. A name that matches
// nothing fails with an *UnknownNameError (ErrUnknownName) listing the
// closest names.
func (a *Analysis) Lookup(name string) ([]Match, error) {
	if m, ok := a.Find(name); ok {
		return m, nil
	}
	q := strings.Join(strings.Fields(name), " ")
	if q == "" {
		return nil, fmt.Errorf("%w: empty name", ErrUnknownName)
	}
	return nil, &UnknownNameError{Name: cutBytes(q, 64), Closest: a.closest(q, 5)}
}

// Find is Lookup without the error: ok is false when name matches
// nothing, and the search for the closest names is skipped. It reads each
// name of the text at most six times and allocates nothing per name.
func (a *Analysis) Find(name string) (_ []Match, ok bool) {
	q := strings.Join(strings.Fields(name), " ")
	if q == "" {
		return nil, false
	}
	var hits []int
	for _, tier := range []func(n *nameRow, q string, fold bool) bool{matchLabel, matchKey, matchPart} {
		for _, fold := range []bool{false, true} {
			for k := range a.names {
				if tier(&a.names[k], q, fold) {
					hits = append(hits, k)
				}
			}
			if len(hits) > 0 {
				return a.smallest(hits), true
			}
		}
	}
	return nil, false
}

// same compares as the tier asks: exactly, or ignoring case.
func same(a, b string, fold bool) bool {
	if fold {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// hasPrefix is strings.HasPrefix, ignoring case when fold is set.
func hasPrefix(s, prefix string, fold bool) bool {
	return len(s) >= len(prefix) && same(s[:len(prefix)], prefix, fold)
}

// matchLabel: q is the label or the short form a placeholder prints, or a
// label cut with "…" (q without the "…" starts it).
func matchLabel(n *nameRow, q string, fold bool) bool {
	if same(q, n.label, fold) || n.short != "" && same(q, n.short, fold) {
		return true
	}
	if cut, ok := strings.CutSuffix(q, "…"); ok && utf8.RuneCountInString(cut) >= 3 {
		return hasPrefix(n.label, cut, fold) || n.short != "" && hasPrefix(n.short, cut, fold)
	}
	return false
}

// matchKey: q is the definition's bare or qualified name.
func matchKey(n *nameRow, q string, fold bool) bool {
	return n.key != "" && same(q, n.key, fold) || n.qual != "" && same(q, n.qual, fold)
}

// matchPart: q is a whole part of the label, between blanks, colons,
// slashes or brackets (`TestParse/case_01` of `--- PASS:
// TestParse/case_01`, `parser.go` of `pkg/parser.go`).
func matchPart(n *nameRow, q string, fold bool) bool {
	l := n.label
	if len(q) > len(l) || q == "" {
		return false
	}
	c := lowerASCII(q[0])
	for k := 0; k+len(q) <= len(l); k++ {
		if lowerASCII(l[k]) != c || k > 0 && !isNameBoundary(l[k-1]) {
			continue
		}
		end := k + len(q)
		if (end == len(l) || isNameBoundary(l[end])) && same(l[k:end], q, fold) {
			return true
		}
	}
	return false
}

func isNameBoundary(c byte) bool { return strings.IndexByte(" \t:/()[]\"'`,", c) >= 0 }

// smallest returns the matches of the names hits (indexes in a.names),
// without those that hold another match, distinct by rows, in line order.
func (a *Analysis) smallest(hits []int) []Match {
	var out []Match
	for _, k := range hits {
		n := &a.names[k]
		m := Match{Label: n.label, First: int(n.first) + 1, Last: int(n.last) + 1}
		holds := false
		for _, j := range hits {
			o := &a.names[j]
			if j != k && o.first >= n.first && o.last <= n.last && (o.first != n.first || o.last != n.last) {
				holds = true
				break
			}
		}
		if !holds && !slices.ContainsFunc(out, func(x Match) bool { return x.First == m.First && x.Last == m.Last }) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(x, y Match) int { return x.First - y.First })
	return out
}

// closest returns up to k distinct labels of the text nearest q: those
// that contain it first, then by edit distance of the label, the bare
// or the qualified name, whichever is least, ties to the earlier row.
func (a *Analysis) closest(q string, k int) []string {
	if len(a.names) == 0 {
		return nil
	}
	type cand struct {
		label string
		score int
		row   int32
	}
	var cs []cand
	seen := map[string]bool{}
	measured := 0
	for _, n := range a.names {
		if seen[n.label] {
			continue
		}
		seen[n.label] = true
		// A label that holds the whole name beats one a letter away.
		if containsFold(n.label, q) {
			cs = append(cs, cand{n.label, 1, n.row})
			continue
		}
		if measured == maxClosestMeasured {
			continue // a huge text: its first labels are measured, all are searched for q
		}
		measured++
		d := editDistance(q, n.label, 64)
		if n.key != "" {
			d = min(d, editDistance(q, n.key, 64))
		}
		if n.qual != "" {
			d = min(d, editDistance(q, n.qual, 64))
		}
		cs = append(cs, cand{n.label, 2 * d, n.row})
	}
	slices.SortStableFunc(cs, func(x, y cand) int {
		if x.score != y.score {
			return x.score - y.score
		}
		return int(x.row - y.row)
	})
	var out []string
	for _, c := range cs[:min(k, len(cs))] {
		out = append(out, c.label)
	}
	return out
}

// maxClosestMeasured bounds the labels whose edit distance to an unknown
// name is measured (the first ones, in row order): a log of a million
// records would take seconds for a list of suggestions.
const maxClosestMeasured = 20000

// containsFold reports whether s holds sub, ignoring case.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	c := lowerASCII(sub[0])
	for k := 0; k+len(sub) <= len(s); k++ {
		if lowerASCII(s[k]) == c && strings.EqualFold(s[k:k+len(sub)], sub) {
			return true
		}
	}
	return false
}

// editDistance is the Levenshtein distance of a and b in bytes, ASCII
// letters compared without case, capped at
// limit (longer strings are compared by their first limit bytes, so a
// name of megabytes costs no more than a short one).
func editDistance(a, b string, limit int) int {
	a, b = a[:min(len(a), limit)], b[:min(len(b), limit)]
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if lowerASCII(a[i-1]) != lowerASCII(b[j-1]) {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// cutBytes cuts s to at most n bytes at a character boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// hintWindow is how many lines around a fold's best line a hint shows when
// no definition or record holds that line: on the val split (labelled
// code and tool questions, 10% of lines), one unfold of the fold's best
// line's definition, else its ±5 lines, lifted recall from 0.574 to 0.710
// (code) and from 0.700 to 0.787 (tool) for 6 and 8 more points of the
// input's lines read, where unfolding the fold whose names matched the
// question lifted it to 0.684 and 0.739 for 30 and 12 points.
const hintWindow = 5

// Hint returns what to unfold to read line (1-based) of the fold
// first..last in its context: the smallest definition or record within the
// fold that holds it, named by a name Lookup resolves to exactly its lines
// (its label, else its qualified name), else its lines as a range; without
// such a definition or record, the lines within hintWindow of line, as a
// range.
func (a *Analysis) Hint(line, first, last int) Hint {
	r := int32(line - 1)
	best := -1
	for k := range a.names {
		n := &a.names[k]
		if n.first > r || n.last < r || int(n.first) < first-1 || int(n.last) > last-1 {
			continue
		}
		if best < 0 || n.last-n.first < a.names[best].last-a.names[best].first {
			best = k
		}
	}
	if best < 0 {
		lo, hi := max(first, line-hintWindow), min(last, line+hintWindow)
		return Hint{Item: LineSpan(lo, hi), First: lo, Last: hi}
	}
	n := &a.names[best]
	h := Hint{First: int(n.first) + 1, Last: int(n.last) + 1}
	for _, name := range []string{n.label, n.qual} {
		if name == "" {
			continue
		}
		if ms, ok := a.Find(name); ok && len(ms) == 1 && ms[0].First == h.First && ms[0].Last == h.Last {
			h.Item = name
			return h
		}
	}
	h.Item = LineSpan(h.First, h.Last)
	return h
}

// LineSpan formats lines first..last as placeholders print them: "40-51",
// or "40" for one line.
func LineSpan(first, last int) string {
	if first == last {
		return strconv.Itoa(first)
	}
	return strconv.Itoa(first) + "-" + strconv.Itoa(last)
}
