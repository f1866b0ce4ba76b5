package hfhub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileHub serves every resolve HEAD with the given commit and ETag, and
// every GET with body; it counts the requests it answers.
func hostileHub(t *testing.T, commit, etag string, size int64, body func(w http.ResponseWriter)) (url string, requests *atomic.Int64) {
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("X-Repo-Commit", commit)
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		if r.Method == http.MethodHead {
			return
		}
		w.Header().Del("Content-Length")
		body(w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

// requireInside requires that everything under root (the test's folder
// holding the cache) lies inside cache and that the cache holds no snapshot
// and no blob.
func requireInside(t *testing.T, root, cache string) {
	t.Helper()
	require.NoError(t, filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(cache, p)
		assert.False(t, rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)), "written outside the cache: %s", p)
		if strings.Contains(filepath.ToSlash(rel), "/snapshots/") || strings.Contains(filepath.ToSlash(rel), "/blobs/") {
			t.Errorf("left in the cache: %s", rel)
		}
		return nil
	}))
}

// mostWritten records in most the largest number of bytes a download had
// written to its file.
func mostWritten(most *atomic.Int64) Option {
	return WithProgress(func(_ string, done, _ int64) {
		if done > most.Load() {
			most.Store(done)
		}
	})
}

// TestSnapshotHostileHeaders: a commit or an ETag header that is a path
// ("../../x") or otherwise unusable is refused before anything is written,
// and nothing lands outside the cache.
func TestSnapshotHostileHeaders(t *testing.T) {
	const good = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct{ name, commit, etag string }{
		{"etag up", good, "../../x"},
		{"weak etag up", good, `W/"../../x"`},
		{"etag dotdot", good, ".."},
		{"etag dot", good, "."},
		{"etag slash", good, "a/b"},
		{"etag backslash", good, `a\..\..\x`},
		{"etag empty", good, ""},
		{"commit up", "../../x", "abc"},
		{"commit slash", good[:20] + "/" + good[21:], "abc"},
		{"commit empty", "", "abc"},
		{"commit upper", strings.ToUpper(good), "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := hostileHub(t, tc.commit, tc.etag, 3, func(w http.ResponseWriter) { w.Write([]byte("abc")) })
			root := t.TempDir()
			cache := filepath.Join(root, "a", "b", "cache")
			c := New(WithEndpoint(url), WithCacheDir(cache), WithToken(""), WithOffline(false))
			_, err := c.Snapshot(context.Background(), mustRef(t, "acme/x"), []File{{Name: "config.json"}})
			require.ErrorIs(t, err, ErrDownload)
			requireInside(t, root, cache)
		})
	}
}

// TestSnapshotRefWithAt: a Ref whose Repo holds an '@' is refused without a
// request: "a@b?x" would otherwise pass its tail off as a revision and put
// a query into the resolve URL.
func TestSnapshotRefWithAt(t *testing.T) {
	url, requests := hostileHub(t, "0123456789abcdef0123456789abcdef01234567", "abc", 3, func(w http.ResponseWriter) {})
	for _, repo := range []string{"a@b?x=", "acme/x@main", "a@b#frag", "@x"} {
		c := New(WithEndpoint(url), WithCacheDir(t.TempDir()), WithToken(""), WithOffline(false))
		_, err := c.Snapshot(context.Background(), Ref{Repo: repo, Revision: "main"}, []File{{Name: "config.json"}})
		require.ErrorIs(t, err, ErrInvalidName, repo)
		require.ErrorIs(t, err, ErrDownload, repo)
	}
	assert.Zero(t, requests.Load())
}

// TestSnapshotOversizedBody: a server that sends far more bytes than the
// size it reported is read no further than one byte past that size, and the
// file is refused (ErrChecksum) with no blob or snapshot left.
func TestSnapshotOversizedBody(t *testing.T) {
	const size = 10
	var sent atomic.Int64
	url, _ := hostileHub(t, "0123456789abcdef0123456789abcdef01234567", "abc", size, func(w http.ResponseWriter) {
		buf := make([]byte, 64<<10)
		for i := 0; i < 1024; i++ { // 64 MiB unless the client stops reading
			n, err := w.Write(buf)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	root := t.TempDir()
	cache := filepath.Join(root, "cache")
	var most atomic.Int64
	c := New(WithEndpoint(url), WithCacheDir(cache), WithToken(""), WithOffline(false), mostWritten(&most))
	_, err := c.Snapshot(context.Background(), mustRef(t, "acme/x"), []File{{Name: "config.json"}})
	require.ErrorIs(t, err, ErrChecksum)
	require.ErrorIs(t, err, ErrDownload)
	assert.LessOrEqual(t, most.Load(), int64(size+1), "bytes written to the file")
	requireInside(t, root, cache)
}

// TestBlobVerifyCancelled: hashing a downloaded file stops when the context
// is done, and the bytes stay as .incomplete (they were not found bad) for
// the next call to verify.
func TestBlobVerifyCancelled(t *testing.T) {
	body := []byte(strings.Repeat("weights ", 1<<17))
	m := meta{etag: sha256Hex(body), size: int64(len(body)), location: "http://127.0.0.1:1/never"}
	cache := t.TempDir()
	c := New(WithCacheDir(cache), WithToken(""), WithOffline(false))
	path := filepath.Join(cache, "models--acme--x", "blobs", m.etag)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path+".incomplete", body, 0o644)) // downloaded whole, not yet verified

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.blob(ctx, mustRef(t, "acme/x"), "model.safetensors", m, path)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, ErrDownload)
	assert.NoFileExists(t, path)
	assert.FileExists(t, path+".incomplete")

	require.NoError(t, c.blob(context.Background(), mustRef(t, "acme/x"), "model.safetensors", m, path))
	assert.FileExists(t, path)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestSnapshotMaxFileSize: a file the Hub reports larger than the client's
// limit is refused before it is fetched, and a download of no reported size
// stops just past the limit; both fail with ErrTooLarge and leave no
// snapshot and no blob.
func TestSnapshotMaxFileSize(t *testing.T) {
	const limit = 4 << 10
	for _, tc := range []struct {
		name     string
		reported string // Content-Length of the HEAD; "" sends none
	}{
		{"reported too large", strconv.Itoa(limit + 1)},
		{"no reported size", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gets, sent atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
				w.Header().Set("ETag", "abc")
				if r.Method == http.MethodHead {
					if tc.reported != "" {
						w.Header().Set("Content-Length", tc.reported)
					}
					return
				}
				gets.Add(1)
				buf := make([]byte, 1<<10)
				for i := 0; i < 64<<10; i++ { // 64 MiB unless the client stops reading
					n, err := w.Write(buf)
					sent.Add(int64(n))
					if err != nil {
						return
					}
				}
			}))
			t.Cleanup(srv.Close)
			root := t.TempDir()
			cache := filepath.Join(root, "cache")
			var most atomic.Int64
			c := New(WithEndpoint(srv.URL), WithCacheDir(cache), WithToken(""), WithOffline(false), WithMaxFileSize(limit), mostWritten(&most))
			_, err := c.Snapshot(context.Background(), mustRef(t, "acme/x"), []File{{Name: "model.safetensors"}})
			require.ErrorIs(t, err, ErrTooLarge)
			require.ErrorIs(t, err, ErrDownload)
			if tc.reported != "" {
				assert.Zero(t, gets.Load(), "a file reported too large is not fetched")
			}
			assert.LessOrEqual(t, most.Load(), int64(limit+1), "bytes written to the file")
			requireInside(t, root, cache)
		})
	}
}
