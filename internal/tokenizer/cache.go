package tokenizer

import (
	"hash/maphash"
	"sync/atomic"
)

// wordCache remembers the BPE result of recent pre-tokens. Source code
// repeats the same identifiers, keywords and indentation runs constantly, and
// a lookup is far cheaper than re-running the merges.
//
// It is a four-way set-associative table of immutable entries published
// through atomic pointers: readers take no lock, a word whose four slots are
// taken replaces one of the occupants, and the memory is bounded by the slot
// count.
type wordCache struct {
	seed  maphash.Seed
	slots []atomic.Pointer[cacheEntry]
}

const (
	cacheSlots       = 1 << 16
	cacheWays        = 4  // a power of two, at most 4 (victim uses 2 hash bits)
	cacheMaxWordSize = 64 // bytes; longer pre-tokens are rare and not cached
)

type cacheEntry struct {
	word string
	ids  []int32
}

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[cacheEntry], cacheSlots)}
}

// set returns the slots where word may live, and hash bits that pick the
// victim when all of them are taken.
func (c *wordCache) set(word string) ([]atomic.Pointer[cacheEntry], uint64) {
	h := maphash.String(c.seed, word)
	i := h & (cacheSlots - cacheWays)
	return c.slots[i : i+cacheWays : i+cacheWays], h >> 62
}

// get returns the cached ids of word. The slice is shared: never modify it.
func (c *wordCache) get(word string) ([]int32, bool) {
	set, _ := c.set(word)
	for i := range set {
		if e := set[i].Load(); e != nil && e.word == word {
			return e.ids, true
		}
	}
	return nil, false
}

// put stores a private copy of ids for word.
func (c *wordCache) put(word string, ids []int32) {
	// The key is copied so that the cache does not pin the caller's text.
	e := &cacheEntry{word: string([]byte(word)), ids: append([]int32(nil), ids...)}
	set, victim := c.set(word)
	for i := range set {
		if set[i].Load() == nil {
			set[i].Store(e)
			return
		}
	}
	set[victim].Store(e)
}
