package pruner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/hfhub/hubtest"
)

const hubQuery = "how are retries scheduled?"

const hubText = `import time


def retry(fn, attempts=3, delay=0.5):
    """Call fn until it succeeds, sleeping between attempts."""
    for i in range(attempts):
        try:
            return fn()
        except IOError:
            time.sleep(delay * 2 ** i)
    raise RuntimeError("out of attempts")


def parse(line):
    key, _, value = line.partition("=")
    return key.strip(), value.strip()
`

// fakeHub serves testdata/<ckpt> as acme/<ckpt> and points the environment
// (HF_ENDPOINT, an empty HF_HUB_CACHE, no token, online) at it.
func fakeHub(t *testing.T, ckpt string) (s *hubtest.Server, cache, commit string) {
	s = hubtest.New(t)
	commit = s.AddRepo("acme/"+ckpt, hubtest.ReadDir(t, filepath.Join("testdata", ckpt)))
	cache = t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_ENDPOINT", s.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	return s, cache, commit
}

// pruneWith loads name and prunes hubText; the result comes back as its
// JSON (every exported field).
func pruneWith(t *testing.T, name string, opts ...pruner.Option) string {
	t.Helper()
	p, err := pruner.Load(context.Background(), name, append(opts, pruner.WithMinInputTokens(0))...)
	require.NoError(t, err)
	res, err := p.Prune(context.Background(), hubQuery, hubText)
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	return string(b)
}

// TestLoadHub: Load("hf:owner/name") fetches each published layout from a
// fake Hub (progress reported up to each file's size) and prunes exactly as
// Load on the local folder; Download then returns the cached snapshot, and
// SuggestedMemoryLimit finds it.
func TestLoadHub(t *testing.T) {
	for _, ckpt := range []string{"tiny-swepruner", "tiny-lamr"} {
		t.Run(ckpt, func(t *testing.T) {
			_, cache, commit := fakeHub(t, ckpt)
			name := "hf:acme/" + ckpt
			done := map[string]int64{}
			got := pruneWith(t, name, pruner.WithDownloadProgress(func(file string, d, total int64) {
				assert.LessOrEqual(t, d, total, file)
				done[file] = d
			}))
			want := pruneWith(t, filepath.Join("testdata", ckpt))
			assert.Equal(t, want, got)
			for _, f := range []string{"config.json", "model.safetensors"} {
				st, err := os.Stat(filepath.Join("testdata", ckpt, f))
				require.NoError(t, err)
				assert.Equal(t, st.Size(), done[f], f)
			}
			dir, err := pruner.Download(context.Background(), name+"@main")
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(cache, "models--acme--"+ckpt, "snapshots", commit), dir)
			assert.Equal(t, pruner.SuggestedMemoryLimit(filepath.Join("testdata", ckpt)), pruner.SuggestedMemoryLimit(name))
		})
	}
}

// TestLoadHubPythonCache: a cache laid out by huggingface_hub (blobs,
// relative links, refs/main) loads with HF_HUB_OFFLINE=1 and with the Hub
// unreachable, by branch and by commit hash, and prunes as the folder does.
func TestLoadHubPythonCache(t *testing.T) {
	s, cache, commit := fakeHub(t, "tiny-swepruner")
	s.Close()
	repoDir := filepath.Join(cache, "models--acme--tiny-swepruner")
	snap := filepath.Join(repoDir, "snapshots", commit)
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755))
	for name, b := range hubtest.ReadDir(t, filepath.Join("testdata", "tiny-swepruner")) {
		etag := hubtest.ETag(name, b)
		require.NoError(t, os.WriteFile(filepath.Join(repoDir, "blobs", etag), b, 0o644))
		require.NoError(t, os.Symlink("../../blobs/"+etag, filepath.Join(snap, name)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(commit), 0o644))
	want := pruneWith(t, filepath.Join("testdata", "tiny-swepruner"))

	for _, offline := range []string{"", "1"} {
		t.Setenv("HF_HUB_OFFLINE", offline)
		for _, rev := range []string{"", "@main", "@" + commit} {
			assert.Equal(t, want, pruneWith(t, "hf:acme/tiny-swepruner"+rev), "offline=%q %s", offline, rev)
		}
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	_, err := pruner.Load(context.Background(), "hf:acme/tiny-swepruner@v2")
	require.ErrorIs(t, err, pruner.ErrDownload)
	assert.Contains(t, err.Error(), "HF_HUB_OFFLINE")
}

// TestLoadHubErrors: Load's hf: failures are ErrDownload, with
// ErrUnauthorized (and advice to set HF_TOKEN) for a 401, ErrNotFound for a
// 404, the context's error when cancelled mid-download; a malformed name is
// ErrBadCheckpoint. Nothing is left in the snapshots folder.
func TestLoadHubErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hf     string
		cancel bool
		is     []error
		msg    string
	}{
		{name: "401", hf: "hf:acme/tiny-swepruner", is: []error{pruner.ErrDownload, pruner.ErrUnauthorized}, msg: "set HF_TOKEN"},
		{name: "404 repository", hf: "hf:acme/nothing", is: []error{pruner.ErrDownload, pruner.ErrNotFound}},
		{name: "404 revision", hf: "hf:acme/tiny-swepruner@nope", is: []error{pruner.ErrDownload, pruner.ErrNotFound}},
		{name: "cancelled", hf: "hf:acme/tiny-swepruner", cancel: true, is: []error{pruner.ErrDownload, context.Canceled}},
		{name: "bad name", hf: "hf:acme/a/b", is: []error{pruner.ErrBadCheckpoint}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cache, _ := fakeHub(t, "tiny-swepruner")
			if tc.name == "401" {
				s.RequireToken("secret")
			} else {
				t.Setenv("HF_TOKEN", "secret")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// cancel: mid-download, once the weights start arriving.
			_, err := pruner.Load(ctx, tc.hf, pruner.WithDownloadProgress(func(file string, done, _ int64) {
				if tc.cancel && file == "model.safetensors" && done > 0 {
					cancel()
				}
			}))
			require.Error(t, err)
			for _, e := range tc.is {
				assert.ErrorIs(t, err, e)
			}
			assert.Contains(t, err.Error(), tc.msg)
			assert.True(t, strings.HasPrefix(err.Error(), "pruner: "), err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), "pruner:"), err.Error())
			ents, _ := os.ReadDir(filepath.Join(cache, "models--acme--tiny-swepruner", "snapshots"))
			assert.Empty(t, ents)
		})
	}
}

// TestDownloadPassThrough: a name without "hf:" is returned untouched and
// nothing is requested; the embedded model never downloads.
func TestDownloadPassThrough(t *testing.T) {
	s, _, _ := fakeHub(t, "tiny-swepruner")
	for _, name := range []string{"", "testdata/tiny-swepruner", "acme/tiny-swepruner"} {
		dir, err := pruner.Download(context.Background(), name)
		require.NoError(t, err)
		assert.Equal(t, name, dir)
	}
	_, err := pruner.Load(context.Background(), "")
	require.NoError(t, err)
	_, err = pruner.Load(context.Background(), "hf:acme/tiny-swepruner", pruner.WithScorer(pruner.ScorerLexical))
	require.NoError(t, err)
	assert.Empty(t, s.Requests())
	assert.False(t, errors.Is(err, pruner.ErrDownload))
}

// TestDownloadProgressTo: a large file prints a line per tenth and one when
// done, a small file only the last, an unknown size every 64 MiB.
func TestDownloadProgressTo(t *testing.T) {
	var b strings.Builder
	fn := pruner.DownloadProgressTo(&b)
	const big = 100 << 20
	for done := int64(0); done <= big; done += 1 << 20 {
		fn("model.safetensors", done, big)
	}
	fn("config.json", 0, 1306)
	fn("config.json", 1306, 1306)
	for done := int64(0); done <= 130<<20; done += 1 << 20 {
		fn("vocab.json", done, -1)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"downloading model.safetensors: 0% of 100.0 MiB"}
	for p := 10; p <= 90; p += 10 {
		want = append(want, "downloading model.safetensors: "+strconv.Itoa(p)+"% of 100.0 MiB")
	}
	want = append(want,
		"downloading model.safetensors: done (100.0 MiB)",
		"downloading config.json: done (1.3 KiB)",
		"downloading vocab.json: 0 B",
		"downloading vocab.json: 64.0 MiB",
		"downloading vocab.json: 128.0 MiB",
	)
	assert.Equal(t, want, lines)
}

// Download refuses options Load would refuse, before anything is fetched.
func TestDownloadChecksOptionsFirst(t *testing.T) {
	s, _, _ := fakeHub(t, "tiny-swepruner")
	for _, opts := range [][]pruner.Option{
		{pruner.WithSWEPrunerCompat(), pruner.WithTokenBudget(50)},
		{pruner.WithLanguage("klingon")},
	} {
		_, err := pruner.Download(context.Background(), "hf:acme/tiny-swepruner", opts...)
		require.ErrorIs(t, err, pruner.ErrOption)
	}
	assert.Empty(t, s.Requests())
}
