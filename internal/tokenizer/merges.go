package tokenizer

import "math/bits"

// mergeTable maps an adjacent pair of token ids to the rank of their merge
// and the id of the merged token. It is an open-addressing hash table with
// linear probing over flat arrays: the BPE inner loop does one lookup per
// candidate pair, and this is several times faster than a Go map there.
type mergeTable struct {
	keys  []uint64 // pairKey(a, b), or emptyKey
	vals  []uint64 // rank<<32 | merged id
	mask  uint64
	shift uint
}

const emptyKey = ^uint64(0)

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func newMergeTable(n int) mergeTable {
	size := 1 << bits.Len(uint(2*n)) // load factor at most 1/2
	if size < 16 {
		size = 16
	}
	t := mergeTable{
		keys:  make([]uint64, size),
		vals:  make([]uint64, size),
		mask:  uint64(size - 1),
		shift: uint(64 - bits.TrailingZeros(uint(size))),
	}
	for i := range t.keys {
		t.keys[i] = emptyKey
	}
	return t
}

func (t *mergeTable) slot(k uint64) uint64 {
	return (k * 0x9E3779B97F4A7C15) >> t.shift
}

// insert adds a merge. A duplicate pair overwrites the earlier entry, as HF
// tokenizers' merge map does when it is collected from merges.txt.
func (t *mergeTable) insert(a, b int32, rank uint32, merged int32) {
	k := pairKey(a, b)
	for i := t.slot(k); ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case emptyKey, k:
			t.keys[i] = k
			t.vals[i] = uint64(rank)<<32 | uint64(uint32(merged))
			return
		}
	}
}

// lookup returns the rank and merged id of the pair (a, b).
func (t *mergeTable) lookup(a, b int32) (rank uint32, merged int32, ok bool) {
	k := pairKey(a, b)
	for i := t.slot(k); ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case k:
			v := t.vals[i]
			return uint32(v >> 32), int32(uint32(v)), true
		case emptyKey:
			return 0, 0, false
		}
	}
}
