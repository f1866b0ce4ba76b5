package tokenizer

import (
	"hash/maphash"
	"sync/atomic"
)

// wordCache remembers the BPE result of recent pre-tokens. Source code
// repeats the same identifiers, keywords and indentation runs constantly, and
// a lookup is far cheaper than re-running the merges.
//
// It is a two-way set-associative table of immutable entries published
// through atomic pointers: readers take no lock, a word whose two slots are
// taken replaces one of the occupants, and the memory is bounded by the slot
// count.
type wordCache struct {
	seed  maphash.Seed
	slots []atomic.Pointer[cacheEntry]
}

const (
	cacheSlots       = 1 << 16
	cacheMaxWordSize = 64 // bytes; longer pre-tokens are rare and not cached
)

type cacheEntry struct {
	word string
	ids  []int32
}

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[cacheEntry], cacheSlots)}
}

// set returns the two slots where word may live, and a bit of the hash
// that picks the victim when both are taken.
func (c *wordCache) set(word string) (*atomic.Pointer[cacheEntry], *atomic.Pointer[cacheEntry], bool) {
	h := maphash.String(c.seed, word)
	i := h & (cacheSlots - 2)
	return &c.slots[i], &c.slots[i+1], h>>63 != 0
}

// get returns the cached ids of word. The slice is shared: never modify it.
func (c *wordCache) get(word string) ([]int32, bool) {
	a, b, _ := c.set(word)
	if e := a.Load(); e != nil && e.word == word {
		return e.ids, true
	}
	if e := b.Load(); e != nil && e.word == word {
		return e.ids, true
	}
	return nil, false
}

// put stores a private copy of ids for word.
func (c *wordCache) put(word string, ids []int32) {
	// The key is copied so that the cache does not pin the caller's text.
	e := &cacheEntry{word: string([]byte(word)), ids: append([]int32(nil), ids...)}
	a, b, second := c.set(word)
	switch {
	case a.Load() == nil:
		a.Store(e)
	case b.Load() == nil:
		b.Store(e)
	case second:
		b.Store(e)
	default:
		a.Store(e)
	}
}
