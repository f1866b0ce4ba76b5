package astrepair

import (
	"context"
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// CostWithin gives exactly Cost's lines and their weight when they fit,
// and ok false when they do not, on real files of every language, for
// random weights and limits while the selection grows, with and without
// dependency hops (so with and without the memo of dead items, which
// must survive limits that go up and down).
func TestCostWithinMatchesCost(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(15))
	for _, f := range cleanFixtures(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		lang := syntax.Detect("", f)
		a, err := Analyze(ctx, string(data), lang)
		require.NoError(t, err)
		n := a.Lines()
		for _, hops := range []int{0, 1, 2} {
			weight := make([]int, n)
			for i := range weight {
				weight[i] = rng.Intn(10)
			}
			sel := a.NewSelection(WithMaxHops(hops))
			for step := 0; step < 300; step++ {
				line := rng.Intn(n)
				want, err := sel.Cost(ctx, line)
				require.NoError(t, err)
				wantCost := 0
				for _, j := range want {
					wantCost += weight[j]
				}
				limit := rng.Intn(2*wantCost + 3)
				if rng.Intn(4) == 0 {
					limit = wantCost // the edge
				}
				got, cost, ok, err := sel.CostWithin(ctx, line, weight, limit)
				require.NoError(t, err)
				require.Equal(t, wantCost <= limit, ok, "%s hops %d line %d limit %d cost %d", f, hops, line, limit, wantCost)
				if ok {
					require.Equal(t, want, got, "%s hops %d line %d", f, hops, line)
					require.Equal(t, wantCost, cost)
				} else {
					require.Nil(t, got)
				}
				if rng.Intn(6) == 0 {
					_, err := sel.Add(ctx, line)
					require.NoError(t, err)
				}
			}
		}
	}
}

func TestCostWithinErrors(t *testing.T) {
	ctx := context.Background()
	a, err := Analyze(ctx, "if (x) {\n  y()\n}\n", syntax.JavaScript)
	require.NoError(t, err)
	sel := a.NewSelection()
	_, _, _, err = sel.CostWithin(ctx, 0, []int{1, 1}, 5)
	require.ErrorIs(t, err, ErrWeight)
	_, _, _, err = sel.CostWithin(ctx, 0, []int{1, -1, 1}, 5)
	require.ErrorIs(t, err, ErrWeight)
	_, _, _, err = sel.CostWithin(ctx, 3, []int{1, 1, 1}, 5)
	require.ErrorIs(t, err, ErrLineRange)
	lines, cost, ok, err := sel.CostWithin(ctx, 1, []int{1, 1, 1}, 3)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []int{0, 1, 2}, lines)
	require.Equal(t, 3, cost)
	lines, cost, ok, err = sel.CostWithin(ctx, 1, []int{1, 1, 1}, 2)
	require.NoError(t, err)
	require.False(t, ok)
	require.Nil(t, lines)
	require.Greater(t, cost, 2)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	deep := strings.Repeat("if (x) {\n", 5000) + strings.Repeat("}\n", 5000)
	a, err = Analyze(ctx, deep, syntax.JavaScript)
	require.NoError(t, err)
	w := make([]int, a.Lines())
	_, _, _, err = a.NewSelection().CostWithin(cancelled, 4999, w, 1<<30)
	require.ErrorIs(t, err, context.Canceled)
}

// budgetLoop is the pruner's budgeted selection in small: lines in order,
// each kept when what it newly keeps fits what is left of limit. It
// returns the kept lines.
func budgetLoop(t testing.TB, sel *Selection, order []int, weight []int, limit int) []bool {
	ctx := context.Background()
	used := 0
	kept := make([]bool, len(weight))
	for _, i := range order {
		if used >= limit {
			break
		}
		if kept[i] || used+weight[i] > limit {
			continue
		}
		_, _, ok, err := sel.CostWithin(ctx, i, weight, limit-used)
		require.NoError(t, err)
		if !ok {
			continue
		}
		added, err := sel.Add(ctx, i)
		require.NoError(t, err)
		for _, j := range added {
			kept[j] = true
			used += weight[j]
		}
		kept[i] = true
	}
	return kept
}

// deepInputs are the nested inputs of the bounded-work test and the
// benchmark: JavaScript ifs (n/2 headers then n/2 braces) and Python ifs
// indented one deeper each.
func deepInput(lang syntax.Language, n int) string {
	if lang == syntax.Python {
		var b strings.Builder
		for i := 0; i < n-1; i++ {
			b.WriteString(strings.Repeat(" ", i))
			b.WriteString("if x:\n")
		}
		b.WriteString(strings.Repeat(" ", n-1) + "pass\n")
		return b.String()
	}
	return strings.Repeat("if (x) {\n", n/2) + strings.Repeat("}\n", n-n/2)
}

// depthOf returns each line's nesting depth in a deep input.
func depthOf(lang syntax.Language, n, i int) int {
	if lang == syntax.Python || i < n/2 {
		return i
	}
	return n - 1 - i
}

// A budget loop over deep nesting does work linear in the lines, whatever
// the order of the lines (deepest first is the worst for an uncapped walk:
// every line fails after walking the whole depth) and the unit. Work is
// counted in steps (rows charged, items walked), not time.
func TestCostWithinBoundedWork(t *testing.T) {
	for _, lang := range []syntax.Language{syntax.JavaScript, syntax.Python} {
		for _, n := range []int{1000, 4000} {
			a, err := Analyze(context.Background(), deepInput(lang, n), lang)
			require.NoError(t, err)
			require.Equal(t, n, a.Lines())
			rng := rand.New(rand.NewSource(int64(n)))
			orders := map[string][]int{}
			for _, name := range []string{"deepest first", "shallowest first", "random"} {
				order := rng.Perm(n)
				switch name {
				case "deepest first":
					sort.SliceStable(order, func(x, y int) bool { return depthOf(lang, n, order[x]) > depthOf(lang, n, order[y]) })
				case "shallowest first":
					sort.SliceStable(order, func(x, y int) bool { return depthOf(lang, n, order[x]) < depthOf(lang, n, order[y]) })
				}
				orders[name] = order
			}
			for name, order := range orders {
				for _, unit := range []string{"lines", "tokens"} {
					weight := make([]int, n)
					total := 0
					for i := range weight {
						weight[i] = 1
						if unit == "tokens" {
							weight[i] = 2 + depthOf(lang, n, i)%7 // uneven, like tokens
						}
						total += weight[i]
					}
					sel := a.NewSelection(WithMaxHops(0))
					kept := budgetLoop(t, sel, order, weight, total/5)
					k := 0
					for _, on := range kept {
						if on {
							k++
						}
					}
					if lang == syntax.JavaScript {
						// Python's parser gives up past a few hundred
						// levels, and its error nodes make every line
						// cost most of the file: nothing fits there.
						require.Positive(t, k, "%s n=%d %s %s", lang, n, name, unit)
					}
					t.Logf("%s n=%d %s %s: %d lines kept, %d steps", lang, n, name, unit, k, sel.steps)
					// An uncapped walk takes about n*n/4 steps deepest first.
					require.LessOrEqual(t, sel.steps, 12*n, "%s n=%d %s %s: %d steps", lang, n, name, unit, sel.steps)
				}
			}
		}
	}
}
