package astrepair

import (
	"context"
	"math/rand"
	"os"
	"sort"
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

// Linked is the union of Definitions and CallSites over its rows.
func TestLinkedIsUnionOfEdges(t *testing.T) {
	ctx := context.Background()
	for _, file := range cleanFixtures(t) {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		text := string(src)
		a, err := Analyze(ctx, text, syntax.Detect(text, file))
		require.NoError(t, err)
		rng := rand.New(rand.NewSource(int64(len(text))))
		for k := 0; k < 20; k++ {
			var rows []int
			for i := 0; i < 1+rng.Intn(12); i++ {
				rows = append(rows, rng.Intn(a.Lines()))
			}
			if k%4 == 0 {
				rows = append(rows, rows[0]) // a repeated row
			}
			want := map[int]bool{}
			for _, r := range rows {
				defs, err := a.Definitions(ctx, r)
				require.NoError(t, err)
				calls, err := a.CallSites(ctx, r)
				require.NoError(t, err)
				for _, x := range append(defs, calls...) {
					want[x] = true
				}
			}
			wantRows := make([]int, 0, len(want))
			for x := range want {
				wantRows = append(wantRows, x)
			}
			sort.Ints(wantRows)
			got, err := a.Linked(ctx, rows)
			require.NoError(t, err)
			if len(wantRows) == 0 {
				require.Empty(t, got, "%s %v", file, rows)
				continue
			}
			require.Equal(t, wantRows, got, "%s %v", file, rows)
		}
	}
	a, err := Analyze(ctx, goSrc, syntax.Go)
	require.NoError(t, err)
	_, err = a.Linked(ctx, []int{1, 1000})
	require.ErrorIs(t, err, ErrLineRange)
}
