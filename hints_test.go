package pruner_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

func TestFoldHints(t *testing.T) {
	ctx := context.Background()
	q := "how long is the backoff between retries?"
	for i, opts := range [][]pruner.Option{
		{pruner.WithLineBudget(0.15)},
		{pruner.WithTokenBudget(120)},
		{pruner.WithTokenBudget(220)},
		{}, // the threshold
	} {
		p, err := pruner.Load(ctx, "", append(opts, pruner.WithFoldHints(1), pruner.WithLanguage("go"), pruner.WithMinInputTokens(0))...)
		require.NoError(t, err)
		res, err := p.Prune(ctx, q, unfoldGo)
		require.NoError(t, err)
		checkRendering(t, unfoldGo, res)
		var hinted []pruner.Placeholder
		for _, ph := range res.Placeholders {
			if ph.Hint != "" {
				hinted = append(hinted, ph)
			}
		}
		if len(res.Placeholders) == 0 {
			continue
		}
		if len(hinted) == 0 {
			// A line budget always has room for a hint; a token budget
			// without room says so; without a budget a hint that would
			// leave the output no shorter than the input is left out.
			require.NotZero(t, i, "a line budget hints: %s", res.Text)
			if i < 3 {
				assert.Contains(t, strings.Join(res.Notes, " "), "no room for it", "%s", res.Text)
			}
			continue
		}
		require.Len(t, hinted, 1, "%s", res.Text)
		h := hinted[0]
		assert.Contains(t, res.Text, "; likely relevant: "+h.Hint)
		// The hint is an item Unfold takes, within its fold, and showing
		// it shows the fold's best line.
		got, err := res.Unfold(ctx, h.Hint)
		require.NoError(t, err)
		best := h.FirstLine
		for n := h.FirstLine; n <= h.LastLine; n++ {
			if res.Lines[n-1].Score > res.Lines[best-1].Score {
				best = n
			}
		}
		assert.True(t, got.Lines[best-1].Kept, "the hinted item shows line %d", best)
		for _, r := range got.Expanded[0].Lines {
			assert.GreaterOrEqual(t, r.First, h.FirstLine)
			assert.LessOrEqual(t, r.Last, h.LastLine)
		}
		// Once shown, nothing hints at it any more.
		assert.NotContains(t, got.Text, "likely relevant: "+h.Hint)
		b, err := json.Marshal(res)
		require.NoError(t, err)
		assert.Contains(t, string(b), `"hint":`)
	}
	_, err := pruner.Load(ctx, "", pruner.WithFoldHints(-1))
	require.ErrorIs(t, err, pruner.ErrOption)
	_, err = pruner.Load(ctx, "", pruner.WithFoldHints(1), pruner.WithSWEPrunerCompat())
	require.ErrorIs(t, err, pruner.ErrOption)
}

// A token budget with no room for a hint drops it, says so, and stays
// within the budget.
func TestFoldHintsBudget(t *testing.T) {
	ctx := context.Background()
	for budget := 20; budget <= 200; budget += 15 {
		p, err := pruner.Load(ctx, "", pruner.WithTokenBudget(budget), pruner.WithFoldHints(2), pruner.WithLanguage("go"))
		require.NoError(t, err)
		res, err := p.Prune(ctx, "how long is the backoff between retries?", unfoldGo)
		require.NoError(t, err)
		if res.Unpruned == "" && len(res.KeptLines()) > 0 && !strings.Contains(strings.Join(res.Notes, " "), "exceed") {
			assert.LessOrEqual(t, res.Tokens.Kept, budget, "budget %d: %s", budget, res.Text)
		}
		checkRendering(t, unfoldGo, res)
	}
}
