//go:build unix

package regfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "vocab.json")
	require.NoError(t, os.WriteFile(reg, []byte("{}"), 0o644))
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(reg, link))
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	data, err := ReadFile(reg, 10)
	require.NoError(t, err)
	require.Equal(t, "{}", string(data))
	data, err = ReadFile(link, 10)
	require.NoError(t, err, "symbolic links to regular files are followed")
	require.Equal(t, "{}", string(data))

	_, err = ReadFile(reg, 1)
	require.ErrorContains(t, err, "more than the limit")

	// A FIFO with no writer would block a plain read forever.
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo, 10); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrNotRegular)
		require.ErrorContains(t, err, "named pipe")
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}
	_, err = ReadFile(dir, 10)
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = ReadFile(filepath.Join(dir, "missing"), 10)
	require.ErrorIs(t, err, os.ErrNotExist)
}
