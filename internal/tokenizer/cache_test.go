package tokenizer

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWordCache overfills the cache: every lookup must return the ids
// stored for that very word or miss, the number of live entries never
// exceeds the slot count, and stored ids are private copies.
func TestWordCache(t *testing.T) {
	c := newWordCache()
	const n = 3 * cacheSlots
	buf := []int32{0}
	for i := 0; i < n; i++ {
		buf[0] = int32(i)
		c.put("w"+strconv.Itoa(i), buf)
	}
	buf[0] = -1 // must not leak into the cache
	hits := 0
	for i := 0; i < n; i++ {
		ids, ok := c.get("w" + strconv.Itoa(i))
		if ok {
			hits++
			require.Equal(t, []int32{int32(i)}, ids)
		}
	}
	require.LessOrEqual(t, hits, cacheSlots)
	require.Greater(t, hits, cacheSlots/2, "the cache should stay mostly full")
	_, ok := c.get("never stored")
	require.False(t, ok)
}
