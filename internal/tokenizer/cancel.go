package tokenizer

import "context"

// checkEvery is how much work (about a byte of text each unit) passes
// between two looks at the context: at the slowest encoding speed (a few
// MB/s) that is a few milliseconds.
const checkEvery = 16 << 10

// canceller lets the long loops of one call notice a cancelled context
// cheaply: tick counts work down and polls the context's Done channel only
// when the count runs out. A nil canceller, or one for a context that can
// never be cancelled, never reports.
type canceller struct {
	ctx    context.Context
	done   <-chan struct{}
	budget int
	err    error
}

func newCanceller(ctx context.Context) *canceller {
	return &canceller{ctx: ctx, done: ctx.Done(), budget: checkEvery}
}

// tick records n units of work and reports whether the context is done
// (then err is set).
func (c *canceller) tick(n int) bool {
	if c == nil || c.done == nil {
		return false
	}
	if c.err != nil {
		return true
	}
	if c.budget -= n; c.budget > 0 {
		return false
	}
	c.budget = checkEvery
	select {
	case <-c.done:
		c.err = c.ctx.Err()
		return true
	default:
		return false
	}
}

// cancelled reports a cancellation seen by an earlier tick.
func (c *canceller) cancelled() bool { return c != nil && c.err != nil }
