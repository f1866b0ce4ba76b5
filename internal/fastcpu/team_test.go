package fastcpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTeamRunsEveryPart: each dispatch runs its function exactly once per
// worker, and returns only after all of them returned, with dispatches
// coming from many goroutines at once (the executions of one backend run
// concurrently); waiting helpers stay within the bound, and all of them
// leave once no work comes.
func TestTeamRunsEveryPart(t *testing.T) {
	before := runtime.NumGoroutine()
	var tm team
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				workers := 1 + (g+i)%4
				var calls, finished atomic.Int32
				tm.run(workers, func() {
					calls.Add(1)
					if i%7 == 0 {
						time.Sleep(10 * time.Microsecond) // a slow part
					}
					finished.Add(1)
				})
				if c, f := calls.Load(), finished.Load(); c != int32(workers) || f != int32(workers) {
					t.Errorf("dispatch of %d workers: %d calls, %d finished at return", workers, c, f)
					return
				}
			}
		}()
	}
	wg.Wait()
	tm.mu.Lock()
	waiting := len(tm.ready)
	tm.mu.Unlock()
	assert.LessOrEqual(t, waiting, minSpinners)

	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "helpers left after %v without work", teamSpin)
	tm.mu.Lock()
	defer tm.mu.Unlock()
	assert.Empty(t, tm.ready)
}

// TestSplitRowsCoversEachRowOnce: splitRows hands out every row exactly
// once, whatever the number of workers and rows.
func TestSplitRowsCoversEachRowOnce(t *testing.T) {
	var tm team
	for _, rows := range []int{1, 2, 3, 7, 64, 1000} {
		for _, workers := range []int{1, 2, 3, 8} {
			seen := make([]atomic.Int32, rows)
			splitRows(&tm, rows, rows*elemMinSize, workers, func(r0, r1 int) {
				for r := r0; r < r1; r++ {
					seen[r].Add(1)
				}
			})
			for r := range seen {
				require.EqualValues(t, 1, seen[r].Load(), "rows %d workers %d row %d", rows, workers, r)
			}
		}
	}
}

// BenchmarkTeamHandOff is the cost of one two-worker dispatch of an empty
// part, back to back (the helper waits running between them).
func BenchmarkTeamHandOff(b *testing.B) {
	var tm team
	for b.Loop() {
		tm.run(2, func() {})
	}
}
