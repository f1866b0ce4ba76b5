//go:build unix

package tokenizer

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/regfile"
)

// TestLoadRefusesFIFO: a named pipe under a tokenizer file name once
// blocked Load forever (os.ReadFile waits for a writer).
func TestLoadRefusesFIFO(t *testing.T) {
	for _, name := range []string{vocabFile, mergesFile, addedTokensFile, tokenizerConfig} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, vocabFile), []byte(toyVocab()), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, mergesFile), []byte("#version: 0.2\na b\n"), 0o644))
			os.Remove(filepath.Join(dir, name))
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, name), 0o644))
			done := make(chan error, 1)
			go func() { _, err := Load(dir); done <- err }()
			select {
			case err := <-done:
				require.ErrorIs(t, err, regfile.ErrNotRegular)
			case <-time.After(10 * time.Second):
				t.Fatal("Load blocked on a FIFO")
			}
		})
	}
}
