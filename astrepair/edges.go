package astrepair

import (
	"context"
	"fmt"
	"sort"
)

// The methods in this file expose the dependency graph that Repair walks,
// for rubric labelling and for callers that budget with repair costs.

func (a *Analysis) checkRows(rows []int) error {
	for _, r := range rows {
		if r < 0 || r >= a.lines.n() {
			return fmt.Errorf("line %d of %d: %w", r, a.lines.n(), ErrLineRange)
		}
	}
	return nil
}

// Structure returns the lines that the given lines need structurally:
// enclosing scope headers, control-flow headers and companions, and the
// rest of the statements, strings and bracket groups they belong to. A
// given line appears in the result only when another given line needs it
// (a kept class header needed by a kept method line). Trivial returns and
// dependency hops are not followed. The result is sorted.
func (a *Analysis) Structure(ctx context.Context, rows []int) ([]int, error) {
	if err := a.checkRows(rows); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("structure: %w", err)
	}
	if !a.parsed {
		return nil, nil
	}
	input := make(map[int32]bool, len(rows))
	sorted := make([]int, 0, len(rows))
	for _, r := range rows {
		if !input[int32(r)] {
			input[int32(r)] = true
			sorted = append(sorted, r)
		}
	}
	sort.Ints(sorted)
	out := map[int32]bool{}
	done := map[int32]bool{}
	var queue []int32
	var tk ticker
	push := func(r int32) {
		if input[r] || out[r] {
			return
		}
		out[r] = true
		queue = append(queue, r)
	}
	// Items are done when their skeleton is pushed; done is upward closed,
	// so each item is visited once.
	visit := func(from int32) bool {
		for _, it := range a.rowItems.row(from) {
			for j := it; j >= 0 && !done[j]; j = a.items[j].parent {
				if tk.stop(ctx) {
					return false
				}
				done[j] = true
				for _, sk := range a.skelOf(j) {
					if tk.stop(ctx) {
						return false
					}
					push(sk.row)
				}
			}
		}
		return true
	}
	for _, r := range sorted {
		if !visit(int32(r)) {
			return nil, fmt.Errorf("structure: %w", ctx.Err())
		}
	}
	for len(queue) > 0 {
		r := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if !visit(r) {
			return nil, fmt.Errorf("structure: %w", ctx.Err())
		}
	}
	// A given line is needed by another given line when one of its items
	// spans that other line (a class header and a kept method line).
	for _, r := range sorted {
		for _, it := range a.rowItems.row(int32(r)) {
			if tk.stop(ctx) {
				return nil, fmt.Errorf("structure: %w", ctx.Err())
			}
			lo := sort.SearchInts(sorted, int(a.items[it].start))
			hi := sort.SearchInts(sorted, int(a.items[it].end)+1)
			if hi-lo > 1 {
				out[int32(r)] = true
				break
			}
		}
	}
	return sortedRows(out), nil
}

// Definitions returns the lines that define names used on line: imports
// and file-level definitions (functions, classes, types, constants).
func (a *Analysis) Definitions(ctx context.Context, line int) ([]int, error) {
	if err := a.checkRows([]int{line}); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("definitions: %w", err)
	}
	if !a.parsed {
		return nil, nil
	}
	var tk ticker
	out := map[int32]bool{}
	for _, id := range a.useNames.row(int32(line)) {
		for _, d := range a.defRows[id] {
			if tk.stop(ctx) {
				return nil, fmt.Errorf("definitions: %w", ctx.Err())
			}
			out[d] = true
		}
	}
	return sortedRows(out), nil
}

// CallSites returns the lines that use a name defined on line by a
// definition that is not an import (uses of imported names are everywhere
// and say little).
func (a *Analysis) CallSites(ctx context.Context, line int) ([]int, error) {
	if err := a.checkRows([]int{line}); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("call sites: %w", err)
	}
	if !a.parsed {
		return nil, nil
	}
	var tk ticker
	out := map[int32]bool{}
	for _, id := range a.rowDefs.row(int32(line)) {
		if a.imported[id] {
			continue
		}
		for _, u := range a.useRows[id] {
			if tk.stop(ctx) {
				return nil, fmt.Errorf("call sites: %w", ctx.Err())
			}
			if int(u) != line {
				out[u] = true
			}
		}
	}
	return sortedRows(out), nil
}

func sortedRows(m map[int32]bool) []int {
	out := make([]int, 0, len(m))
	for r := range m {
		out = append(out, int(r))
	}
	sort.Ints(out)
	return out
}

// Linked returns the lines one dependency edge away from any of rows: the
// union of Definitions and CallSites over rows, sorted. The work is linear
// in rows and in the uses and definitions of the names on them, however
// many of rows share a name (calling Definitions and CallSites per row
// costs rows × definitions when they do).
func (a *Analysis) Linked(ctx context.Context, rows []int) ([]int, error) {
	if err := a.checkRows(rows); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("linked: %w", err)
	}
	if !a.parsed {
		return nil, nil
	}
	var tk ticker
	stop := func() error {
		if tk.stop(ctx) {
			return fmt.Errorf("linked: %w", ctx.Err())
		}
		return nil
	}
	in := make([]bool, a.lines.n())
	var out []int32
	put := func(r int32) {
		if !in[r] {
			in[r] = true
			out = append(out, r)
		}
	}
	// Definitions: each used name's definitions once.
	named := make([]bool, len(a.defRows))
	// Call sites: a name's uses, less its definition row when only one of
	// rows defines it (CallSites(r) leaves r out).
	definer := make(map[int32]int32) // id -> 1 + the one row defining it, or -1
	var defined []int32              // ids in definer, in order
	for _, r := range rows {
		for _, id := range a.useNames.row(int32(r)) {
			if err := stop(); err != nil {
				return nil, err
			}
			if named[id] {
				continue
			}
			named[id] = true
			for _, d := range a.defRows[id] {
				if err := stop(); err != nil {
					return nil, err
				}
				put(d)
			}
		}
		for _, id := range a.rowDefs.row(int32(r)) {
			if err := stop(); err != nil {
				return nil, err
			}
			if a.imported[id] {
				continue
			}
			switch d, ok := definer[id]; {
			case !ok:
				definer[id] = int32(r) + 1
				defined = append(defined, id)
			case d != int32(r)+1:
				definer[id] = -1
			}
		}
	}
	for _, id := range defined {
		except := definer[id] - 1 // -2 when two rows define it: no exception
		for _, u := range a.useRows[id] {
			if err := stop(); err != nil {
				return nil, err
			}
			if u != except {
				put(u)
			}
		}
	}
	return sortedInts(out), nil
}
