package pruner

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPreworkSameResult: the analysis and line costs prepared beside a slow
// scorer render exactly what the render's own sequential preparation
// renders, with a threshold and with a budget, over code, text and CRLF.
func TestPreworkSameResult(t *testing.T) {
	ctx := context.Background()
	goSrc := "package p\n\nimport \"errors\"\n\n// Retry runs f until it succeeds.\nfunc Retry(f func() error) error {\n\tfor i := 0; i < 3; i++ {\n\t\tif err := f(); err == nil {\n\t\t\treturn nil\n\t\t}\n\t}\n\treturn errors.New(\"failed\")\n}\n\nfunc other() int {\n\tx := 1\n\treturn x\n}\n"
	pySrc := "import os\n\n\ndef retry(f):\n    for i in range(3):\n        try:\n            return f()\n        except OSError as e:\n            err = e\n    raise RuntimeError('failed')\n\n\ndef other():\n    return os.getcwd()\n"
	log := strings.Repeat("ok   pkg/a 0.1s\n", 30) + "--- FAIL: TestRetry (0.00s)\n    retry_test.go:12: want 3 tries\n" + strings.Repeat("ok   pkg/b 0.2s\n", 30)
	for _, tc := range []struct {
		name, text string
		opts       []Option
	}{
		{"go", goSrc, nil},
		{"go-crlf", strings.ReplaceAll(goSrc, "\n", "\r\n"), nil},
		{"python-budget", pySrc, []Option{WithLineBudget(0.3)}},
		{"log", log, nil},
		{"go-no-repair", goSrc, []Option{WithRepair(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(grepScorer{}, append([]Option{WithMinInputTokens(0)}, tc.opts...)...)
			require.NoError(t, err)
			require.True(t, p.sc.slow())
			got, err := p.Prune(ctx, "when does retry fail?", tc.text)
			require.NoError(t, err)

			lang, err := p.language(tc.text)
			require.NoError(t, err)
			ts, err := p.sc.score(ctx, p, "when does retry fail?", tc.text, lang)
			require.NoError(t, err)
			verdict, err := p.judgeRelevance(ctx, ts)
			require.NoError(t, err)
			want, err := p.renderLibrary(ctx, tc.text, ts, lang, verdict, nil)
			require.NoError(t, err)

			assert.Equal(t, want.Text, got.Text)
			assert.Equal(t, want.Lines, got.Lines)
			assert.Equal(t, want.Tokens.Kept, got.Tokens.Kept)
			assert.Equal(t, want.Notes, got.Notes[:len(want.Notes)])
			assert.Less(t, len(got.Text), len(tc.text), "something was folded")
		})
	}
}

// blockingScorer waits for its context to end, like a model call that is
// cancelled mid-batch, or fails at once.
type blockingScorer struct{ fail bool }

func (blockingScorer) Name() string { return "blocking" }

func (b blockingScorer) Score(ctx context.Context, _ string, _ *Document) (*Scores, error) {
	if b.fail {
		return nil, errors.New("device lost")
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestPreworkEndsWithTheCall: when scoring fails or the call is cancelled,
// Prune returns the error and leaves no goroutine behind.
func TestPreworkEndsWithTheCall(t *testing.T) {
	text := strings.Repeat("func f() {\n\treturn\n}\n", 20000) // ~440 KB: prepared beside the scorer
	require.Less(t, len(text), maxPreworkBytes)
	before := runtime.NumGoroutine()
	for _, fail := range []bool{false, true} {
		p, err := New(blockingScorer{fail: fail}, WithLanguage("go"))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err = p.Prune(ctx, "q", text)
		cancel()
		require.Error(t, err)
		if fail {
			assert.ErrorContains(t, err, "device lost")
		} else {
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		}
	}
	// Prune waited for its goroutine; give the runtime a moment to reap it.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
}
