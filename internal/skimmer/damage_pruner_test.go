package skimmer_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/golden"
	"github.com/prunekit/pruner/internal/skimmer"
)

// TestDamagedCheckpointsThroughPruner runs the damaged-checkpoint table
// through the public API: every damaged copy is refused by pruner.Load with
// pruner.ErrBadCheckpoint, or loads and prunes exactly as the untouched
// checkpoint does.
func TestDamagedCheckpointsThroughPruner(t *testing.T) {
	const query = "how are tokens split"
	g, err := golden.Load("golden_swepruner.json")
	require.NoError(t, err)
	text := g.Cases[1].Code
	ctx := context.Background()
	for _, kind := range skimmer.DamageKinds {
		ref, err := pruner.Load(ctx, filepath.Join(golden.Dir(), kind))
		require.NoError(t, err)
		want, err := ref.Prune(ctx, query, text)
		require.NoError(t, err)
		for _, c := range skimmer.DamageCases() {
			if !c.Applies(kind) {
				continue
			}
			t.Run(kind+"/"+c.Name, func(t *testing.T) {
				dir := skimmer.CopyCheckpoint(t, kind)
				c.Damage(t, dir)
				p, err := pruner.Load(ctx, dir)
				if c.Want != nil {
					require.Error(t, err)
					assert.Nil(t, p)
					assert.True(t, errors.Is(err, pruner.ErrBadCheckpoint), "%v", err)
					assert.Equal(t, 1, strings.Count(err.Error(), "bad checkpoint"), "says it once: %v", err)
					assert.Empty(t, repeatedSegment(err.Error()), "%v", err)
					return
				}
				require.NoError(t, err)
				got, err := p.Prune(ctx, query, text)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			})
		}
	}
}

// repeatedSegment returns a ": "-separated part of an error message that
// occurs twice ("" when none does).
func repeatedSegment(msg string) string {
	seen := map[string]bool{}
	for _, seg := range strings.Split(msg, ": ") {
		if seen[seg] {
			return seg
		}
		seen[seg] = true
	}
	return ""
}
