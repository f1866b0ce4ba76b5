package pruner

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/syntax"
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

func (s *closureSelector) CostWithin(_ context.Context, line int, weight []int, limit int) ([]int, int, bool, error) {
	lines := s.lines(line)
	c := 0
	for _, j := range lines {
		c += weight[j]
	}
	if c > limit {
		return nil, c, false, nil
	}
	return lines, c, true, nil
}

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
		{"always-kept lines over budget", []float64{0.1, 0.9}, nil, []bool{true, false}, []int{3, 1}, 2, false,
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
			final, outcome, err := selectByBudget(context.Background(), tc.scores, nil, covered, keep, tc.cost, 0, tc.limit, sel)
			require.NoError(t, err)
			assert.Equal(t, tc.want, final)
			assert.Equal(t, tc.outcome, outcome)
		})
	}
}

// With a relevance mass, the budget goes to the lines worth most per unit
// of what they newly keep: lines sharing a kept closure, or joining kept
// runs, beat a lone expensive line of slightly more mass.
func TestSelectByBudgetByMass(t *testing.T) {
	tests := []struct {
		name     string
		mass     []float64
		cost     []int
		closures map[int][]int
		phCost   int
		limit    int
		want     []bool
	}{
		{"two cheap lines over one expensive", []float64{0.4, 0.3, 0.3}, []int{10, 5, 5}, nil, 0, 10,
			[]bool{false, true, true}},
		{"a shared closure is paid once", []float64{0.36, 0.2, 0.2, 0.02, 0.02, 0.02},
			[]int{1, 1, 1, 1, 1, 1}, map[int][]int{0: {3, 4, 5}, 1: {3}, 2: {3}}, 0, 4,
			[]bool{false, true, true, true, true, false}},
		{"score order when density ties", []float64{0.5, 0.3, 0.2}, []int{1, 1, 1}, nil, 0, 2,
			[]bool{true, true, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.mass)
			covered := make([]bool, n)
			for i := range covered {
				covered[i] = true
			}
			var sel selector
			if tc.closures != nil {
				sel = &closureSelector{closures: tc.closures, kept: make([]bool, n)}
			}
			final, outcome, err := selectByBudget(context.Background(), tc.mass, tc.mass, covered, make([]bool, n), tc.cost, tc.phCost, tc.limit, sel)
			require.NoError(t, err)
			assert.Equal(t, budgetMet, outcome)
			assert.Equal(t, tc.want, final)
		})
	}
}

// selectBest keeps whichever of the mass-per-cost and the score-order
// selections keeps more mass.
func TestSelectBest(t *testing.T) {
	all := []bool{true, true, true}
	tests := []struct {
		name  string
		mass  []float64
		cost  []int
		limit int
		want  []bool
	}{
		// By mass per cost the cheap line comes first and the valuable
		// one no longer fits.
		{"score order keeps more", []float64{0.9, 0.1, 0}, []int{10, 1, 1}, 10, []bool{true, false, false}},
		{"mass per cost keeps more", []float64{0.4, 0.3, 0.3}, []int{10, 5, 5}, 10, []bool{false, true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keep, final, outcome, err := selectBest(context.Background(), tc.mass, tc.mass, all, make([]bool, 3), tc.cost, 0, tc.limit, nil)
			require.NoError(t, err)
			assert.Equal(t, budgetMet, outcome)
			assert.Equal(t, tc.want, final)
			assert.Equal(t, tc.want, keep)
		})
	}
}

// The selection never exceeds the budget, whatever the scores, masses,
// costs and repair structure, unless always-kept lines alone do.
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
		phCost := r.Intn(4)
		pre := slices.Clone(keep)
		sel := &closureSelector{closures: closures, kept: make([]bool, n)}
		var mass []float64
		if iter%2 == 1 {
			mass = slices.Clone(scores)
		}
		final, outcome, err := selectByBudget(context.Background(), scores, mass, covered, keep, cost, phCost, limit, sel)
		require.NoError(t, err)
		used := 0
		for i, on := range final {
			if on {
				used += cost[i]
			} else if i == 0 || final[i-1] {
				used += phCost // a folded run's placeholder
			}
			if keep[i] || pre[i] {
				require.True(t, on, "chosen line %d missing from the output", i)
			}
		}
		if !slices.Contains(final, true) && phCost > limit {
			// The text folded whole is over the budget: nothing can be
			// chosen, and the caller returns its smallest output.
			continue
		}
		if outcome != budgetExceeded {
			require.LessOrEqual(t, used, limit, "iteration %d", iter)
		}
	}
}

func TestBudgets(t *testing.T) {
	p := tinyPruner(t)
	text := "import os\nimport sys\n\n\ndef which(cmd, path=None):\n    path = path or os.environ.get('PATH', '')\n    for d in path.split(os.pathsep):\n        full = os.path.join(d, cmd)\n        if os.path.exists(full):\n            return full\n    return None\n\n\ndef main():\n    print(which(sys.argv[1]))\n"
	whole, err := p.unpruned(context.Background(), text, "")
	require.NoError(t, err)
	n := len(whole.Lines)
	outLines := func(res *Result) int {
		return len(res.KeptLines()) + len(res.Placeholders)
	}
	for _, f := range []float64{0.1, 0.2, 0.5} {
		for _, repair := range []bool{false, true} {
			q, err := p.With(WithLineBudget(f), WithRepair(repair))
			require.NoError(t, err)
			res, err := q.Prune(context.Background(), "how is PATH searched?", text)
			require.NoError(t, err)
			checkInvariants(t, text, res)
			limit := max(3, int(math.RoundToEven(f*float64(n))))
			assert.LessOrEqual(t, outLines(res), limit, "line budget %v counts placeholder lines (notes %q)", f, res.Notes)
			assert.Equal(t, strings.Count(res.Text, "\n"), outLines(res), "every output line is a kept line or a placeholder")
		}
	}
	// A short text at a tight line budget keeps at least one line: the
	// budget is never below min(3, n) output lines, room for one kept
	// line between two placeholders (10% of 7 lines used to come back as
	// one placeholder).
	log := strings.Split("=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    add_test.go:12: got 5, want 4\nFAIL\nexit status 1\nFAIL\tgithub.com/x/y\t0.003s\nok  \tgithub.com/x/z\t0.002s\nFAIL\n", "\n")
	for n := 1; n < len(log); n++ {
		short := strings.Join(log[:n], "\n") + "\n"
		for _, f := range []float64{0.05, 0.1, 0.2} {
			q, err := p.With(WithLineBudget(f), WithMinInputTokens(0))
			require.NoError(t, err)
			res, err := q.Prune(context.Background(), "why does TestAdd fail?", short)
			require.NoError(t, err)
			checkInvariants(t, short, res)
			assert.NotEmpty(t, res.KeptLines(), "%d lines at %v: %q", n, f, res.Text)
			assert.LessOrEqual(t, outLines(res), max(min(3, n), int(math.RoundToEven(f*float64(n)))), "%d lines at %v", n, f)
		}
	}
	// The whole output, placeholders included, stays within a token
	// budget, with and without repair.
	for _, n := range []int{3, 8, 15, 20, 40, 60} {
		for _, repair := range []bool{false, true} {
			q, err := p.With(WithTokenBudget(n), WithRepair(repair))
			require.NoError(t, err)
			res, err := q.Prune(context.Background(), "how is PATH searched?", text)
			require.NoError(t, err)
			checkInvariants(t, text, res)
			assert.LessOrEqual(t, q.tok.Count(res.Text), n, "token budget %d (notes %q)", n, res.Notes)
			assert.Equal(t, q.tok.Count(res.Text), res.Tokens.Kept)
		}
	}
	// A budget the text fits returns it whole.
	q, err := p.With(WithTokenBudget(1000))
	require.NoError(t, err)
	res, err := q.Prune(context.Background(), "how is PATH searched?", text)
	require.NoError(t, err)
	assert.Equal(t, text, res.Text)
	assert.Contains(t, res.Unpruned, "fits the budget")

	q, err = p.With(WithCompression(4))
	require.NoError(t, err)
	res, err = q.Prune(context.Background(), "how is PATH searched?", text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	assert.LessOrEqual(t, res.Tokens.Kept, int(math.Ceil(float64(res.Tokens.Input)/4)), "compression is met on output tokens")
	for _, o := range []Option{WithLineBudget(0), WithLineBudget(1.5), WithTokenBudget(0), WithCompression(0.5)} {
		_, err := p.With(o)
		require.ErrorIs(t, err, ErrOption)
	}
}

// refSelector is the selector selectByBudgetRef needs: an uncapped Cost.
type refSelector interface {
	Cost(ctx context.Context, line int) ([]int, error)
	Add(ctx context.Context, line int) ([]int, error)
}

// selectByBudgetRef is selectByBudget as it was before the capped cost
// walk: every candidate's full repair cost, however deep it lies. The
// differential tests hold today's selection to it.
func selectByBudgetRef(ctx context.Context, scores []float64, covered, keep []bool, cost []int, limit int, sel refSelector) (final []bool, outcome budgetOutcome, err error) {
	final = make([]bool, len(keep))
	used := 0
	take := func(lines []int) {
		for _, j := range lines {
			if !final[j] {
				final[j] = true
				used += cost[j]
			}
		}
	}
	for i, k := range keep {
		if k {
			added, err := sel.Add(ctx, i)
			if err != nil {
				return nil, budgetMet, err
			}
			take(append(added, i))
		}
	}
	if used > limit {
		return final, budgetExceeded, nil
	}
	order := make([]int, 0, len(scores))
	for i := range scores {
		if covered[i] && !keep[i] && scores[i] > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	chosen := 0
	for _, i := range order {
		if used >= limit {
			break
		}
		if final[i] || used+cost[i] > limit {
			continue
		}
		lines, err := sel.Cost(ctx, i)
		if err != nil {
			return nil, budgetMet, err
		}
		c := 0
		for _, j := range lines {
			if !final[j] {
				c += cost[j]
			}
		}
		if used+c > limit {
			continue
		}
		added, err := sel.Add(ctx, i)
		if err != nil {
			return nil, budgetMet, err
		}
		take(append(added, i))
		keep[i] = true
		chosen++
	}
	if chosen > 0 || len(order) == 0 {
		return final, budgetMet, nil
	}
	for _, i := range order {
		if !final[i] && used+cost[i] <= limit {
			keep[i], final[i] = true, true
			used += cost[i]
			chosen++
		}
	}
	if chosen == 0 {
		return final, budgetMet, nil
	}
	return final, budgetUnrepaired, nil
}

// deepJS is n lines of nested JavaScript ifs: n/2 headers, n/2 braces.
func deepJS(n int) string {
	return strings.Repeat("if (x) {\n", n/2) + strings.Repeat("}\n", n-n/2)
}

// deepPython is n lines of nested Python ifs, each indented one deeper.
func deepPython(n int) string {
	var b strings.Builder
	for i := 0; i < n-1; i++ {
		b.WriteString(strings.Repeat(" ", i))
		b.WriteString("if x:\n")
	}
	b.WriteString(strings.Repeat(" ", n-1) + "pass\n")
	return b.String()
}

// diffInput is one text the differential test selects over.
type diffInput struct {
	name string
	text string
	lang syntax.Language
}

func diffInputs(t *testing.T) []diffInput {
	var in []diffInput
	files, err := filepath.Glob(filepath.Join("astrepair", "testdata", "clean", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		in = append(in, diffInput{filepath.Base(f), string(data), syntax.Detect("", f)})
	}
	in = append(in,
		diffInput{"deep js", deepJS(600), syntax.JavaScript},
		diffInput{"deep python", deepPython(400), syntax.Python},
		diffInput{"deep go", "package p\n\nfunc f() {\n" + deepJS(400) + "}\n", syntax.Go})
	dev := corpusFiles(t, "evalsets/dev")
	for _, f := range dev {
		for k, c := range f.Cases {
			if k%8 != 0 {
				continue // a sample of each file
			}
			lang := syntax.Detect(c.Text, c.Path)
			if lang.IsCode() {
				in = append(in, diffInput{c.ID, c.Text, lang})
			}
		}
	}
	return in
}

// The capped budget walk selects exactly what the full-cost walk did, on
// real files of every language, dev inputs and deep nesting, for random
// scores (and depth-ordered ones), coverage, always-kept lines, line and
// token-like weights, budgets and hop settings.
func TestSelectByBudgetCappedMatchesFull(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(15))
	runs := 0
	for _, in := range diffInputs(t) {
		a, err := astrepair.Analyze(ctx, in.text, in.lang)
		require.NoError(t, err, in.name)
		n := a.Lines()
		if n == 0 {
			continue
		}
		for iter := 0; iter < 6; iter++ {
			scores := make([]float64, n)
			covered := make([]bool, n)
			cost := make([]int, n)
			pre := make([]bool, n)
			tokens := iter%2 == 1
			for i := range scores {
				switch iter % 3 {
				case 0:
					scores[i] = r.Float64()
				case 1:
					scores[i] = float64(r.Intn(4)) / 4 // ties and zeros
				default:
					scores[i] = float64(i%97) + r.Float64()/8 // runs of depth-like order
				}
				covered[i] = r.Intn(10) > 0
				cost[i] = 1
				if tokens {
					cost[i] = r.Intn(12)
				}
				pre[i] = r.Intn(200) == 0
			}
			total := 0
			for _, c := range cost {
				total += c
			}
			frac := []float64{0.02, 0.1, 0.2, 0.5}[r.Intn(4)]
			limit := max(1, int(frac*float64(total)))
			hops := 0
			if iter == 5 {
				hops = 1
			}
			opts := []astrepair.Option{astrepair.WithMaxHops(hops)}
			keepRef, keepNew := slices.Clone(pre), slices.Clone(pre)
			want, wantOut, err := selectByBudgetRef(ctx, scores, covered, keepRef, cost, limit, a.NewSelection(opts...))
			require.NoError(t, err)
			got, gotOut, err := selectByBudget(ctx, scores, nil, covered, keepNew, cost, 0, limit, a.NewSelection(opts...))
			require.NoError(t, err)
			require.Equal(t, want, got, "%s iteration %d", in.name, iter)
			require.Equal(t, keepRef, keepNew, "%s iteration %d", in.name, iter)
			require.Equal(t, wantOut, gotOut, "%s iteration %d", in.name, iter)
			runs++
		}
	}
	t.Logf("%d selections compared", runs)
}

// BenchmarkBudgetDeepNesting times budgeted selection (selectByBudget
// with repair, no hops: the pruner's budget default) over deep nesting, at
// a 20% line budget and a 20% token budget (token-like weights: a line's
// bytes / 4, rounded up), for random scores and for deepest-first scores,
// the worst order for an uncapped walk. The analysis is built outside the
// timer. Time per op should grow about linearly with n. Python stops at
// 10K lines: its indentation makes the text quadratic (200 MB at 20K).
func BenchmarkBudgetDeepNesting(b *testing.B) {
	ctx := context.Background()
	type input struct {
		lang syntax.Language
		text func(int) string
		ns   []int
	}
	for _, in := range []input{
		{syntax.JavaScript, deepJS, []int{2_500, 5_000, 10_000, 20_000}},
		{syntax.Python, deepPython, []int{2_500, 5_000, 10_000}},
	} {
		for _, n := range in.ns {
			var a *astrepair.Analysis
			var lines []chunk.Line
			setup := func(b *testing.B) {
				if a != nil {
					return
				}
				text := in.text(n)
				var err error
				if a, err = astrepair.Analyze(ctx, text, in.lang); err != nil {
					b.Fatal(err)
				}
				lines = chunk.SplitLines(text)
			}
			for _, unit := range []string{"lines", "tokens"} {
				for _, order := range []string{"random", "deepest"} {
					b.Run(fmt.Sprintf("%s/n=%d/%s/%s", in.lang, n, unit, order), func(b *testing.B) {
						setup(b)
						m := len(lines)
						cost := make([]int, m)
						total := 0
						for i, l := range lines {
							cost[i] = 1
							if unit == "tokens" {
								cost[i] = (l.TermEnd - l.Start + 3) / 4
							}
							total += cost[i]
						}
						r := rand.New(rand.NewSource(1))
						scores := make([]float64, m)
						covered := make([]bool, m)
						for i := range scores {
							covered[i] = true
							scores[i] = r.Float64() + 0.01
							if order == "deepest" {
								d := i // Python: depth grows with the line
								if in.lang == syntax.JavaScript && i >= m/2 {
									d = m - 1 - i
								}
								scores[i] = 1 + float64(d)
							}
						}
						limit := total / 5
						b.ResetTimer()
						for k := 0; k < b.N; k++ {
							keep := make([]bool, m)
							if _, _, err := selectByBudget(ctx, scores, nil, covered, keep, cost, 0, limit, a.NewSelection(astrepair.WithMaxHops(0))); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}

// selectByMass removes dead candidates in O(1): a text with hundreds of
// thousands of candidates that all turn out too expensive is decided in
// one linear pass (removal by slice deletion made this quadratic).
func TestSelectByMassManyDead(t *testing.T) {
	const n = 300000
	order := make([]int, n)
	mass := make([]float64, n)
	for i := range order {
		order[i] = i
		mass[i] = float64(n-i) / n
	}
	tries := 0
	try := func(int) (int, bool, error) { tries++; return 0, true, nil }
	take := func(int) error { t.Fatal("a dead line was taken"); return nil }
	decided, err := selectByMass(order, mass, try, take, func() bool { return false })
	require.NoError(t, err)
	assert.Equal(t, n, decided)
	assert.Equal(t, n, tries)
}

func BenchmarkSelectByMass(b *testing.B) {
	const n = 100000
	mass := make([]float64, n)
	for i := range mass {
		mass[i] = float64(n-i) / n
	}
	for b.Loop() {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		taken := 0
		try := func(i int) (int, bool, error) { return 1 + i%3, i%2 == 0, nil }
		take := func(int) error { taken++; return nil }
		if _, err := selectByMass(order, mass, try, take, func() bool { return taken >= n/10 }); err != nil {
			b.Fatal(err)
		}
	}
}
