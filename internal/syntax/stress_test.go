package syntax

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var long = flag.Bool("long", false, "run the stress tests at soak sizes")

// stressSrc is a small Go file: small enough that a parse takes tens of
// microseconds, so the cancellation watcher and the parse race as closely as
// they do under a server's short requests.
const stressSrc = `package p

import "fmt"

type T struct{ a, b int }

func (t *T) Sum() int { return t.a + t.b }

func main() {
	for i := 0; i < 10; i++ {
		if i%2 == 0 {
			fmt.Println(i, (&T{i, i}).Sum())
		}
	}
}
`

// TestParseCancelStress is the loop every server runs: a context per call,
// cancelled when the call returns, or with a deadline that may fire while
// tree-sitter is parsing. It once freed the C cancellation flag while the
// watcher goroutine could still store into it, which corrupted the C heap
// within milliseconds (SIGSEGV in ts_parser_delete) or made a live parse on
// another goroutine fail with "tree-sitter returned no tree".
func TestParseCancelStress(t *testing.T) {
	iters := 20_000
	if *long {
		iters = 400_000
	}
	ref, err := Parse(context.Background(), Go, []byte(stressSrc))
	require.NoError(t, err)
	require.Zero(t, ref.Errors)
	want := len(ref.Nodes)

	const workers = 4
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for i := 0; i < iters/workers; i++ {
				mode := i % 3
				var (
					ctx    context.Context
					cancel context.CancelFunc
				)
				switch mode {
				case 0: // cancelled after the call, as net/http does
					ctx, cancel = context.WithCancel(context.Background())
				case 1: // a deadline of 0–5 ms that may fire mid-parse
					ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rng.IntN(5_000_001)))
				default: // never cancelled
					ctx, cancel = context.Background(), func() {}
				}
				tree, err := Parse(ctx, Go, []byte(stressSrc))
				cancel()
				switch {
				case err != nil && mode == 1 && errors.Is(err, context.DeadlineExceeded):
					// The deadline fired first: an honest failure.
				case err != nil:
					errs <- fmt.Errorf("iteration %d, mode %d: spurious parse failure: %w", i, mode, err)
					return
				case len(tree.Nodes) != want || tree.Errors != 0:
					errs <- fmt.Errorf("iteration %d, mode %d: %d nodes, %d errors; want %d nodes, 0 errors",
						i, mode, len(tree.Nodes), tree.Errors, want)
					return
				}
			}
		}(uint64(w))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
