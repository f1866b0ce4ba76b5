package pruner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultKeepsBoundedShareOfLongText: at the default threshold the
// line model's nucleus is measured among its best 1,000 lines, so a long
// log that does not answer the question keeps a bounded number of lines,
// not a share that grows with its length. The relevance gate is off: it
// is the nucleus under test.
func TestDefaultKeepsBoundedShareOfLongText(t *testing.T) {
	if testing.Short() {
		t.Skip("scores 40,000 lines")
	}
	ctx := context.Background()
	p, err := Load(ctx, "", WithFileName("service.log"), WithMinRelevance(0))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields("worker queue job batch shard lease tick flush cache index segment compact merge snapshot replica leader follower vote term commit apply wal fsync checkpoint")
	for _, n := range []int{10_000, 40_000} {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "2025-09-01T10:%02d:%02d.%03dZ INFO %s %s %s id=%d took=%dms\n", i/3600%60, i/60%60, i%1000,
				words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(1e6), rng.IntN(500))
		}
		res, err := p.Prune(ctx, "how are http redirects followed?", b.String())
		require.NoError(t, err)
		kept := len(res.KeptLines())
		assert.LessOrEqual(t, kept, 1500, "%d lines: kept %d", n, kept)
		t.Logf("%d lines: kept %d (%.1f%%)", n, kept, 100*float64(kept)/float64(n))
	}
}
