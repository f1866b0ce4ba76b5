package pruner

import (
	"context"

	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/syntax"
)

// maxPreworkBytes bounds the texts whose render preparation runs beside the
// scorer. Above it the model's time dwarfs the parse's, and holding the
// parse tree while the model's activations are live would raise the peak
// memory for no measurable gain.
const maxPreworkBytes = 1 << 20

// prework is the part of rendering that does not depend on the scores: the
// syntax analysis of the text and each line's token cost. With a model on an
// accelerator the host waits on the device; running this on a host core
// meanwhile takes the parse (about half the host time of an 8K-token call)
// off the critical path.
type prework struct {
	done    chan struct{}
	lines   []chunk.Line // chunk.SplitLines(text)
	a       *astrepair.Analysis
	aErr    error
	cost    []int
	costErr error
}

// startPrework starts the render's preparation of text on its own
// goroutine. The caller must call wait before returning, so that nothing
// outlives the call; cancelling ctx ends the work early.
func (p *Pruner) startPrework(ctx context.Context, text string, lang syntax.Language) *prework {
	w := &prework{done: make(chan struct{}), lines: chunk.SplitLines(text)}
	go func() {
		defer close(w.done)
		// A panic here would kill the process (Prune's recover runs on
		// another goroutine), so each step turns one into its error.
		func() {
			defer recoverTo(&w.aErr)
			w.a, w.aErr = astrepair.AnalyzeTree(ctx, text, lang, nil)
		}()
		func() {
			defer recoverTo(&w.costErr)
			w.cost, w.costErr = p.lineTokens(ctx, text, w.lines)
		}()
	}()
	return w
}

// wait blocks until the preparation has finished.
func (w *prework) wait() { <-w.done }
