package astrepair

import (
	"context"
	"math"
	"strings"
)

// ticker spaces out cancellation checks in long loops: stop looks at ctx
// once every tickEvery calls, so a check costs an increment and a branch
// while a deadline is still noticed within microseconds of work.
type ticker struct{ n uint32 }

const tickEvery = 1024

// stop reports whether ctx is done, checking it every tickEvery calls.
func (t *ticker) stop(ctx context.Context) bool {
	t.n++
	if t.n%tickEvery != 0 {
		return false
	}
	return ctx.Err() != nil
}

// csr is a compact list of int32 lists indexed by row (compressed sparse
// rows): list r is data[off[r]:off[r+1]]. It costs 4 bytes per row plus
// 4 per entry, where a [][]int32 costs 24 bytes per row plus an
// allocation per non-empty row.
type csr struct {
	off  []int32
	data []int32
}

// row returns list r; empty for a row out of range or an empty csr.
func (c *csr) row(r int32) []int32 {
	if r < 0 || int(r)+1 >= len(c.off) {
		return nil
	}
	return c.data[c.off[r]:c.off[r+1]:c.off[r+1]]
}

// csrBuilder fills a csr in two passes over the same entries in the same
// order: count every entry, then start, then put every entry. Lists keep
// the order in which their entries were put.
type csrBuilder struct {
	c    csr
	next []int32
}

func newCSRBuilder(rows int) *csrBuilder {
	return &csrBuilder{c: csr{off: make([]int32, rows+1)}}
}

func (b *csrBuilder) count(r int32) { b.c.off[r+1]++ }

// start ends counting and allocates the entries.
func (b *csrBuilder) start() {
	for r := 1; r < len(b.c.off); r++ {
		b.c.off[r] += b.c.off[r-1]
	}
	total := b.c.off[len(b.c.off)-1]
	if total == 0 {
		return // nothing to put
	}
	b.c.data = make([]int32, total)
	b.next = make([]int32, len(b.c.off)-1)
	copy(b.next, b.c.off)
}

func (b *csrBuilder) put(r, v int32) {
	b.c.data[b.next[r]] = v
	b.next[r]++
}

// done returns the csr; one without entries is empty (no offsets).
func (b *csrBuilder) done() csr {
	b.next = nil
	if len(b.c.data) == 0 {
		return csr{}
	}
	return b.c
}

// lineIndex holds where each line of a text ends, terminator included, in
// 4 bytes per line (8 for texts past 4 GiB); starts and content ends follow
// from the text. Lines follow the library's rule (internal/lines.Split): they
// end at '\n' only, a '\r' before the '\n' belongs to the terminator, and a
// final '\n' does not start an empty line.
type lineIndex struct {
	text   string
	term32 []uint32
	term64 []int
}

func newLineIndex(text string) lineIndex {
	li := lineIndex{text: text}
	if text == "" {
		return li
	}
	n := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		n++
	}
	small := len(text) <= math.MaxUint32
	if small {
		li.term32 = make([]uint32, 0, n)
	} else {
		li.term64 = make([]int, 0, n)
	}
	for start := 0; start < len(text); {
		end := len(text)
		if nl := strings.IndexByte(text[start:], '\n'); nl >= 0 {
			end = start + nl + 1
		}
		if small {
			li.term32 = append(li.term32, uint32(end))
		} else {
			li.term64 = append(li.term64, end)
		}
		start = end
	}
	return li
}

// n returns the number of lines.
func (li *lineIndex) n() int {
	if li.term64 != nil {
		return len(li.term64)
	}
	return len(li.term32)
}

// termEnd returns the end of line r including its terminator.
func (li *lineIndex) termEnd(r int) int {
	if li.term64 != nil {
		return li.term64[r]
	}
	return int(li.term32[r])
}

// start returns the first byte of line r.
func (li *lineIndex) start(r int) int {
	if r == 0 {
		return 0
	}
	return li.termEnd(r - 1)
}

// end returns the end of line r's content, without its terminator.
func (li *lineIndex) end(r int) int {
	s, e := li.start(r), li.termEnd(r)
	if e > s && li.text[e-1] == '\n' {
		e--
		if e > s && li.text[e-1] == '\r' {
			e--
		}
	}
	return e
}

// content returns line r without its terminator.
func (li *lineIndex) content(r int) string { return li.text[li.start(r):li.end(r)] }
