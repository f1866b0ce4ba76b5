package tokenizer

import (
	"fmt"
	"math/bits"
)

// mergeTable maps an adjacent pair of token ids to the rank of their merge;
// mergedByRank then gives the id of the merged token. It is an
// open-addressing hash table with linear probing in which each slot is a
// single uint64 holding both ids and the rank: the BPE inner loop does one
// lookup per candidate pair, and one cache line per probe is what makes it
// several times faster than a Go map.
type mergeTable struct {
	slots        []uint64 // a<<42 | b<<21 | rank, or emptySlot
	mergedByRank []int32
	shift        uint
	mask         uint64
}

const (
	mergeBits = 21 // ids and ranks must fit in 21 bits
	mergeMax  = 1<<mergeBits - 1
	emptySlot = ^uint64(0) // bit 63 is never set in a used slot
)

func pairKey(a, b int32) uint64 { return uint64(a)<<(2*mergeBits) | uint64(b)<<mergeBits }

func newMergeTable(n int) mergeTable {
	size := 1 << bits.Len(uint(3*n)) // load factor at most 1/3
	size = max(size, 16)
	t := mergeTable{
		slots:        make([]uint64, size),
		mergedByRank: make([]int32, 0, n),
		mask:         uint64(size - 1),
		shift:        uint(64 - bits.TrailingZeros(uint(size))),
	}
	for i := range t.slots {
		t.slots[i] = emptySlot
	}
	return t
}

func (t *mergeTable) slot(key uint64) uint64 {
	return (key * 0x9E3779B97F4A7C15) >> t.shift
}

// add appends the next merge (its rank is the number of merges added
// before). A duplicate pair takes the later rank, as HF tokenizers' merge
// map does when it is collected from merges.txt.
func (t *mergeTable) add(a, b, merged int32) error {
	rank := len(t.mergedByRank)
	if a < 0 || b < 0 || a > mergeMax || b > mergeMax || rank > mergeMax {
		return fmt.Errorf("more than %d tokens or merges", mergeMax+1)
	}
	t.mergedByRank = append(t.mergedByRank, merged)
	key := pairKey(a, b)
	for i := t.slot(key); ; i = (i + 1) & t.mask {
		if s := t.slots[i]; s == emptySlot || s&^mergeMax == key {
			t.slots[i] = key | uint64(rank)
			return nil
		}
	}
}

// rank returns the rank of the merge of the pair (a, b), or noRank.
func (t *mergeTable) rank(a, b int32) uint32 {
	key := pairKey(a, b)
	for i := t.slot(key); ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s&^mergeMax == key {
			return uint32(s & mergeMax)
		}
		if s == emptySlot {
			return noRank
		}
	}
}
