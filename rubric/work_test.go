package rubric

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// countingCtx counts Err calls: astrepair checks ctx once per 1024 steps
// of its loops, so the count measures the work done.
type countingCtx struct {
	context.Context
	calls atomic.Int64
}

func (c *countingCtx) Err() error {
	c.calls.Add(1)
	return nil
}

// Many lines defining one name and many using it: labelling followed the
// definitions and call sites of every row separately, rows × definitions
// per hop (70 s for 8,000 of each); it is now linear in the text.
func TestSharedNameWorkIsLinear(t *testing.T) {
	const n = 4000
	text := strings.Repeat("var x = 1\n", n) + strings.Repeat("x()\n", n)
	keep := make([]bool, 2*n)
	for i := range keep {
		keep[i] = i%2 == 0
	}
	ctx := &countingCtx{Context: context.Background()}
	l, err := Build(ctx, text, syntax.JavaScript, keep)
	require.NoError(t, err)
	require.True(t, l.DependencyLabel[1], "a definition kept lines use")
	require.True(t, l.DependencyLabel[n+1], "a call site of a kept definition")
	// Quadratic labelling would make n*n/1024 = 15,625 checks per hop.
	limit := int64(60*len(text)/1024 + 200)
	require.Less(t, ctx.calls.Load(), limit)
	t.Logf("%d checks (limit %d)", ctx.calls.Load(), limit)
}
