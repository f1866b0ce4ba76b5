package pruner

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/golden"
	"github.com/prunekit/pruner/internal/syntax"
)

func tinyDir(name string) string { return filepath.Join(golden.Dir(), name) }

// TestGoldenPrune runs the three reference cases of both tiny checkpoints end
// to end in SWE-Pruner compatibility mode and requires the reference's merged
// token scores, line scores, kept lines and pruned_code.
func TestGoldenPrune(t *testing.T) {
	for _, tc := range []struct{ checkpoint, golden string }{
		{"tiny-swepruner", "golden_swepruner.json"},
		{"tiny-lamr", "golden_lamr.json"},
	} {
		t.Run(tc.checkpoint, func(t *testing.T) {
			g, err := golden.Load(tc.golden)
			require.NoError(t, err)
			base, err := Load(context.Background(), tinyDir(tc.checkpoint))
			require.NoError(t, err)
			for _, c := range g.Cases {
				t.Run(c.Name, func(t *testing.T) {
					p, err := base.With(WithSWEPrunerCompat(), WithMaxLength(c.MaxLength),
						WithThreshold(c.Threshold), WithOverlap(c.ChunkOverlapTokens), WithKeepFirstLine(c.AlwaysKeepFirstFrags))
					require.NoError(t, err)

					ts, err := p.sc.score(context.Background(), p, c.Query, c.Code, syntax.Text)
					require.NoError(t, err)
					require.Equal(t, len(c.Chunks), ts.Windows, "windows")
					require.Len(t, ts.Spans, len(c.MergedTokenScores))
					worst := 0.0
					for i, want := range c.MergedTokenScores {
						got := ts.Spans[i]
						require.Equal(t, [2]int{int(want[0]), int(want[1])}, [2]int{got.Start, got.End}, "span %d", i)
						worst = math.Max(worst, math.Abs(got.Score-want[2]))
					}
					t.Logf("merged token scores: max abs diff %.3g", worst)
					require.LessOrEqual(t, worst, 1e-5)
					require.InDelta(t, c.Score, ts.Doc, 1e-5)

					res, err := p.Prune(context.Background(), c.Query, c.Code)
					require.NoError(t, err)
					assert.Equal(t, c.KeptLines, res.KeptLines())
					assert.Equal(t, c.PrunedCode, res.Text)
					assert.InDelta(t, c.Score, res.Score, 1e-5)
					assert.Equal(t, c.Response.OriginTokenCnt, res.Tokens.Input)
					assert.Equal(t, c.Response.LeftTokenCnt, res.Tokens.Kept)
					worst = 0
					for key, want := range c.LineScores {
						n, err := strconv.Atoi(key)
						require.NoError(t, err)
						worst = math.Max(worst, math.Abs(res.Lines[n-1].Score-want))
					}
					t.Logf("line scores: max abs diff %.3g", worst)
					require.LessOrEqual(t, worst, 1e-5)
				})
			}
		})
	}
}
