package tokenizer

import "math"

// Words up to this many bytes are merged with a plain rescan of a rank
// array; longer ones (long runs of spaces, minified lines) use a heap so
// that the cost stays O(n log n).
const smallWord = 48

const noRank = math.MaxUint32

// bpeScratch holds buffers reused across the words of one Encode call.
type bpeScratch struct {
	ids   []int32
	ranks []uint32
	heap  mergeHeap
	next  []int32
	prev  []int32
	long  longScratch
	// cancel, when set, stops the merges of a long word early.
	cancel *canceller
}

// appendWord appends the BPE ids of one pre-token (raw bytes) to dst.
func (t *Tokenizer) appendWord(dst []int32, word string, sc *bpeScratch) []int32 {
	switch len(word) {
	case 0:
		return dst
	case 1:
		return append(dst, t.byteID[word[0]])
	case 2:
		a, b := t.byteID[word[0]], t.byteID[word[1]]
		if r := t.merges.rank(a, b); r != noRank {
			return append(dst, t.merges.mergedByRank[r])
		}
		return append(dst, a, b)
	}
	cacheable := len(word) <= cacheMaxWordSize
	if cacheable {
		if ids, ok := t.cache.get(word); ok {
			return append(dst, ids...)
		}
	}
	n := len(dst)
	switch {
	case len(word) <= smallWord:
		dst = t.mergeSmall(dst, word, sc)
	case len(word) >= longWord && t.monotone:
		var ok bool
		if dst, ok = t.mergeLong(dst, word, sc); !ok {
			dst = t.mergeHeap(dst[:n], word, sc)
		}
	default:
		dst = t.mergeHeap(dst, word, sc)
	}
	if cacheable && !sc.cancel.cancelled() {
		t.cache.put(word, dst[n:])
	}
	return dst
}

// mergeSmall applies the merges by repeatedly taking the lowest-ranked
// adjacent pair, leftmost first: exactly HF's order.
func (t *Tokenizer) mergeSmall(dst []int32, word string, sc *bpeScratch) []int32 {
	ids := sc.ids[:0]
	for i := 0; i < len(word); i++ {
		ids = append(ids, t.byteID[word[i]])
	}
	ranks := sc.ranks[:0]
	for i := 0; i+1 < len(ids); i++ {
		ranks = append(ranks, t.merges.rank(ids[i], ids[i+1]))
	}
	for {
		best, bi := uint32(noRank), -1
		for i, r := range ranks {
			if r < best {
				best, bi = r, i
			}
		}
		if bi < 0 {
			break
		}
		ids[bi] = t.merges.mergedByRank[best]
		ids = append(ids[:bi+1], ids[bi+2:]...)
		ranks = append(ranks[:bi], ranks[bi+1:]...)
		if bi > 0 {
			ranks[bi-1] = t.merges.rank(ids[bi-1], ids[bi])
		}
		if bi < len(ranks) {
			ranks[bi] = t.merges.rank(ids[bi], ids[bi+1])
		}
	}
	sc.ids, sc.ranks = ids, ranks
	return append(dst, ids...)
}

// mergeEntry is a candidate merge of the symbol at pos with its right
// neighbour right, valid while both still hold ids a and b.
type mergeEntry struct {
	rank       uint32
	pos, right int32
	a, b       int32
}

func (e mergeEntry) less(o mergeEntry) bool {
	return e.rank < o.rank || (e.rank == o.rank && e.pos < o.pos)
}

// mergeHeap is a binary min-heap ordered by (rank, position).
type mergeHeap []mergeEntry

func (h *mergeHeap) push(e mergeEntry) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *mergeHeap) pop() mergeEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s[r].less(s[l]) {
			m = r
		}
		if !s[m].less(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// mergeHeap is the O(n log n) version of mergeSmall for long words: symbols
// form a linked list over byte positions and candidate merges sit in a
// heap; entries made stale by earlier merges are skipped when popped.
func (t *Tokenizer) mergeHeap(dst []int32, word string, sc *bpeScratch) []int32 {
	n := len(word)
	ids := sc.ids[:0]
	next, prev := sc.next[:0], sc.prev[:0]
	for i := 0; i < n; i++ {
		ids = append(ids, t.byteID[word[i]])
		next = append(next, int32(i+1))
		prev = append(prev, int32(i-1))
	}
	next[n-1] = -1
	h := sc.heap[:0]
	try := func(p, q int32) {
		if p < 0 || q < 0 {
			return
		}
		if r := t.merges.rank(ids[p], ids[q]); r != noRank {
			h.push(mergeEntry{rank: r, pos: p, right: q, a: ids[p], b: ids[q]})
		}
	}
	for i := 0; i+1 < n; i++ {
		try(int32(i), int32(i+1))
	}
	for len(h) > 0 {
		if sc.cancel.tick(8) {
			break // the caller returns an error, not these ids
		}
		e := h.pop()
		if ids[e.pos] != e.a || next[e.pos] != e.right || ids[e.right] != e.b {
			continue // stale
		}
		ids[e.pos] = t.merges.mergedByRank[e.rank]
		ids[e.right] = -1
		nn := next[e.right]
		next[e.pos] = nn
		if nn >= 0 {
			prev[nn] = e.pos
		}
		try(prev[e.pos], e.pos)
		try(e.pos, nn)
	}
	for i := int32(0); i >= 0; i = next[i] {
		dst = append(dst, ids[i])
	}
	sc.ids, sc.next, sc.prev, sc.heap = ids, next, prev, h
	return dst
}
