package tokenizer

import (
	"hash/maphash"
	"sync"
)

// wordCache remembers the BPE result of recent pre-tokens. Source code
// repeats the same identifiers, keywords and indentation runs constantly, and
// a lookup is far cheaper than re-running the merges. It is sharded to keep
// lock contention low under concurrent use and bounded: a shard that fills
// up is emptied, which keeps memory flat without LRU bookkeeping.
type wordCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

const (
	cacheShards      = 64
	cachePerShard    = 2048
	cacheMaxWordSize = 64 // bytes; longer pre-tokens are rare and not cached
)

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int32
}

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed()}
}

func (c *wordCache) shard(word string) *cacheShard {
	return &c.shards[maphash.String(c.seed, word)%cacheShards]
}

// get returns the cached ids of word. The slice is shared: never modify it.
func (c *wordCache) get(word string) ([]int32, bool) {
	s := c.shard(word)
	s.mu.RLock()
	ids, ok := s.m[word]
	s.mu.RUnlock()
	return ids, ok
}

// put stores a private copy of ids for word.
func (c *wordCache) put(word string, ids []int32) {
	s := c.shard(word)
	own := append([]int32(nil), ids...)
	key := string([]byte(word)) // do not pin the caller's (possibly huge) text
	s.mu.Lock()
	if s.m == nil || len(s.m) >= cachePerShard {
		s.m = make(map[string][]int32, cachePerShard/4)
	}
	s.m[key] = own
	s.mu.Unlock()
}
