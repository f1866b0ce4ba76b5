package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForEach(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {100, 1}, {100, 3}, {5, 0}, {5, -2}} {
		seen := make([]int32, tc.n)
		err := ForEach(context.Background(), tc.n, tc.workers, func(i int) error {
			atomic.AddInt32(&seen[i], 1)
			return nil
		})
		require.NoError(t, err)
		for i, s := range seen {
			assert.EqualValues(t, 1, s, "index %d of %d", i, tc.n)
		}
	}
}

func TestForEachFirstErrorStops(t *testing.T) {
	boom := errors.New("boom")
	var ran atomic.Int32
	err := ForEach(context.Background(), 10000, 2, func(i int) error {
		ran.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	assert.Less(t, int(ran.Load()), 10000, "indices after the error are not started")
}

func TestForEachCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := ForEach(ctx, 1000, 2, func(int) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
}
