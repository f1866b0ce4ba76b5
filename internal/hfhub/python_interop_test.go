package hfhub

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPythonInterop checks the cache against Python's huggingface_hub
// itself, both ways, with the fake Hub: files Python downloaded serve
// Snapshot offline, and files Snapshot downloaded serve Python offline and
// online (no GET) with scan_cache_dir reporting nothing wrong. It needs a
// Python that imports huggingface_hub: set HFHUB_PYTHON to it (for example
// "python3", with PYTHONPATH as needed); skipped otherwise. It passes with
// huggingface_hub 0.36.2.
func TestPythonInterop(t *testing.T) {
	py := os.Getenv("HFHUB_PYTHON")
	if py == "" {
		t.Skip("HFHUB_PYTHON not set")
	}
	s, cache, commit, want := hub(t)
	python := func(t *testing.T, env []string, script string) string {
		t.Helper()
		cmd := exec.Command(py, "-c", script)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	names := `["config.json", "model.safetensors", "tokenizer_config.json"]`

	t.Run("python writes, Go reads", func(t *testing.T) {
		pyCache := t.TempDir()
		python(t, []string{"HF_HUB_CACHE=" + pyCache}, `
from huggingface_hub import hf_hub_download
for f in `+names+`:
    hf_hub_download("`+repoID+`", f)
`)
		dir, err := New(WithCacheDir(pyCache), WithOffline(true)).Snapshot(context.Background(), mustRef(t, repoID), files)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(pyCache, "models--acme--tiny-pruner", "snapshots", commit), dir)
		for name, b := range want {
			got, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			assert.Equal(t, b, got, name)
		}
	})

	t.Run("Go writes, python reads", func(t *testing.T) {
		_, err := New().Snapshot(context.Background(), mustRef(t, repoID), files)
		require.NoError(t, err)
		for _, offline := range []string{"1", "0"} {
			s.ResetRequests()
			out := python(t, []string{"HF_HUB_CACHE=" + cache, "HF_HUB_OFFLINE=" + offline}, `
from huggingface_hub import hf_hub_download, scan_cache_dir
for f in `+names+`:
    print(hf_hub_download("`+repoID+`", f))
info = scan_cache_dir()
print("warnings", len(info.warnings), [str(w) for w in info.warnings])
for r in info.repos:
    for rev in r.revisions:
        print("revision", rev.commit_hash, sorted(f.file_name for f in rev.files), sorted(rev.refs))
`)
			assert.Contains(t, out, "warnings 0 []", out)
			assert.Contains(t, out, "revision "+commit+" ['config.json', 'model.safetensors', 'tokenizer_config.json'] ['main']", out)
			assert.Contains(t, out, filepath.Join(cache, "models--acme--tiny-pruner", "snapshots", commit, "model.safetensors"), out)
			for _, r := range s.Requests() {
				assert.NotEqual(t, "GET", r.Method, "Python downloaded %s again", r.Path)
			}
			if offline == "1" {
				assert.Empty(t, s.Requests())
			}
		}
	})
}
