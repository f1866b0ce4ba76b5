package pruner

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
)

// repeatedPhrase returns a part of an error message that the message says
// twice: a ": "-separated segment, or one of the sentinel phrases; "" when
// none is.
func repeatedPhrase(msg string) string {
	seen := map[string]bool{}
	for _, seg := range strings.Split(msg, ": ") {
		seg = strings.ToLower(strings.TrimSpace(seg))
		if seg != "" && seen[seg] {
			return seg
		}
		seen[seg] = true
	}
	for _, s := range []error{ErrBadCheckpoint, ErrOption, ErrInputTooLarge, ErrBinaryInput, ErrUnsupportedBackend} {
		if strings.Count(msg, s.Error()) > 1 {
			return s.Error()
		}
	}
	return ""
}

func TestRepeatedPhrase(t *testing.T) {
	assert.Equal(t, "bad checkpoint", repeatedPhrase("pruner: bad checkpoint: /x: bad checkpoint: open /x/config.json: no such file"))
	assert.Equal(t, "pruner", repeatedPhrase("pruner: load: pruner: x"))
	assert.Equal(t, "", repeatedPhrase("pruner: bad checkpoint: stat /x/config.json: no such file or directory"))
}

// TestLoadErrorsSayItOnce: a checkpoint Load refuses is reported with
// ErrBadCheckpoint, the folder or file at fault, and no phrase twice (it
// once read "pruner: bad checkpoint: X: bad checkpoint: stat X/config.json").
func TestLoadErrorsSayItOnce(t *testing.T) {
	src := filepath.Join("testdata", "tiny-swepruner")
	copyCkpt := func(t *testing.T) string {
		dir := t.TempDir()
		for _, f := range []string{"config.json", "model.safetensors"} {
			data, err := os.ReadFile(filepath.Join(src, f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
		}
		return dir
	}
	write := func(name, content string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string // the file or folder the message names
	}{
		{"missing folder", func(t *testing.T, dir string) { require.NoError(t, os.RemoveAll(dir)) }, "config.json"},
		{"empty folder", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "config.json")))
			require.NoError(t, os.Remove(filepath.Join(dir, "model.safetensors")))
		}, "config.json"},
		{"missing weights", func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "model.safetensors"))) }, "model.safetensors"},
		{"truncated weights", func(t *testing.T, dir string) {
			require.NoError(t, os.Truncate(filepath.Join(dir, "model.safetensors"), 1000))
		}, "model.safetensors"},
		{"bad config JSON", write("config.json", "{bad"), "config.json"},
		{"wrong model type", write("config.json", `{"model_type": "bert"}`), "config.json"},
		{"weights are a FIFO", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "model.safetensors")
			require.NoError(t, os.Remove(path))
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, "model.safetensors"},
		{"bad vocab.json", func(t *testing.T, dir string) {
			write("vocab.json", "{")(t, dir)
			write("merges.txt", "")(t, dir)
		}, "vocab.json"},
		{"vocab.json without merges.txt", write("vocab.json", `{"a": 0}`), "merges.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyCkpt(t)
			tc.damage(t, dir)
			p, err := Load(context.Background(), dir)
			require.Error(t, err)
			assert.Nil(t, p)
			assert.True(t, errors.Is(err, ErrBadCheckpoint), "%v", err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "pruner: bad checkpoint: "), "%s", msg)
			assert.Contains(t, msg, tc.want)
			assert.Empty(t, repeatedPhrase(msg), "%s", msg)
		})
	}
}

// A vocab.json that is there but cannot be read (the dangling link an
// interrupted Hub download leaves) is refused, not replaced by the
// embedded tokenizer.
func TestLoadDanglingVocab(t *testing.T) {
	dir := t.TempDir()
	src := tinyDir("tiny-swepruner")
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == "vocab.json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(dir, "missing-blob"), filepath.Join(dir, "vocab.json")))
	_, err = Load(context.Background(), dir)
	require.ErrorIs(t, err, ErrBadCheckpoint)
	assert.Contains(t, err.Error(), "vocab.json")
}

// A model whose weights load but overflow in use scores NaN; Prune refuses
// such scores instead of deciding on them.
func TestCheckFinite(t *testing.T) {
	p := &Pruner{kind: "lamr"}
	nan := math.NaN()
	for _, ts := range []*tokenScores{
		{Doc: nan},
		{Doc: 0.5, Spans: []chunk.ScoredSpan{{Start: 0, End: 1, Score: nan}}},
		{Doc: 0.5, LineScores: []float64{0.2, math.Inf(1)}},
		{Doc: 1.5},
	} {
		err := p.checkFinite(ts)
		require.ErrorIs(t, err, ErrBadCheckpoint)
		assert.Contains(t, err.Error(), "outside [0,1]")
	}
	require.NoError(t, p.checkFinite(&tokenScores{Doc: 1, Spans: []chunk.ScoredSpan{{Start: 0, End: 1, Score: 0}}, LineScores: []float64{0, 1}}))
}
