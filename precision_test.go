package pruner_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/fastcpu"
)

// TestPrecisionBF16 loads the tiny SWE-Pruner checkpoint in float32 and in
// bfloat16 and prunes the same text: on a CPU with AVX512_BF16 the token
// scores stay within the bfloat16 tolerance of docs/performance.md (0.05 on
// a probability); elsewhere Load refuses with ErrUnsupportedBackend and
// fastcpu.ErrNoBF16. Other backends and unknown precisions are refused.
func TestPrecisionBF16(t *testing.T) {
	ctx := context.Background()
	const dir = "testdata/tiny-swepruner"
	_, err := pruner.Load(ctx, dir, pruner.WithPrecision("fp8"))
	require.ErrorIs(t, err, pruner.ErrOption)
	_, err = pruner.Load(ctx, dir, pruner.WithPrecision(pruner.BF16), pruner.WithBackend("simplego"))
	require.ErrorIs(t, err, pruner.ErrUnsupportedBackend)

	bf, err := pruner.Load(ctx, dir, pruner.WithPrecision(pruner.BF16), pruner.WithMinInputTokens(0))
	if !fastcpu.BF16Supported() {
		require.ErrorIs(t, err, pruner.ErrUnsupportedBackend)
		require.True(t, errors.Is(err, fastcpu.ErrNoBF16), "%v", err)
		t.Skip("no AVX512_BF16 on this CPU: Load refused bf16 as documented")
	}
	require.NoError(t, err)
	f32, err := pruner.Load(ctx, dir, pruner.WithPrecision(pruner.Float32), pruner.WithMinInputTokens(0))
	require.NoError(t, err)
	query := "how are redirects followed?"
	text := "func follow(req *Request) error {\n\tfor i := 0; i < 10; i++ {\n\t\tresp, err := send(req)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tif resp.StatusCode/100 != 3 {\n\t\t\treturn nil\n\t\t}\n\t\treq = redirect(req, resp.Header.Get(\"Location\"))\n\t}\n\treturn errTooManyRedirects\n}\n"
	a, err := f32.Prune(ctx, query, text)
	require.NoError(t, err)
	b, err := bf.Prune(ctx, query, text)
	require.NoError(t, err)
	require.NotEmpty(t, a.TokenScores, a.Unpruned)
	require.Len(t, b.TokenScores, len(a.TokenScores))
	worst := 0.0
	for i := range a.TokenScores {
		worst = max(worst, math.Abs(a.TokenScores[i].Score-b.TokenScores[i].Score))
	}
	t.Logf("largest token score difference, bf16 vs float32: %.3g", worst)
	require.LessOrEqual(t, worst, 0.05)
	require.Positive(t, worst, "bf16 changed nothing: did the weight products run in bfloat16?")
}

// TestAttentionBlock: blocked attention (WithAttentionBlock) prunes like
// whole-window attention with both tiny checkpoints: token scores within
// float32 summation noise and the same kept lines, the text several blocks
// long. Negative blocks are refused, and With cannot change the block or
// the precision of a loaded Pruner.
func TestAttentionBlock(t *testing.T) {
	ctx := context.Background()
	_, err := pruner.Load(ctx, "testdata/tiny-lamr", pruner.WithAttentionBlock(-1))
	require.ErrorIs(t, err, pruner.ErrOption)
	query := "how are redirects followed?"
	text := "package http\n\n// follow sends req and follows redirects.\nfunc follow(req *Request) error {\n\tfor i := 0; i < 10; i++ {\n\t\tresp, err := send(req)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tif resp.StatusCode/100 != 3 {\n\t\t\treturn nil\n\t\t}\n\t\treq = redirect(req, resp.Header.Get(\"Location\"))\n\t}\n\treturn errTooManyRedirects\n}\n\nfunc send(req *Request) (*Response, error) {\n\treturn defaultClient.Do(req)\n}\n"
	for _, dir := range []string{"testdata/tiny-swepruner", "testdata/tiny-lamr"} {
		t.Run(dir, func(t *testing.T) {
			whole, err := pruner.Load(ctx, dir, pruner.WithMinInputTokens(0))
			require.NoError(t, err)
			blocked, err := pruner.Load(ctx, dir, pruner.WithMinInputTokens(0), pruner.WithAttentionBlock(16))
			require.NoError(t, err)
			a, err := whole.Prune(ctx, query, text)
			require.NoError(t, err)
			b, err := blocked.Prune(ctx, query, text)
			require.NoError(t, err)
			require.Greater(t, len(a.TokenScores), 4*16, "the text spans several blocks")
			require.Len(t, b.TokenScores, len(a.TokenScores))
			worst := 0.0
			for i := range a.TokenScores {
				worst = max(worst, math.Abs(a.TokenScores[i].Score-b.TokenScores[i].Score))
			}
			t.Logf("largest token score difference, blocks of 16 vs whole: %.3g", worst)
			require.LessOrEqual(t, worst, 1e-5)
			require.Equal(t, a.Text, b.Text)
			require.Equal(t, a.Score, b.Score)

			_, err = blocked.With(pruner.WithAttentionBlock(0))
			require.ErrorIs(t, err, pruner.ErrOption)
			_, err = whole.With(pruner.WithPrecision(pruner.BF16))
			require.ErrorIs(t, err, pruner.ErrOption)
			_, err = whole.With(pruner.WithPrecision(pruner.Float32), pruner.WithAttentionBlock(0))
			require.NoError(t, err, "restating the Load settings is allowed")
		})
	}
}
