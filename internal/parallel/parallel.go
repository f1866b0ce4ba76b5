// Package parallel runs a function over indices on a bounded number of
// goroutines, for the project's commands that evaluate many cases.
package parallel

import (
	"context"
	"sync"
)

// ForEach runs fn(0..n-1) on at most workers goroutines (at least one)
// and returns the first error fn returns; after it, no further index is
// started. It returns ctx's error when ctx ends first.
func ForEach(ctx context.Context, n, workers int, fn func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
