package linemodel

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/memtest"
	"github.com/prunekit/pruner/internal/syntax"
)

var long = flag.Bool("long", false, "run the memory and cancellation checks at full size (1M lines, 20 MB)")

// goCorpus returns about n bytes of real Go: the toolchain's sources
// concatenated.
func goCorpus(tb testing.TB, n int) string {
	var b strings.Builder
	root := filepath.Join(runtime.GOROOT(), "src")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || b.Len() >= n {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			if data, err := os.ReadFile(path); err == nil {
				b.Write(data)
			}
		}
		return nil
	})
	if b.Len() < n {
		tb.Skipf("only %d bytes of Go source under %s", b.Len(), root)
	}
	return b.String()[:n]
}

// TestMemoryPerLine reports (and bounds) what feature extraction and the
// forward pass allocate per line for 1M empty lines and 20 MB of Go
// (-long; 100K lines and 2 MB otherwise).
func TestMemoryPerLine(t *testing.T) {
	m := benchModel(&testing.B{})
	lines, goBytes := 100_000, 2<<20
	if *long {
		lines, goBytes = 1_000_000, 20<<20
	}
	ctx := context.Background()
	cases := []struct {
		name string
		text string
		lang syntax.Language
	}{
		{"empty lines", strings.Repeat("\n", lines), syntax.Go},
		{"go source (text)", goCorpus(t, goBytes), syntax.Text},
		{"go source", goCorpus(t, goBytes), syntax.Go},
	}
	for _, c := range cases {
		n := len(textLines(c.text))
		var in Input
		tot, peak := memtest.HeapUse(func() { in = NewInput(ctx, "retry bad range headers", c.text, c.lang) })
		t.Logf("%s: %d lines, %d bytes: features total %.0f B/line, peak %.0f B/line", c.name, n, len(c.text),
			float64(tot)/float64(n), float64(peak)/float64(n))
		// The input itself is 4·NumFeatures + 2·MaxLineIDs + 4 = 272 B a
		// line; the parse tree (syntax.Go) is the syntax package's. The
		// sampled peak read 415 B a line alone and up to 453 with the
		// other packages' tests on two cores (the collector lags behind)
		// before the six shape columns (24 B of input, 4 B of state a
		// line) and 499 with them; 546 with the four encoder columns (16 B
		// of input, 12 B of state a line), hence the margin.
		if perLine := float64(peak) / float64(n); c.lang == syntax.Text && perLine > 576 {
			t.Errorf("%s: features peak %.0f B/line, want at most 576", c.name, perLine)
		}
		tot, peak = memtest.HeapUse(func() { m.Forward(in) })
		t.Logf("%s: forward total %.0f B/line, peak %.0f B/line", c.name, float64(tot)/float64(n), float64(peak)/float64(n))
		// Before the blocked forward pass: ~2.2 KB allocated, ~1.1 KB live
		// a line. Now the second layer's activations (192 B), the outputs
		// and the CRF's workspace.
		if perLine := float64(peak) / float64(n); perLine > 400 {
			t.Errorf("%s: forward peak %.0f B/line, want at most 400", c.name, perLine)
		}
	}
}

// TestCancelLargeInput: with a 1 ms deadline on a large text, feature
// extraction and the forward pass stop early and report the deadline.
func TestCancelLargeInput(t *testing.T) {
	m := benchModel(&testing.B{})
	lines, goBytes := 200_000, 4<<20
	if *long {
		lines, goBytes = 1_000_000, 20<<20
	}
	src := goCorpus(t, goBytes)
	for _, c := range []struct {
		name string
		text string
		lang syntax.Language
	}{
		{"empty lines", strings.Repeat("\n", lines), syntax.Go},
		{"empty lines (text)", strings.Repeat("\n", lines), syntax.Text},
		{"go source (text)", src, syntax.Text},
		{"go source", src, syntax.Go},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		start := time.Now()
		in := NewInput(ctx, "retry bad range headers", c.text, c.lang)
		took := time.Since(start)
		require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, c.name)
		require.Zero(t, in.N, c.name)
		require.Empty(t, m.Score(ctx, "retry bad range headers", c.text, c.lang), c.name)
		cancel()
		t.Logf("%s: features stopped after %v", c.name, took)
		// Loose: a loaded shared machine can stall a goroutine, but not
		// for the seconds a full run of these sizes takes.
		require.Less(t, took, 2*time.Second, c.name)
		if !*long {
			continue
		}
		// Deadlines that fall in the later phases: report the overshoot.
		for _, d := range []time.Duration{5, 20, 50, 100, 200, 400, 800} {
			ctx, cancel := context.WithTimeout(context.Background(), d*time.Millisecond)
			start := time.Now()
			in := NewInput(ctx, "retry bad range headers", c.text, c.lang)
			took := time.Since(start)
			cancel()
			if in.N == 0 {
				t.Logf("%s: deadline %v ms: stopped after %v", c.name, int(d), took)
			}
		}
	}
	// The forward pass on a big input that is already computed.
	in := NewInput(context.Background(), "retry bad range headers", strings.Repeat("x := 1\n", lines), syntax.Text)
	require.Equal(t, lines, in.N)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.ForwardContext(ctx, in)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	t.Logf("forward stopped after %v", time.Since(start))
}
