package pruner

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
)

func TestSelectByBudget(t *testing.T) {
	closures := map[int][]int{3: {0, 1}, 4: {0}}
	tests := []struct {
		name    string
		scores  []float64
		covered []bool
		pre     []bool
		cost    []int
		limit   int
		closure bool
		want    []bool
	}{
		{"top scores, ties to earlier line", []float64{0.5, 0.9, 0.5, 0.1, 0.5}, nil, nil, []int{1, 1, 1, 1, 1}, 2, false,
			[]bool{true, true, false, false, false}},
		{"expensive line skipped for a cheaper one", []float64{0.9, 0.8, 0.7}, nil, nil, []int{5, 1, 1}, 3, false,
			[]bool{false, true, true}},
		{"uncovered lines are never chosen", []float64{0, 0.9, 0}, []bool{false, true, false}, nil, []int{1, 1, 1}, 3, false,
			[]bool{false, true, false}},
		{"pre-kept lines count first", []float64{0.1, 0.9, 0.8}, nil, []bool{true, false, false}, []int{1, 1, 1}, 2, false,
			[]bool{true, true, false}},
		{"closure cost included", []float64{0.1, 0.1, 0.1, 0.9, 0.8}, nil, nil, []int{1, 1, 1, 1, 1}, 3, true,
			[]bool{true, true, false, true, false}},
		{"closure too expensive, next line taken", []float64{0.1, 0.1, 0.1, 0.9, 0.8}, nil, nil, []int{1, 1, 1, 1, 1}, 2, true,
			[]bool{true, false, false, false, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.scores)
			covered := tc.covered
			if covered == nil {
				covered = make([]bool, n)
				for i := range covered {
					covered[i] = true
				}
			}
			keep := make([]bool, n)
			copy(keep, tc.pre)
			var closure func(int) ([]int, error)
			if tc.closure {
				closure = func(i int) ([]int, error) { return closures[i], nil }
			}
			require.NoError(t, selectByBudget(tc.scores, covered, keep, tc.cost, tc.limit, closure))
			assert.Equal(t, tc.want, keep)
		})
	}
}

func TestBudgets(t *testing.T) {
	p := tinyPruner(t)
	text := "import os\nimport sys\n\n\ndef which(cmd, path=None):\n    path = path or os.environ.get('PATH', '')\n    for d in path.split(os.pathsep):\n        full = os.path.join(d, cmd)\n        if os.path.exists(full):\n            return full\n    return None\n\n\ndef main():\n    print(which(sys.argv[1]))\n"
	n := len(p.unpruned(text, "").Lines)
	for _, f := range []float64{0.1, 0.2, 0.5} {
		q, err := p.With(WithLineBudget(f), WithRepair(false))
		require.NoError(t, err)
		res, err := q.Prune(context.Background(), "how is PATH searched?", text)
		require.NoError(t, err)
		checkInvariants(t, text, res)
		model := 0
		for _, l := range res.Lines {
			if l.Reason == ReasonModel {
				model++
			}
		}
		assert.Equal(t, max(1, int(math.Round(f*float64(n)))), model, "line budget %v", f)
	}
	q, err := p.With(WithTokenBudget(20), WithRepair(false))
	require.NoError(t, err)
	res, err := q.Prune(context.Background(), "how is PATH searched?", text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	_, cost := q.budgetCost(text, chunk.SplitLines(text), &tokenScores{})
	used := 0
	for i, l := range res.Lines {
		if l.Kept {
			used += cost[i]
		}
	}
	assert.Positive(t, used)
	assert.LessOrEqual(t, used, 20, "kept tokens within the token budget")

	q, err = p.With(WithCompression(4))
	require.NoError(t, err)
	res, err = q.Prune(context.Background(), "how is PATH searched?", text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	for _, o := range []Option{WithLineBudget(0), WithLineBudget(1.5), WithTokenBudget(0), WithCompression(0.5)} {
		_, err := p.With(o)
		require.ErrorIs(t, err, ErrOption)
	}
}
