package pruner

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/memtest"
)

var long = flag.Bool("long", false, "run the stress and soak tests at full size")

// stressTexts returns the in-repository corpus's texts and, where
// ../shared is beside the repository (as in CI), the dev set's. Each text is
// cut to at most maxBytes at a line boundary so that CI runs many short
// calls: the races under test are per call, not per byte. maxBytes <= 0
// keeps the texts whole.
func stressTexts(t testing.TB, maxBytes int) []string {
	t.Helper()
	files := corpusFiles(t, "evalsets/dev")
	var texts []string
	for _, f := range files {
		for _, c := range f.Cases {
			text := c.Text
			if maxBytes > 0 && len(text) > maxBytes {
				cut := bytes.LastIndexByte([]byte(text[:maxBytes]), '\n')
				if cut > 0 {
					text = text[:cut+1]
				} else {
					text = text[:maxBytes]
				}
			}
			texts = append(texts, text)
		}
	}
	require.NotEmpty(t, texts)
	return texts
}

// stressQueries are agent-style and commit-style queries; which one goes
// with which text does not matter to the races under test.
var stressQueries = []string{
	"how are errors returned to the caller?",
	"Fix flag parsing for subcommands",
	"where is the configuration loaded?",
	"which test failed and why?",
}

// callCtx returns the context of call i: cancelled after the call as
// net/http does (mode 0), a deadline of 0–5 ms that may fire mid-call
// (mode 1), or never cancelled (mode 2).
func callCtx(rng *rand.Rand, i int) (ctx context.Context, cancel context.CancelFunc, mayExpire bool) {
	switch i % 3 {
	case 0:
		ctx, cancel = context.WithCancel(context.Background())
		return ctx, cancel, false
	case 1:
		ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rng.IntN(5_000_001)))
		return ctx, cancel, true
	default:
		return context.Background(), func() {}, false
	}
}

// TestPruneCancelStress calls Prune from 8 goroutines over the dev set's
// texts, each call with its own context cancelled after it returns or with a
// short deadline. The parse's cancellation flag was once freed while its
// watcher could still write to it: this crashed the process (SIGSEGV in
// ts_parser_delete or pk_walk) within a few hundred calls. Every result is
// checked against the verbatim contract, and the only error allowed is an
// expired deadline.
func TestPruneCancelStress(t *testing.T) {
	calls, maxBytes := 5_000, 1500
	if *long {
		calls, maxBytes = 50_000, 0
	}
	texts := stressTexts(t, maxBytes)
	p, err := Load(context.Background(), "")
	require.NoError(t, err)

	type done struct {
		text string
		res  *Result
	}
	const workers = 8
	results := make(chan done, 64)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for i := w; i < calls; i += workers {
				text := texts[i%len(texts)]
				ctx, cancel, mayExpire := callCtx(rng, i)
				res, err := p.Prune(ctx, stressQueries[i%len(stressQueries)], text)
				cancel()
				switch {
				case err != nil && mayExpire && errors.Is(err, context.DeadlineExceeded):
				case err != nil:
					errs <- fmt.Errorf("call %d: %w", i, err)
					return
				default:
					results <- done{text, res}
				}
			}
		}(w)
	}
	go func() { wg.Wait(); close(results) }()
	checked := 0
	for d := range results {
		checkInvariants(t, d.text, d.res)
		checked++
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d calls, %d completed and checked", calls, checked)
	require.Greater(t, checked, calls/3, "most calls must complete")
}

// settledRSS collects garbage and returns freed pages before reading RSS,
// which counts the C heap (tree-sitter's trees and parsers) that Go's
// statistics cannot see.
func settledRSS(t testing.TB) int64 {
	t.Helper()
	rss, ok := memtest.SettledRSS()
	if !ok {
		t.Skipf("no VmRSS in /proc/self/status on %s: RSS cannot be read", runtime.GOOS)
	}
	return rss
}

// TestPruneMemoryFlat checks that memory does not grow with the number of
// calls: RSS after 10,000 Prune calls (1 and 8 goroutines, contexts
// cancelled after each call) stays within 10% + 16 MiB of RSS after 1,000.
// A leak of one tree-sitter parser or tree per call (a few KB) would grow
// RSS by tens of MB over the 9,000 calls in between.
func TestPruneMemoryFlat(t *testing.T) {
	if raceDetector {
		t.Skip("RSS bound: the race detector's shadow memory grows with every goroutine and allocation")
	}
	calls := 10_000
	if *long {
		calls = 100_000
	}
	texts := stressTexts(t, 800)
	p, err := Load(context.Background(), "")
	require.NoError(t, err)
	for _, workers := range []int{1, 8} {
		t.Run(strconv.Itoa(workers)+"goroutines", func(t *testing.T) {
			run := func(from, to int) {
				var wg sync.WaitGroup
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						for i := from + w; i < to; i += workers {
							ctx, cancel := context.WithCancel(context.Background())
							_, err := p.Prune(ctx, stressQueries[i%len(stressQueries)], texts[i%len(texts)])
							cancel()
							if err != nil {
								t.Errorf("call %d: %v", i, err)
								return
							}
						}
					}(w)
				}
				wg.Wait()
			}
			run(0, calls/10)
			at1k := settledRSS(t)
			run(calls/10, calls)
			at10k := settledRSS(t)
			t.Logf("RSS after %d calls: %.1f MiB; after %d: %.1f MiB", calls/10, float64(at1k)/(1<<20), calls, float64(at10k)/(1<<20))
			require.LessOrEqual(t, at10k, at1k+at1k/10+16<<20,
				"RSS grew from %d to %d bytes between %d and %d calls", at1k, at10k, calls/10, calls)
		})
	}
}
