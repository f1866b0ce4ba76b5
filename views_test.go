package pruner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

func TestViewKey(t *testing.T) {
	k := pruner.ViewKey("text", "q", "budget=0.1")
	assert.Len(t, k, 64)
	assert.Equal(t, k, pruner.ViewKey("text", "q", "budget=0.1"))
	for _, other := range []string{
		pruner.ViewKey("text ", "q", "budget=0.1"), // an edited text
		pruner.ViewKey("text", "q2", "budget=0.1"),
		pruner.ViewKey("text", "q", "budget=0.2"),
		pruner.ViewKey("text", "q"),
		pruner.ViewKey("textq", "", "budget=0.1"), // no ambiguity in the concatenation
		pruner.ViewKey("text", "q", "budget=0", ".1"),
	} {
		assert.NotEqual(t, k, other)
	}
}

// The loop a tool runs: first view, then follow-ups answered with only the
// new lines; an edited text starts over.
func TestViewsLoop(t *testing.T) {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.15), pruner.WithLanguage("go"))
	require.NoError(t, err)
	var views pruner.Views // the zero value is ready
	q := "how long is the backoff between retries?"
	read := func(text string, items ...string) (reply string, view *pruner.Result) {
		t.Helper()
		key := pruner.ViewKey(text, q)
		prev := views.Last(key)
		if prev == nil || len(items) == 0 {
			prev, err = p.Prune(ctx, q, text)
			require.NoError(t, err)
			if len(items) == 0 {
				views.Remember(key, prev)
				return prev.Text, prev
			}
		}
		next, err := prev.Unfold(ctx, items...)
		require.NoError(t, err)
		d, err := next.Delta(prev)
		require.NoError(t, err)
		views.Remember(key, next)
		return d, next
	}
	first, _ := read(unfoldGo)
	assert.NotContains(t, first, "type Server struct")
	d1, _ := read(unfoldGo, "Server.do")
	assert.Contains(t, d1, "func (s *Server) do")
	// The second follow-up is relative to the view after the first.
	d2, v2 := read(unfoldGo, "Server.do", "type Client")
	assert.NotContains(t, d2, "func (s *Server) do")
	assert.Contains(t, d2, "type Client struct")
	assert.Len(t, v2.Expanded, 3)
	// An edited text: its own key, so no stale view.
	edited := strings.Replace(unfoldGo, "return nil\n}\n\n// retry", "return nil // ok\n}\n\n// retry", 1)
	d3, v3 := read(edited, "type Client")
	assert.Len(t, v3.Expanded, 1)
	assert.Contains(t, d3, "type Client struct")
	n, _ := views.Len()
	assert.Equal(t, 2, n)
}

func TestViewsBounded(t *testing.T) {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.15))
	require.NoError(t, err)
	views := pruner.Views{MaxBytes: 64 << 10}
	var results []*pruner.Result
	for i := 0; i < 40; i++ {
		text := fmt.Sprintf("package p\n\n// f%d does things.\nfunc f%d() int {\n\treturn %d\n}\n", i, i, i) + strings.Repeat("// filler line of text\n", 100)
		r, err := p.Prune(ctx, "what does f return?", text)
		require.NoError(t, err)
		views.Remember(pruner.ViewKey(text, "q"), r)
		results = append(results, r)
		_, bytes := views.Len()
		require.LessOrEqual(t, bytes, int64(64<<10))
	}
	n, _ := views.Len()
	assert.Less(t, n, 40, "old views are forgotten")
	assert.Greater(t, n, 0)
	// The most recent is remembered; the first is gone.
	last := 39
	text := fmt.Sprintf("package p\n\n// f%d does things.\nfunc f%d() int {\n\treturn %d\n}\n", last, last, last) + strings.Repeat("// filler line of text\n", 100)
	assert.Same(t, results[last], views.Last(pruner.ViewKey(text, "q")))
	text0 := "package p\n\n// f0 does things.\nfunc f0() int {\n\treturn 0\n}\n" + strings.Repeat("// filler line of text\n", 100)
	assert.Nil(t, views.Last(pruner.ViewKey(text0, "q")))
	// A view larger than the bound is not kept.
	tiny := pruner.Views{MaxBytes: 100}
	tiny.Remember("k", results[0])
	assert.Nil(t, tiny.Last("k"))
	tiny.Remember("k", nil)
}

func TestViewsConcurrent(t *testing.T) {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.15), pruner.WithLanguage("go"))
	require.NoError(t, err)
	first, err := p.Prune(ctx, "q", unfoldGo)
	require.NoError(t, err)
	views := pruner.Views{MaxBytes: 256 << 10}
	names := []string{"do", "backoff", "type Client", "maxRetries", "Client.retry"}
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := pruner.ViewKey(unfoldGo, "q", fmt.Sprint(i%4))
			prev := views.Last(key)
			if prev == nil {
				prev = first
			}
			next, err := prev.Unfold(ctx, names[i%len(names)])
			if !assert.NoError(t, err) {
				return
			}
			_, err = next.Delta(prev)
			assert.NoError(t, err)
			views.Remember(key, next)
		}()
	}
	wg.Wait()
	n, _ := views.Len()
	assert.Equal(t, 4, n)
}
