package astrepair

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

func TestEdges(t *testing.T) {
	ctx := context.Background()
	a, err := Analyze(ctx, pyHops, syntax.Python)
	require.NoError(t, err)

	// 0-based lines of pyHops: 0 import, 2 def helper, 3 return, 5 def main, 6 call.
	st, err := a.Structure(ctx, []int{6})
	require.NoError(t, err)
	assert.Equal(t, []int{5}, st)

	st, err = a.Structure(ctx, []int{5, 6})
	require.NoError(t, err)
	assert.Equal(t, []int{5}, st, "a given header is reported when another given line needs it")

	defs, err := a.Definitions(ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, []int{2}, defs)

	defs, err = a.Definitions(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{0}, defs, "the helper's signature uses the imported Sequence")

	calls, err := a.CallSites(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, []int{6}, calls)

	calls, err = a.CallSites(ctx, 0)
	require.NoError(t, err)
	assert.Empty(t, calls, "uses of imported names are not call sites")

	_, err = a.Structure(ctx, []int{-1})
	assert.ErrorIs(t, err, ErrLineRange)
	_, err = a.Definitions(ctx, 100)
	assert.ErrorIs(t, err, ErrLineRange)
	_, err = a.CallSites(ctx, 7)
	assert.ErrorIs(t, err, ErrLineRange)

	text, err := Analyze(ctx, "a\nb\n", syntax.Text)
	require.NoError(t, err)
	st, err = text.Structure(ctx, []int{1})
	require.NoError(t, err)
	assert.Empty(t, st)
	assert.Equal(t, syntax.Text, text.Language())
	assert.Equal(t, 2, text.Lines())
}
