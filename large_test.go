package pruner

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// realGoSource concatenates Go standard library files up to n bytes.
func realGoSource(t testing.TB, n int) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "net", "http", "*.go"))
	require.NoError(t, err)
	var b strings.Builder
	for b.Len() < n {
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			b.Write(data)
			if b.Len() >= n {
				break
			}
		}
		require.NotZero(t, b.Len(), "no Go sources under GOROOT")
	}
	return b.String()[:n]
}

// A megabyte of real code is just more windows: it prunes without error
// and keeps every invariant. (Slow on the pure Go backend: about a minute.)
func TestPruneOneMegabyte(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("1 MB end-to-end run skipped in -short mode and under -race")
	}
	p, err := Load(context.Background(), tinyDir("tiny-lamr"), WithMaxLength(256), WithBatchSize(8))
	require.NoError(t, err)
	text := realGoSource(t, 1<<20)
	res, err := p.Prune(context.Background(), "how are request headers parsed?", text)
	require.NoError(t, err)
	require.Greater(t, res.Windows, 1000)
	require.Greater(t, res.Tokens.Input, 200_000)
	checkInvariants(t, text, res)
}

// Ten megabytes through each built-in scorer, repair and rendering: no
// limit is hit and every invariant holds.
func TestPruneTenMegabytes(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("10 MB end-to-end run skipped in -short mode and under -race")
	}
	text := realGoSource(t, 10<<20)
	for _, scorer := range []string{ScorerLexical, ScorerLine} {
		t.Run(scorer, func(t *testing.T) {
			p, err := Load(context.Background(), "", WithScorer(scorer))
			require.NoError(t, err)
			res, err := p.Prune(context.Background(), "how are request headers parsed?", text)
			require.NoError(t, err)
			require.Equal(t, scorer, res.Scorer)
			for _, n := range res.Notes {
				// The concatenation ends mid-file: that is the one thing
				// a note may say, not that a limit was hit.
				require.Contains(t, n, "syntax errors in the input", "no limit is hit")
			}
			require.NotEmpty(t, res.KeptLines())
			checkInvariants(t, text, res)
		})
	}
}
