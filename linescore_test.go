package pruner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/linemodel"
)

// The default pipeline (no checkpoint) runs the embedded line model, and
// on a real question about a real file it keeps the lines that answer it.
// The fixture is a copy of backbone/qwen3.go.
func TestLineModelDefault(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("testdata", "linemodel", "qwen3.go.txt"))
	require.NoError(t, err)
	text := string(data)
	lineOf := func(prefix string) int {
		for i, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return i
			}
		}
		t.Fatalf("no line starts with %q", prefix)
		return -1
	}
	// The two lines that apply the rotation to queries and keys.
	answer := []int{lineOf(`q = applyRotary(`), lineOf(`k = applyRotary(`)}
	p, err := Load(ctx, "")
	require.NoError(t, err)
	require.Equal(t, ScorerLine, p.Kind())
	budget, err := p.With(WithLineBudget(0.2))
	require.NoError(t, err)
	for _, q := range []*Pruner{p, budget} {
		res, err := q.Prune(ctx, "How are rotary embeddings applied to queries and keys?", text)
		require.NoError(t, err)
		checkInvariants(t, text, res)
		assert.Equal(t, "line", res.Scorer)
		assert.Equal(t, "go", res.Language)
		assert.Greater(t, res.Score, 0.0)
		assert.LessOrEqual(t, res.Score, 1.0)
		for _, i := range answer {
			assert.True(t, res.Lines[i].Kept, "line %d: %s", i+1, strings.Split(text, "\n")[i])
		}
		best := 0.0
		for _, l := range res.Lines {
			require.GreaterOrEqual(t, l.Score, 0.0)
			require.LessOrEqual(t, l.Score, 1.0)
			best = max(best, l.Score)
		}
		assert.Equal(t, 1.0, best, "the best line holds no share above it")
		assert.NotEmpty(t, res.Placeholders, "something is folded")
	}
}

// Line model scores are nucleus scores: 1 for the best line, non-increasing
// down the ranking, and a lower threshold keeps a superset of the lines.
func TestLineModelThresholds(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("testdata", "linemodel", "qwen3.go.txt"))
	require.NoError(t, err)
	text := string(data)
	p, err := Load(ctx, "", WithRepair(false))
	require.NoError(t, err)
	assert.Equal(t, linemodel.DefaultThreshold, p.threshold(), "the line model's default threshold")
	var prev []int
	for _, th := range []float64{0.9, 0.5, 0.2, 0.05} {
		q, err := p.With(WithThreshold(th))
		require.NoError(t, err)
		assert.Equal(t, th, q.threshold())
		res, err := q.Prune(ctx, "where is the causal mask built?", text)
		require.NoError(t, err)
		checkInvariants(t, text, res)
		kept := res.KeptLines()
		assert.Subset(t, kept, prev, "threshold %v keeps what %v kept", th, th)
		assert.Greater(t, len(kept), len(prev), "a lower threshold keeps more")
		for _, l := range res.Lines {
			if l.Score >= th {
				assert.Equal(t, ReasonModel, l.Reason, "line %d score %v", l.Number, l.Score)
			} else if l.Kept {
				assert.Contains(t, []Reason{ReasonBlank, ReasonCheaper}, l.Reason, "line %d score %v: only blank lines bridge, and runs a placeholder would not shorten stay", l.Number, l.Score)
			}
		}
		prev = kept
	}
	lex, err := Load(ctx, "", WithScorer(ScorerLexical))
	require.NoError(t, err)
	assert.Equal(t, 0.5, lex.threshold(), "other scorers keep 0.5")
}
