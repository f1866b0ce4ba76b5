package tokenizer

// Long pre-tokens (a run of a million spaces, newlines or 'a's, a paragraph
// of CJK text, a run of NULs or invalid bytes) are one word each, and the
// heap merge over a whole word, though O(n log n), runs at under 1 MB/s and
// takes ~180 bytes of memory per byte. mergeLong instead cuts such a word
// into chunks of a few hundred bytes, merges each chunk on its own and
// proves, at every cut, that the merge of the whole word would not have
// joined the two sides; when it cannot prove that, it merges the whole
// word as before. The output is therefore always exactly mergeHeap's.
//
// Why a cut can be checked locally. The merge table is "monotone" when
// every merge using a token as an operand ranks after every merge that
// produces it (true of any table learned by BPE training, Qwen's
// included; checked at load). Then the merges a word goes through pop in
// non-decreasing rank order, so a rank is a point in time. Split the word
// W = A·B and merge A and B separately. Until the first merge across the
// cut, W's merges on each side are exactly A's and B's. That first cross
// merge joins x, a symbol that was at that moment the last of A, with y,
// then the first of B: x is one of the versions of A's last symbol (its
// "right spine") and y one of B's first symbol ("left spine"). Each spine
// version lives until a merge of rank cons consumes it (∞ for the final
// one). The pair (x, y) of rank r would pop before x is consumed iff
// r < cons(x) (at equal rank the merge consuming x sits further left and
// wins) and before y is consumed iff r <= cons(y) (the consuming merge sits
// further right and loses). If no pair of the two spines passes both tests,
// no merge ever crosses the cut and merge(W) = merge(A) ++ merge(B). The
// same argument over the first cross merge at any of several cuts makes a
// check of each cut against its two neighbouring chunks sufficient.

const (
	// longWord is the length from which a word is merged in chunks.
	longWord = 256
	// chunkProbe is the size of the window merged to choose a cut.
	chunkProbe = 256
	// memoEntries bounds the per-call memo of chunk merges.
	memoEntries = 512
)

// spineSym is one version of a word's first or last symbol: its id and the
// rank of the merge that consumed it (noRank for the final version).
type spineSym struct {
	id   int32
	cons uint32
}

// chunkResult is a chunk's merge with its spines.
type chunkResult struct {
	ids         []int32
	left, right []spineSym
}

// longScratch is mergeLong's per-call state.
type longScratch struct {
	memo map[string]*chunkResult
	rec  chunkResult // scratch for a recorded merge
}

// monotone reports whether every live merge ranks after every merge
// producing either of its operands (see above). size is the vocabulary
// size.
func (t *mergeTable) monotone(size int) bool {
	created := make([]int64, size) // highest rank producing the id, -1 if none
	for i := range created {
		created[i] = -1
	}
	for _, s := range t.slots {
		if s == emptySlot {
			continue
		}
		r := s & mergeMax
		c := t.mergedByRank[r]
		if c < 0 || int(c) >= size {
			return false
		}
		created[c] = max(created[c], int64(r))
	}
	for _, s := range t.slots {
		if s == emptySlot {
			continue
		}
		r := int64(s & mergeMax)
		a, b := int32(s>>(2*mergeBits)&mergeMax), int32(s>>mergeBits&mergeMax)
		if int(a) >= size || int(b) >= size || created[a] >= r || created[b] >= r {
			return false
		}
	}
	return true
}

// safeCut reports whether no merge can cross a cut between a chunk whose
// last symbol went through right and one whose first went through left.
func (t *Tokenizer) safeCut(right, left []spineSym) bool {
	for _, x := range right {
		for _, y := range left {
			if r := t.merges.rank(x.id, y.id); r != noRank && r < x.cons && r <= y.cons {
				return false
			}
		}
	}
	return true
}

// chunk returns the merge of one chunk of a long word, memoised: long runs
// repeat the same chunks.
func (t *Tokenizer) chunk(s string, sc *bpeScratch) *chunkResult {
	ls := &sc.long
	if r, ok := ls.memo[s]; ok {
		return r
	}
	rec := &ls.rec
	rec.ids = t.mergeHeapRec(rec.ids[:0], s, sc, rec)
	r := &chunkResult{
		ids:   append([]int32(nil), rec.ids...),
		left:  append([]spineSym(nil), rec.left...),
		right: append([]spineSym(nil), rec.right...),
	}
	if ls.memo == nil || len(ls.memo) >= memoEntries {
		ls.memo = make(map[string]*chunkResult)
	}
	ls.memo[s] = r
	return r
}

// mergeLong appends the merge of a long word to dst (see the top of the
// file), or reports false, leaving dst's contents beyond len(dst) undefined,
// when some cut could not be proved safe.
func (t *Tokenizer) mergeLong(dst []int32, word string, sc *bpeScratch) ([]int32, bool) {
	ok := t.walkLong(word, sc, func(ids []int32) { dst = append(dst, ids...) })
	return dst, ok
}

// countLong returns the number of tokens of a long word, or false as
// mergeLong does.
func (t *Tokenizer) countLong(word string, sc *bpeScratch) (int, bool) {
	n := 0
	ok := t.walkLong(word, sc, func(ids []int32) { n += len(ids) })
	return n, ok
}

// walkLong merges a long word chunk by chunk, passing each chunk's ids to
// emit once its cut is proved safe; it reports false as soon as one cannot
// be (the ids already emitted are then to be discarded).
func (t *Tokenizer) walkLong(word string, sc *bpeScratch, emit func([]int32)) bool {
	n := len(word)
	var pending []int32
	var prevRight []spineSym
	for pos := 0; pos < n; {
		if sc.cancel.tick(chunkProbe) {
			return true // the caller returns an error, not these ids
		}
		end := n
		if n-pos > 2*chunkProbe {
			// Cut at a token start of the probe window's merge, away from
			// both of its ends, where the merge is least disturbed by the
			// window's edges.
			probe := t.chunk(word[pos:pos+chunkProbe], sc)
			lo, hi := pos+chunkProbe/4, pos+chunkProbe*3/4
			end = -1
			p := pos
			for _, id := range probe.ids {
				if p > hi {
					break
				}
				if p >= lo {
					end = p
				}
				p += int(t.tokLen[id])
			}
			if end < 0 {
				return false
			}
		}
		c := t.chunk(word[pos:end], sc)
		if prevRight != nil {
			if !t.safeCut(prevRight, c.left) {
				return false
			}
			emit(pending)
		}
		pending, prevRight = c.ids, c.right
		pos = end
	}
	emit(pending)
	return true
}

// mergeHeapRec is mergeHeap also recording the word's spines in rec.
func (t *Tokenizer) mergeHeapRec(dst []int32, word string, sc *bpeScratch, rec *chunkResult) []int32 {
	n := len(word)
	ids := sc.ids[:0]
	next, prev := sc.next[:0], sc.prev[:0]
	for i := 0; i < n; i++ {
		ids = append(ids, t.byteID[word[i]])
		next = append(next, int32(i+1))
		prev = append(prev, int32(i-1))
	}
	next[n-1] = -1
	left, right := rec.left[:0], rec.right[:0]
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
		e := h.pop()
		if ids[e.pos] != e.a || next[e.pos] != e.right || ids[e.right] != e.b {
			continue // stale
		}
		if e.pos == 0 {
			left = append(left, spineSym{e.a, e.rank})
		}
		nn := next[e.right]
		if nn < 0 {
			right = append(right, spineSym{e.b, e.rank})
		}
		ids[e.pos] = t.merges.mergedByRank[e.rank]
		ids[e.right] = -1
		next[e.pos] = nn
		if nn >= 0 {
			prev[nn] = e.pos
		}
		try(prev[e.pos], e.pos)
		try(e.pos, nn)
	}
	left = append(left, spineSym{ids[0], noRank})
	last := int32(0)
	for i := int32(0); i >= 0; i = next[i] {
		dst = append(dst, ids[i])
		last = i
	}
	right = append(right, spineSym{ids[last], noRank})
	rec.left, rec.right = left, right
	sc.ids, sc.next, sc.prev, sc.heap = ids, next, prev, h
	return dst
}
