package hfhub

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/hfhub/hubtest"
)

// Callers adding the same missing file to one existing snapshot folder at
// once (goroutines or processes: huggingface_hub leaves folders part-way)
// all succeed: each makes its own temporary link.
func TestLinkConcurrentIntoExistingSnapshot(t *testing.T) {
	repoDir := t.TempDir()
	const commit = "0123456789abcdef0123456789abcdef01234567"
	links := map[string]string{}
	require.NoError(t, os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755))
	for i := range 4 {
		name, b := fmt.Sprintf("dir/file%d.json", i), []byte(fmt.Sprintf("{%d}", i))
		etag := hubtest.ETag(name, b)
		require.NoError(t, os.WriteFile(filepath.Join(repoDir, "blobs", etag), b, 0o644))
		links[name] = etag
	}
	snap := filepath.Join(repoDir, "snapshots", commit)
	c := New(WithCacheDir(t.TempDir()), WithOffline(true))
	for round := range 30 {
		require.NoError(t, os.RemoveAll(snap))
		require.NoError(t, os.MkdirAll(snap, 0o755)) // exists, files missing
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for g := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[g] = c.link(repoDir, commit, links)
			}()
		}
		wg.Wait()
		for g, err := range errs {
			require.NoError(t, err, "round %d, caller %d", round, g)
		}
		for name := range links {
			assert.FileExists(t, filepath.Join(snap, filepath.FromSlash(name)))
		}
		left, _ := filepath.Glob(filepath.Join(snap, "dir", "*.tmp-link*"))
		require.Empty(t, left, "round %d", round)
	}
}

// The default client gives up on a server that does not answer, so that a
// Hub which accepts connections and hangs falls back to the cache.
func TestDefaultClientTimesOut(t *testing.T) {
	tr, ok := New().http.Transport.(*http.Transport)
	require.True(t, ok)
	assert.Equal(t, ResponseHeaderTimeout, tr.ResponseHeaderTimeout)

	s, cache, commit, want := hub(t)
	snap := pythonCache(t, cache, commit, want)
	s.Close()
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // accepts, never answers
	}))
	defer hung.Close()
	t.Setenv("HF_ENDPOINT", hung.URL)
	fast := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 100 * time.Millisecond}}
	dir, err := New(WithHTTPClient(fast)).Snapshot(context.Background(), mustRef(t, repoID), files)
	require.NoError(t, err)
	assert.Equal(t, snap, dir)
}

// A body that stops coming fails the download with the reason, instead of
// waiting for ever; what arrived stays to resume from.
func TestDownloadStall(t *testing.T) {
	body := make([]byte, 64<<10)
	for i := range body {
		body[i] = byte(i)
	}
	etag := sha256Hex(body)
	release := make(chan struct{})
	defer close(release)
	url, _ := hostileHub(t, "0123456789abcdef0123456789abcdef01234567", etag, int64(len(body)), func(w http.ResponseWriter) {
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		<-release
	})
	cache := t.TempDir()
	c := New(WithEndpoint(url), WithCacheDir(cache), WithToken(""), WithOffline(false))
	c.stall = 200 * time.Millisecond
	start := time.Now()
	_, err := c.Snapshot(context.Background(), mustRef(t, "acme/stall"), []File{{Name: "model.safetensors"}})
	require.ErrorIs(t, err, ErrDownload)
	assert.ErrorContains(t, err, "the server stopped sending")
	assert.Less(t, time.Since(start), 30*time.Second)
	inc, _ := filepath.Glob(filepath.Join(cache, "*", "blobs", "*.incomplete"))
	require.Len(t, inc, 1)
	st, err := os.Stat(inc[0])
	require.NoError(t, err)
	assert.EqualValues(t, len(body)/2, st.Size(), "the bytes so far are kept to resume")
}

// The token file is read no further than a token can be long.
func TestTokenFileBounded(t *testing.T) {
	t.Setenv("HF_TOKEN", "")
	dir := t.TempDir()
	small := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(small, []byte("hf_abc\n"), 0o600))
	t.Setenv("HF_TOKEN_PATH", small)
	assert.Equal(t, "hf_abc", envToken())
	if _, err := os.Stat("/dev/zero"); err == nil {
		// A path that never ends: the whole read would not return.
		t.Setenv("HF_TOKEN_PATH", "/dev/zero")
		assert.Equal(t, "", envToken())
	}
}

// The token follows a redirect only to the same scheme, host and port.
func TestDownloadRedirectKeepsTokenHome(t *testing.T) {
	seen := make(chan string, 2)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Authorization")
	}))
	defer other.Close()
	var home *httptest.Server
	home = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		case "/stay":
			http.Redirect(w, r, home.URL+"/here", http.StatusFound)
		case "/here":
			seen <- r.Header.Get("Authorization")
		}
	}))
	defer home.Close()
	c := New(WithToken("hf_SECRET"))
	for path, want := range map[string]string{"/away": "", "/stay": "Bearer hf_SECRET"} {
		req, err := http.NewRequest(http.MethodGet, home.URL+path, nil)
		require.NoError(t, err)
		c.setHeaders(req, true)
		resp, err := c.sameOriginAuth().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, <-seen, path)
	}
}

// The Hub answers a missing repository with 401 to a caller without a
// token: that is ErrNotFound (and, since a private one looks the same,
// ErrUnauthorized).
func TestRepoNotFoundAs401(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	_, err := New(WithEndpoint(srv.URL), WithCacheDir(t.TempDir()), WithToken(""), WithOffline(false)).
		Snapshot(context.Background(), mustRef(t, "acme/missing"), files)
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, err, ErrUnauthorized)
	assert.ErrorContains(t, err, "repository acme/missing not found")
}
