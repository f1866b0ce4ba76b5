package train

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Word vectors are a function of the corpus and the seed (the shipped
// ones are reproducible byte for byte), and words sharing contexts end up
// closer than words that never meet.
func TestTrainWordVectorsDeterministic(t *testing.T) {
	var texts []string
	for i := range 200 {
		texts = append(texts,
			fmt.Sprintf("// retry with backoff after a failure %d\nretryDelay := backoff(attempt)\n", i),
			fmt.Sprintf("# render the column width %d\ncolumnWidth = measure(cell)\n", i))
	}
	o := DefaultWordVecOptions
	o.Dim, o.Epochs, o.MinCount, o.Subsample = 16, 5, 2, 1
	ctx := context.Background()
	a, err := TrainWordVectors(ctx, texts, o)
	require.NoError(t, err)
	b, err := TrainWordVectors(ctx, texts, o)
	require.NoError(t, err)
	var ba, bb bytes.Buffer
	_, _ = a.WriteTo(&ba)
	_, _ = b.WriteTo(&bb)
	require.Equal(t, ba.Bytes(), bb.Bytes())
	id := func(w string) int32 {
		i := a.ID(w)
		require.GreaterOrEqual(t, i, int32(0), w)
		return i
	}
	assert.Greater(t, a.Cos(id("retry"), id("backoff")), a.Cos(id("retry"), id("column")))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = TrainWordVectors(cctx, texts, o)
	require.ErrorIs(t, err, context.Canceled)
}
