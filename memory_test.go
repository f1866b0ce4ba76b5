package pruner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSuggestedMemoryLimit checks the soft limit: twice the checkpoint's
// safetensors files plus 1 GiB, none without a checkpoint.
func TestSuggestedMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	require.Zero(t, SuggestedMemoryLimit(""))
	require.Zero(t, SuggestedMemoryLimit(dir), "no safetensors file")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), make([]byte, 1000), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), make([]byte, 50), 0o644))
	require.Equal(t, int64(2000+1<<30), SuggestedMemoryLimit(dir))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.safetensors"), make([]byte, 24), 0o644))
	require.Equal(t, int64(2048+1<<30), SuggestedMemoryLimit(dir))
}
