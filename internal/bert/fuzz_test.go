package bert

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzEmbed: any text gives a finite unit vector.
func FuzzEmbed(f *testing.F) {
	m, err := Load(context.Background(), tinyDir)
	require.NoError(f, err)
	for _, s := range []string{"", "hello world", "a\xff\x00b", "[SEP]x[CLS]", "中文 ÷ é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		vecs, err := m.Embed(context.Background(), []string{text, text + " go"})
		require.NoError(t, err)
		for _, v := range vecs {
			requireUnit(t, v)
		}
	})
}

// FuzzConfig: any config.json is read without a panic, and what is
// accepted is a model this package can size.
func FuzzConfig(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(tinyDir, "config.json"))
	require.NoError(f, err)
	f.Add(data)
	f.Add([]byte(`{"model_type":"bert","hidden_size":8,"num_attention_heads":3}`))
	f.Add([]byte(`{"model_type":"bert","layer_norm_eps":1e400}`))
	dir := f.TempDir()
	for _, name := range []string{"modules.json", "sentence_bert_config.json"} {
		src, err := os.ReadFile(filepath.Join(tinyDir, name))
		require.NoError(f, err)
		require.NoError(f, os.WriteFile(filepath.Join(dir, name), src, 0o644))
	}
	require.NoError(f, os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755))
	src, err := os.ReadFile(filepath.Join(tinyDir, "1_Pooling", "config.json"))
	require.NoError(f, err)
	require.NoError(f, os.WriteFile(filepath.Join(dir, "1_Pooling", "config.json"), src, 0o644))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "config.json")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		cfg, err := readConfig(dir)
		if err != nil {
			require.ErrorIs(t, err, ErrCheckpoint)
			return
		}
		require.Positive(t, cfg.Hidden)
		require.Positive(t, cfg.Heads)
		require.Zero(t, cfg.Hidden%cfg.Heads)
		require.Positive(t, cfg.LayerNormEps)
		require.GreaterOrEqual(t, cfg.MaxLength, 2)
		require.LessOrEqual(t, cfg.MaxLength, cfg.MaxPositions)
	})
}
