package pruner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/hfhub/hubtest"
)

// tinyBERT is a sentence-transformers folder of a tiny random BERT (its
// outputs are PyTorch's within 6e-6; internal/bert/testdata).
const tinyBERT = "internal/bert/testdata/tiny-bert"

func TestSemanticScorer(t *testing.T) {
	ctx := context.Background()
	sem, err := pruner.Load(ctx, tinyBERT, pruner.WithLineBudget(0.3))
	require.NoError(t, err)
	line, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.3))
	require.NoError(t, err)
	q := "how long is the backoff between retries?"
	got, err := sem.Prune(ctx, q, unfoldGo)
	require.NoError(t, err)
	want, err := line.Prune(ctx, q, unfoldGo)
	require.NoError(t, err)
	assert.Equal(t, pruner.ScorerSemantic, got.Scorer)
	checkRendering(t, unfoldGo, got)
	// The encoder reranks the line model's best lines: the same scores,
	// dealt out in another order, so a threshold keeps as many lines.
	var a, b []float64
	for i := range got.Lines {
		a = append(a, got.Lines[i].Score)
		b = append(b, want.Lines[i].Score)
	}
	assert.ElementsMatch(t, b, a)
	// Score is the semantic gate's (semantic_gate_test.go).
	assert.True(t, got.Score >= 0 && got.Score <= 1)

	// Named explicitly, and refused where it cannot run.
	_, err = pruner.Load(ctx, tinyBERT, pruner.WithScorer(pruner.ScorerSemantic))
	require.NoError(t, err)
	_, err = pruner.Load(ctx, "", pruner.WithScorer(pruner.ScorerSemantic))
	require.ErrorIs(t, err, pruner.ErrOption)
	_, err = pruner.Load(ctx, "testdata/tiny-swepruner", pruner.WithScorer(pruner.ScorerSemantic))
	require.ErrorIs(t, err, pruner.ErrBadCheckpoint)
	// The line model or BM25 instead of the encoder, when asked.
	l, err := pruner.Load(ctx, tinyBERT, pruner.WithScorer(pruner.ScorerLine))
	require.NoError(t, err)
	r, err := l.Prune(ctx, q, unfoldGo)
	require.NoError(t, err)
	assert.Equal(t, pruner.ScorerLine, r.Scorer)
}

// A damaged encoder folder is refused at Load, naming what is wrong.
func TestSemanticDamaged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, f := range []string{"config.json", "modules.json", "vocab.txt", "tokenizer_config.json", "sentence_bert_config.json"} {
		b, err := os.ReadFile(filepath.Join(tinyBERT, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755))
	b, err := os.ReadFile(filepath.Join(tinyBERT, "1_Pooling", "config.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1_Pooling", "config.json"), b, 0o644))
	w, err := os.ReadFile(filepath.Join(tinyBERT, "model.safetensors"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), w[:len(w)/2], 0o644))
	_, err = pruner.Load(ctx, dir)
	require.ErrorIs(t, err, pruner.ErrBadCheckpoint)
	assert.Contains(t, err.Error(), "model.safetensors")
}

func TestSemanticConcurrentAndCancelled(t *testing.T) {
	ctx := context.Background()
	p, err := pruner.Load(ctx, tinyBERT, pruner.WithLineBudget(0.3))
	require.NoError(t, err)
	first, err := p.Prune(ctx, "q retries", unfoldGo)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := p.Prune(ctx, "q retries", unfoldGo)
			if assert.NoError(t, err) {
				assert.Equal(t, first.Text, r.Text)
			}
		}()
	}
	wg.Wait()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = p.Prune(cctx, "q", strings.Repeat(unfoldGo, 20))
	require.ErrorIs(t, err, context.Canceled)
}

// An hf: sentence encoder downloads its WordPiece vocabulary and
// sentence-transformers modules beside the weights and loads as the
// folder does.
func TestSemanticHub(t *testing.T) {
	s := hubtest.New(t)
	files := hubtest.ReadDir(t, tinyBERT)
	pool, err := os.ReadFile(filepath.Join(tinyBERT, "1_Pooling", "config.json"))
	require.NoError(t, err)
	files["1_Pooling/config.json"] = pool
	s.AddRepo("acme/tiny-bert", files)
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_ENDPOINT", s.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	ctx := context.Background()
	hub, err := pruner.Load(ctx, "hf:acme/tiny-bert", pruner.WithLineBudget(0.3))
	require.NoError(t, err)
	local, err := pruner.Load(ctx, tinyBERT, pruner.WithLineBudget(0.3))
	require.NoError(t, err)
	q := "how long is the backoff between retries?"
	a, err := hub.Prune(ctx, q, unfoldGo)
	require.NoError(t, err)
	b, err := local.Prune(ctx, q, unfoldGo)
	require.NoError(t, err)
	assert.Equal(t, pruner.ScorerSemantic, a.Scorer)
	assert.Equal(t, b.Text, a.Text)
	assert.Equal(t, b.Lines, a.Lines)
}
