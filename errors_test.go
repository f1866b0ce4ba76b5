package pruner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
