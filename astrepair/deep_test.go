package astrepair

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// deepNesting is issue 15's hostile input: n nested brace blocks around
// one statement, on one line (JavaScript) or two (Go).
func deepNesting(lang syntax.Language, n int) string {
	if lang == syntax.Go {
		return "package p\nfunc f() " + strings.Repeat("{", n) + strings.Repeat("}", n)
	}
	return "function f() " + strings.Repeat("{", n) + "x()" + strings.Repeat("}", n)
}

// deepNestingLines is deepNesting with one brace per line, so every level
// is its own line and repair has n lines to add back.
func deepNestingLines(n int) string {
	return "function f() {\n" + strings.Repeat("{\n", n) + "x()\n" + strings.Repeat("}\n", n) + "}\n"
}

// countingCtx counts Err calls, a measure of the work done between
// cancellation checks (every loop checks once per tickEvery steps), and
// reports itself cancelled from call number cancelAt on (0: never).
type countingCtx struct {
	context.Context
	calls    atomic.Int64
	cancelAt int64
}

func (c *countingCtx) Err() error {
	n := c.calls.Add(1)
	if c.cancelAt > 0 && n >= c.cancelAt {
		return context.Canceled
	}
	return nil
}

// BenchmarkRepairDeepNesting runs the full repair pass (parse, analysis,
// repair of the innermost statement, render) on issue 15's deep nesting at
// N = 25K..200K levels; time per op must grow linearly with N (it grew
// quadratically: 69 s at N = 200K). ns/level is reported to compare sizes.
func BenchmarkRepairDeepNesting(b *testing.B) {
	for _, lang := range []syntax.Language{syntax.JavaScript, syntax.Go} {
		for _, n := range []int{25_000, 50_000, 100_000, 200_000} {
			text := deepNesting(lang, n)
			b.Run(fmt.Sprintf("%s/N=%dK", lang, n/1000), func(b *testing.B) {
				ctx := context.Background()
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					a, err := Analyze(ctx, text, lang)
					if err != nil {
						b.Fatal(err)
					}
					keep := make([]bool, a.Lines())
					keep[len(keep)-1] = true
					res, err := a.Repair(ctx, keep)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := a.Render(ctx, res.Keep); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/level")
			})
		}
	}
}

// BenchmarkRepairDeepNestingAnalysed is the same without the parse (which
// is internal/syntax's cost): analysis, repair, a budget-style selection
// and render.
func BenchmarkRepairDeepNestingAnalysed(b *testing.B) {
	for _, lang := range []syntax.Language{syntax.JavaScript, syntax.Go} {
		for _, n := range []int{25_000, 50_000, 100_000, 200_000} {
			text := deepNesting(lang, n)
			tree, err := syntax.Parse(context.Background(), lang, []byte(text))
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/N=%dK", lang, n/1000), func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					a, err := AnalyzeTree(ctx, text, lang, tree)
					if err != nil {
						b.Fatal(err)
					}
					keep := make([]bool, a.Lines())
					keep[len(keep)-1] = true
					res, err := a.Repair(ctx, keep)
					if err != nil {
						b.Fatal(err)
					}
					sel := a.NewSelection()
					if _, err := sel.Add(ctx, a.Lines()-1); err != nil {
						b.Fatal(err)
					}
					if _, err := a.Render(ctx, res.Keep); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/level")
			})
		}
	}
}

// TestDeepNestingWorkIsLinear bounds the work of every step on deep
// nesting by counting cancellation checks, which every loop makes once per
// tickEvery steps: the checks per nesting level must stay flat as N
// doubles. The quadratic closure of issue 15 walked N²/2 ancestors at
// N = 50K (1.25e9 steps, over a million checks had it checked).
func TestDeepNestingWorkIsLinear(t *testing.T) {
	for _, lang := range []syntax.Language{syntax.JavaScript, syntax.Go} {
		for _, text := range []string{deepNesting(lang, 25_000), deepNesting(lang, 50_000), deepNestingLines(25_000)} {
			if lang == syntax.Go && strings.HasPrefix(text, "function") {
				continue
			}
			tree, err := syntax.Parse(context.Background(), lang, []byte(text))
			require.NoError(t, err)
			nodes := len(tree.Nodes)
			ctx := &countingCtx{Context: context.Background()}
			a, err := AnalyzeTree(ctx, text, lang, tree)
			require.NoError(t, err)
			analysis := ctx.calls.Swap(0)

			keep := make([]bool, a.Lines())
			keep[a.Lines()/2] = true
			keep[len(keep)-1] = true
			res, err := a.Repair(ctx, keep, WithMaxHops(2))
			require.NoError(t, err)
			sel := a.NewSelection()
			for _, line := range []int{a.Lines() / 2, a.Lines() - 1, 0} {
				_, err := sel.Cost(ctx, line)
				require.NoError(t, err)
				_, err = sel.Add(ctx, line)
				require.NoError(t, err)
			}
			// Choosing, one by one, lines repair already added (each a
			// dependency frontier with its structure) costs what is new.
			hopSel := a.NewSelection(WithMaxHops(1))
			calls := 0
			for line := a.Lines() - 1; line >= 0; line -= 3 {
				_, err := hopSel.Add(ctx, line)
				require.NoError(t, err)
				calls++
			}
			_, err = a.Closure(ctx, a.Lines()/2)
			require.NoError(t, err)
			_, err = a.Structure(ctx, []int{a.Lines() / 2})
			require.NoError(t, err)
			_, err = a.Render(ctx, res.Keep)
			require.NoError(t, err)
			repair := ctx.calls.Load()

			// A loop step per node and line, a few passes each, one check
			// per tickEvery steps: a few dozen checks per 1024 nodes at
			// most. Quadratic work would need N/tickEvery checks per level.
			// Each call also checks once or twice up front.
			limit := int64(40*(nodes+a.Lines())/tickEvery + 100)
			require.Less(t, analysis, limit, "%s %d nodes: analysis work", lang, nodes)
			require.Less(t, repair, limit+int64(2*calls), "%s %d nodes: repair work", lang, nodes)
			t.Logf("%s: %d nodes, %d lines: %d checks in analysis, %d in repair (limits %d, %d)", lang, nodes, a.Lines(), analysis, repair, limit, limit+int64(2*calls))
		}
	}
}

// TestDeadlineHonoured: every entry point stops at a cancellation noticed
// in the middle of its loops (a context that turns cancelled after k
// checks), and a 1 ms deadline on the N = 200K analysis comes back as
// context.DeadlineExceeded, well before the work would have finished.
func TestDeadlineHonoured(t *testing.T) {
	lang := syntax.JavaScript
	text := deepNestingLines(20_000)
	tree, err := syntax.Parse(context.Background(), lang, []byte(text))
	require.NoError(t, err)
	a, err := AnalyzeTree(context.Background(), text, lang, tree)
	require.NoError(t, err)
	keep := make([]bool, a.Lines())
	keep[a.Lines()/2] = true
	rendered := make([]bool, a.Lines()) // every other line: many placeholders
	for i := range rendered {
		rendered[i] = i%2 == 0
	}
	steps := map[string]func(ctx context.Context) error{
		"analyze": func(ctx context.Context) error {
			_, err := AnalyzeTree(ctx, text, lang, tree)
			return err
		},
		"repair": func(ctx context.Context) error {
			_, err := a.Repair(ctx, keep)
			return err
		},
		"closure": func(ctx context.Context) error {
			_, err := a.Closure(ctx, a.Lines()/2)
			return err
		},
		"selection": func(ctx context.Context) error {
			_, err := a.NewSelection().Add(ctx, a.Lines()/2)
			return err
		},
		"cost": func(ctx context.Context) error {
			_, err := a.NewSelection().Cost(ctx, a.Lines()/2)
			return err
		},
		"structure": func(ctx context.Context) error {
			_, err := a.Structure(ctx, []int{a.Lines() / 2})
			return err
		},
		"render": func(ctx context.Context) error {
			_, err := a.Render(ctx, rendered)
			return err
		},
	}
	for name, step := range steps {
		// The first check or two are up front; cancelling at the third
		// is noticed only inside a loop.
		ctx := &countingCtx{Context: context.Background()}
		require.NoError(t, step(ctx), name)
		total := ctx.calls.Load()
		require.Greater(t, total, int64(2), "%s checks ctx inside its loops", name)
		ctx = &countingCtx{Context: context.Background(), cancelAt: 3}
		err := step(ctx)
		require.ErrorIs(t, err, context.Canceled, name)
		// It stops at the first cancelled check (and asks ctx once more
		// for the error it wraps).
		require.LessOrEqual(t, ctx.calls.Load(), int64(5), "%s stops at the first cancelled check", name)
	}

	// A real deadline on issue 15's largest input.
	big := deepNesting(lang, 200_000)
	bigTree, err := syntax.Parse(context.Background(), lang, []byte(big))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = AnalyzeTree(ctx, big, lang, bigTree)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	// Loose, for a loaded machine: the whole analysis takes ~0.3 s alone.
	require.Less(t, time.Since(start), 2*time.Second)
	_, err = Render(ctx, big, lang, []bool{false})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	runtime.KeepAlive(bigTree)
}

// TestMemoryPerLine bounds what an analysis allocates and keeps per input
// line (runtime.MemStats, not wall time): issue 15 measured 2.2 KB per line
// through the whole pipeline for 1M empty lines, of which the analysis
// allocated and kept 104 bytes per line (a 24-byte slice header per line in
// three tables, 32 bytes of line positions); now 8 allocated, 4 kept.
func TestMemoryPerLine(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name            string
		lang            syntax.Language
		text            string
		alloc, retained float64 // bytes per line
	}{
		{"go/empty", syntax.Go, strings.Repeat("\n", 1_000_000), 16, 8},
		{"python/empty", syntax.Python, strings.Repeat("\n", 1_000_000), 16, 8},
		{"javascript/empty", syntax.JavaScript, strings.Repeat("\n", 1_000_000), 16, 8},
		// Six syntax nodes per line; the parse itself (internal/syntax)
		// is not counted.
		{"go/statements", syntax.Go, "package p\nfunc f() {\n" + strings.Repeat("\tx()\n", 100_000) + "}\n", 400, 80},
		{"python/statements", syntax.Python, strings.Repeat("x()\n", 100_000), 400, 80},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before, analysed, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			tree, err := syntax.Parse(ctx, tc.lang, []byte(tc.text))
			require.NoError(t, err)
			runtime.ReadMemStats(&analysed)
			parse := analysed.TotalAlloc
			a, err := AnalyzeTree(ctx, tc.text, tc.lang, tree)
			require.NoError(t, err)
			runtime.ReadMemStats(&analysed)
			tree = nil
			runtime.GC()
			runtime.ReadMemStats(&after)
			lines := float64(a.Lines())
			alloc := float64(analysed.TotalAlloc-parse) / lines
			retained := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / lines
			t.Logf("%d lines: analysis allocated %.1f B/line, keeps %.1f B/line", a.Lines(), alloc, retained)
			require.Less(t, alloc, tc.alloc)
			require.Less(t, retained, tc.retained)

			keep := make([]bool, a.Lines())
			for i := 0; i < len(keep); i += 100 {
				keep[i] = true
			}
			runtime.ReadMemStats(&before)
			res, err := a.Repair(ctx, keep)
			require.NoError(t, err)
			_, err = a.Render(ctx, res.Keep)
			require.NoError(t, err)
			runtime.ReadMemStats(&after)
			perLine := float64(after.TotalAlloc-before.TotalAlloc) / lines
			t.Logf("repair and render allocated %.1f B/line", perLine)
			require.Less(t, perLine, 16.0)
			runtime.KeepAlive(a)
		})
	}
}
