package pruner

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
)

// closureSelector simulates a repair pass: every chosen line pulls in its
// closure lines (one hop, like a scope header).
type closureSelector struct {
	closures map[int][]int
	kept     []bool
}

func (s *closureSelector) lines(line int) []int {
	var out []int
	for _, j := range append([]int{line}, s.closures[line]...) {
		if !s.kept[j] && !slices.Contains(out, j) {
			out = append(out, j)
		}
	}
	return out
}

func (s *closureSelector) Cost(_ context.Context, line int) ([]int, error) { return s.lines(line), nil }

func (s *closureSelector) Add(_ context.Context, line int) ([]int, error) {
	out := s.lines(line)
	for _, j := range out {
		s.kept[j] = true
	}
	return out, nil
}

func TestSelectByBudget(t *testing.T) {
	closures := map[int][]int{3: {0, 1}, 4: {0}}
	tests := []struct {
		name    string
		scores  []float64
		covered []bool
		pre     []bool
		cost    []int
		limit   int
		repair  bool
		want    []bool
		outcome budgetOutcome
	}{
		{"top scores, ties to earlier line", []float64{0.5, 0.9, 0.5, 0.1, 0.5}, nil, nil, []int{1, 1, 1, 1, 1}, 2, false,
			[]bool{true, true, false, false, false}, budgetMet},
		{"expensive line skipped for a cheaper one", []float64{0.9, 0.8, 0.7}, nil, nil, []int{5, 1, 1}, 3, false,
			[]bool{false, true, true}, budgetMet},
		{"uncovered lines are never chosen", []float64{0, 0.9, 0}, []bool{false, true, false}, nil, []int{1, 1, 1}, 3, false,
			[]bool{false, true, false}, budgetMet},
		{"pre-kept lines count first", []float64{0.1, 0.9, 0.8}, nil, []bool{true, false, false}, []int{1, 1, 1}, 2, false,
			[]bool{true, true, false}, budgetMet},
		{"repair cost included", []float64{0.1, 0.1, 0.1, 0.9, 0.8}, nil, nil, []int{1, 1, 1, 1, 1}, 3, true,
			[]bool{true, true, false, true, false}, budgetMet},
		{"repair too expensive, next line taken", []float64{0.1, 0.1, 0.1, 0.9, 0.8}, nil, nil, []int{1, 1, 1, 1, 1}, 2, true,
			[]bool{true, false, false, false, true}, budgetMet},
		{"nothing fits repaired: best lines unrepaired", []float64{0, 0, 0, 0.9, 0.8}, []bool{false, false, false, true, true}, nil, []int{1, 1, 1, 1, 1}, 1, true,
			[]bool{false, false, false, true, false}, budgetUnrepaired},
		{"always-keep lines over budget", []float64{0.1, 0.9}, nil, []bool{true, false}, []int{3, 1}, 2, false,
			[]bool{true, false}, budgetExceeded},
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
			var sel selector
			if tc.repair {
				sel = &closureSelector{closures: closures, kept: make([]bool, n)}
			}
			final, outcome, err := selectByBudget(context.Background(), tc.scores, covered, keep, tc.cost, tc.limit, sel)
			require.NoError(t, err)
			assert.Equal(t, tc.want, final)
			assert.Equal(t, tc.outcome, outcome)
		})
	}
}

// The selection never exceeds the budget, whatever the scores, costs and
// repair structure, unless always-keep lines alone do.
func TestSelectByBudgetNeverExceeds(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for iter := 0; iter < 2000; iter++ {
		n := 1 + r.Intn(30)
		scores := make([]float64, n)
		covered := make([]bool, n)
		cost := make([]int, n)
		closures := map[int][]int{}
		for i := range scores {
			scores[i] = r.Float64()
			covered[i] = r.Intn(5) > 0
			cost[i] = r.Intn(8)
			for h := r.Intn(3); h > 0; h-- {
				closures[i] = append(closures[i], r.Intn(n))
			}
		}
		keep := make([]bool, n)
		if r.Intn(4) == 0 {
			keep[0] = true
		}
		limit := r.Intn(40)
		pre := slices.Clone(keep)
		sel := &closureSelector{closures: closures, kept: make([]bool, n)}
		final, outcome, err := selectByBudget(context.Background(), scores, covered, keep, cost, limit, sel)
		require.NoError(t, err)
		used := 0
		for i, on := range final {
			if on {
				used += cost[i]
			}
			if keep[i] || pre[i] {
				require.True(t, on, "chosen line %d missing from the output", i)
			}
		}
		if outcome != budgetExceeded {
			require.LessOrEqual(t, used, limit, "iteration %d", iter)
		}
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
		assert.Equal(t, max(1, int(math.RoundToEven(f*float64(n)))), model, "line budget %v", f)
	}
	q, err := p.With(WithTokenBudget(20), WithRepair(false))
	require.NoError(t, err)
	res, err := q.Prune(context.Background(), "how is PATH searched?", text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	_, cost, err := q.budgetCost(context.Background(), text, chunk.SplitLines(text), &tokenScores{})
	require.NoError(t, err)
	used := 0
	for i, l := range res.Lines {
		if l.Kept {
			used += cost[i]
		}
	}
	assert.Positive(t, used)
	assert.LessOrEqual(t, used, 20, "kept tokens within the token budget")

	// With the repair pass on, the repaired output still fits the budget.
	for _, n := range []int{3, 8, 15, 40, 100} {
		q, err := p.With(WithTokenBudget(n))
		require.NoError(t, err)
		res, err := q.Prune(context.Background(), "how is PATH searched?", text)
		require.NoError(t, err)
		checkInvariants(t, text, res)
		used := 0
		for i, l := range res.Lines {
			if l.Kept {
				used += cost[i]
			}
		}
		assert.LessOrEqual(t, used, n, "token budget %d (notes %q)", n, res.Notes)
	}

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
