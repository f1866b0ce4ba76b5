package hfhub

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/hfhub/hubtest"
)

const repoID = "acme/tiny-pruner"

// files is what pruner.Load asks for: the checkpoint and the optional
// tokenizer files.
var files = []File{
	{Name: "config.json"},
	{Name: "model.safetensors"},
	{Name: "tokenizer.json", Optional: true},
	{Name: "tokenizer_config.json", Optional: true},
	{Name: "vocab.json", Optional: true},
	{Name: "merges.txt", Optional: true},
}

// repoFiles is tiny-swepruner plus a tokenizer_config.json (one optional
// file present, the others absent).
func repoFiles(t *testing.T) map[string][]byte {
	f := hubtest.ReadDir(t, filepath.Join("..", "..", "testdata", "tiny-swepruner"))
	f["tokenizer_config.json"] = []byte(`{"added_tokens_decoder": {}}` + "\n")
	return f
}

// hub starts a fake Hub serving repoFiles as repoID and points the
// environment at it and at an empty cache.
func hub(t *testing.T) (s *hubtest.Server, cache, commit string, want map[string][]byte) {
	s = hubtest.New(t)
	want = repoFiles(t)
	commit = s.AddRepo(repoID, want)
	cache = t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_ENDPOINT", s.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	return s, cache, commit, want
}

func mustRef(t *testing.T, s string) Ref {
	r, err := ParseRef(s)
	require.NoError(t, err)
	return r
}

// requireNoSnapshot: a failed download left no snapshot folder (and no
// ref pointing at one).
func requireNoSnapshot(t *testing.T, cache string) {
	t.Helper()
	repoDir := filepath.Join(cache, "models--acme--tiny-pruner")
	ents, _ := os.ReadDir(filepath.Join(repoDir, "snapshots"))
	assert.Empty(t, ents, "snapshot folders")
	_, err := os.Stat(filepath.Join(repoDir, "refs", "main"))
	assert.ErrorIs(t, err, os.ErrNotExist, "refs/main")
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in       string
		repo     string
		revision string
		bad      bool
	}{
		{in: "ayanami-kitasan/code-pruner", repo: "ayanami-kitasan/code-pruner", revision: "main"},
		{in: "owner/name@v1.0", repo: "owner/name", revision: "v1.0"},
		{in: "owner/name@refs/pr/1", repo: "owner/name", revision: "refs/pr/1"},
		{in: "gpt2", repo: "gpt2", revision: "main"},
		{in: "owner/name@0123456789abcdef0123456789abcdef01234567", repo: "owner/name", revision: "0123456789abcdef0123456789abcdef01234567"},
		{in: "", bad: true},
		{in: "owner/", bad: true},
		{in: "a/b/c", bad: true},
		{in: "owner/na--me", bad: true},
		{in: "owner/..", bad: true},
		{in: "owner/name@", bad: true},
		{in: "owner/name@../x", bad: true},
		{in: "owner/name@a//b", bad: true},
		{in: "own er/name", bad: true},
	} {
		r, err := ParseRef(tc.in)
		if tc.bad {
			assert.ErrorIs(t, err, ErrInvalidName, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, Ref{Repo: tc.repo, Revision: tc.revision}, r, tc.in)
	}
}

func TestCacheDir(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	for _, tc := range []struct {
		name                        string
		hubCache, hfHome, xdg, want string
	}{
		{name: "HF_HUB_CACHE wins", hubCache: "/a/hub", hfHome: "/b", xdg: "/c", want: "/a/hub"},
		{name: "HF_HOME/hub", hfHome: "/b", xdg: "/c", want: "/b/hub"},
		{name: "XDG_CACHE_HOME", xdg: "/c", want: "/c/huggingface/hub"},
		{name: "default", want: filepath.Join(home, ".cache", "huggingface", "hub")},
		{name: "tilde", hubCache: "~/hf", want: filepath.Join(home, "hf")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HF_HUB_CACHE", tc.hubCache)
			t.Setenv("HUGGINGFACE_HUB_CACHE", "")
			t.Setenv("HF_HOME", tc.hfHome)
			t.Setenv("XDG_CACHE_HOME", tc.xdg)
			assert.Equal(t, filepath.FromSlash(tc.want), CacheDir())
		})
	}
}

// TestSnapshotLayout downloads a checkpoint and checks the cache is laid
// out as huggingface_hub lays it out: blobs named by sha256 (LFS) or git
// sha1, relative links ../../blobs/<etag> in snapshots/<commit>, refs/main
// holding the bare commit, .no_exist markers for the absent optional
// files; the token never reaches the CDN; progress ends at the size.
func TestSnapshotLayout(t *testing.T) {
	s, cache, commit, want := hub(t)
	s.RequireToken("secret")
	t.Setenv("HF_TOKEN", "secret")
	last := map[string][2]int64{}
	dir, err := New(WithProgress(func(file string, done, total int64) { last[file] = [2]int64{done, total} })).
		Snapshot(context.Background(), mustRef(t, repoID), files)
	require.NoError(t, err)
	repoDir := filepath.Join(cache, "models--acme--tiny-pruner")
	assert.Equal(t, filepath.Join(repoDir, "snapshots", commit), dir)

	for name, b := range want {
		etag := hubtest.ETag(name, b)
		target, err := os.Readlink(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Equal(t, filepath.Join("..", "..", "blobs", etag), target, name)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, b, got, name)
		assert.Equal(t, [2]int64{int64(len(b)), int64(len(b))}, last[name], name)
	}
	assert.Len(t, hubtest.SHA256(want["model.safetensors"]), 64)
	ref, err := os.ReadFile(filepath.Join(repoDir, "refs", "main"))
	require.NoError(t, err)
	assert.Equal(t, commit, string(ref))
	for _, name := range []string{"tokenizer.json", "vocab.json", "merges.txt"} {
		assert.FileExists(t, filepath.Join(repoDir, ".no_exist", commit, name))
	}
	blobs, err := os.ReadDir(filepath.Join(repoDir, "blobs"))
	require.NoError(t, err)
	assert.Len(t, blobs, len(want), "no .incomplete left")
	ents, err := os.ReadDir(repoDir)
	require.NoError(t, err)
	for _, e := range ents {
		assert.Contains(t, []string{"blobs", "snapshots", "refs", ".no_exist"}, e.Name())
	}
	cdn := 0
	for _, r := range s.Requests() {
		if strings.HasPrefix(r.Path, "/cdn/") {
			cdn++
			assert.Empty(t, r.Auth, "token sent to the CDN")
		} else {
			assert.Equal(t, "Bearer secret", r.Auth, r.Path)
		}
	}
	assert.Equal(t, 1, cdn)

	// Again: one HEAD (the revision) and nothing downloaded.
	s.ResetRequests()
	dir2, err := New().Snapshot(context.Background(), mustRef(t, repoID), files)
	require.NoError(t, err)
	assert.Equal(t, dir, dir2)
	for _, r := range s.Requests() {
		assert.Equal(t, "HEAD", r.Method, r.Path)
	}
}

// TestSnapshotHTTPErrors: a 401 says to set HF_TOKEN (or that the token
// was refused) and is ErrUnauthorized; a 404 of the repository, the
// revision or a required file is ErrNotFound; all are ErrDownload and
// leave no snapshot.
func TestSnapshotHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ref     string
		token   string // HF_TOKEN
		remove  string // a file the repository lacks
		is      error
		message string
	}{
		{name: "no token", ref: repoID, is: ErrUnauthorized, message: "set HF_TOKEN"},
		{name: "wrong token", ref: repoID, token: "guess", is: ErrUnauthorized, message: "refused the token in HF_TOKEN"},
		{name: "repository", ref: "acme/missing", token: "secret", is: ErrNotFound, message: "repository acme/missing not found"},
		{name: "revision", ref: repoID + "@v9", token: "secret", is: ErrNotFound, message: `revision "v9" not found`},
		{name: "required file", ref: repoID, token: "secret", remove: "model.safetensors", is: ErrNotFound, message: "file model.safetensors not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cache, _, want := hub(t)
			if tc.remove != "" {
				delete(want, tc.remove)
			}
			s.RequireToken("secret")
			t.Setenv("HF_TOKEN", tc.token)
			_, err := New().Snapshot(context.Background(), mustRef(t, tc.ref), files)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrDownload)
			assert.ErrorIs(t, err, tc.is)
			assert.Contains(t, err.Error(), tc.message)
			requireNoSnapshot(t, cache)
		})
	}
}

// TestSnapshotResume: a connection cut mid-file fails with ErrDownload,
// keeps blobs/<etag>.incomplete and no snapshot; the next call asks for the
// rest with a Range request and completes.
func TestSnapshotResume(t *testing.T) {
	s, cache, commit, want := hub(t)
	const cut = 100_000
	s.Truncate("model.safetensors", cut)
	ref := mustRef(t, repoID)
	_, err := New().Snapshot(context.Background(), ref, files)
	require.ErrorIs(t, err, ErrDownload)
	assert.NotErrorIs(t, err, ErrChecksum)
	requireNoSnapshot(t, cache)
	inc := filepath.Join(cache, "models--acme--tiny-pruner", "blobs", hubtest.SHA256(want["model.safetensors"])+".incomplete")
	st, err := os.Stat(inc)
	require.NoError(t, err)
	assert.EqualValues(t, cut, st.Size())

	s.ResetRequests()
	var first int64 = -1
	dir, err := New(WithProgress(func(file string, done, _ int64) {
		if file == "model.safetensors" && first < 0 {
			first = done
		}
	})).Snapshot(context.Background(), ref, files)
	require.NoError(t, err)
	assert.EqualValues(t, cut, first, "progress starts at the resumed offset")
	got, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	require.NoError(t, err)
	assert.Equal(t, want["model.safetensors"], got)
	assert.NoFileExists(t, inc)
	ranges := []string{}
	for _, r := range s.Requests() {
		if r.Method == "GET" && strings.HasPrefix(r.Path, "/cdn/") {
			ranges = append(ranges, r.Range)
		}
	}
	assert.Equal(t, []string{"bytes=100000-"}, ranges)
	assert.Equal(t, filepath.Join(cache, "models--acme--tiny-pruner", "snapshots", commit), dir)
}

// TestSnapshotStaleIncomplete: a leftover .incomplete resumes with a Range
// request; a server that ignores Range sends the whole file, which
// replaces the partial bytes; partial bytes that were wrong fail the hash
// check (ErrChecksum), are deleted, and the next call downloads afresh.
func TestSnapshotStaleIncomplete(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ignoreRange bool
		badPrefix   bool
	}{
		{name: "resume"},
		{name: "server ignores Range", ignoreRange: true},
		{name: "bad partial bytes", badPrefix: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cache, _, want := hub(t)
			if tc.ignoreRange {
				s.IgnoreRange()
			}
			b := want["model.safetensors"]
			blobs := filepath.Join(cache, "models--acme--tiny-pruner", "blobs")
			require.NoError(t, os.MkdirAll(blobs, 0o755))
			inc := filepath.Join(blobs, hubtest.SHA256(b)+".incomplete")
			prefix := append([]byte(nil), b[:1000]...)
			if tc.badPrefix || tc.ignoreRange {
				prefix[10] ^= 0xff // bytes that must not survive
			}
			require.NoError(t, os.WriteFile(inc, prefix, 0o644))
			ref := mustRef(t, repoID)
			dir, err := New().Snapshot(context.Background(), ref, files)
			if tc.badPrefix {
				require.ErrorIs(t, err, ErrChecksum)
				assert.NoFileExists(t, inc)
				requireNoSnapshot(t, cache)
				dir, err = New().Snapshot(context.Background(), ref, files)
			}
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
			require.NoError(t, err)
			assert.Equal(t, b, got)
			var ranges []string
			for _, r := range s.Requests() {
				if r.Method == "GET" && strings.HasPrefix(r.Path, "/cdn/") {
					ranges = append(ranges, r.Range)
				}
			}
			assert.Equal(t, "bytes=1000-", ranges[0])
		})
	}
}

// TestSnapshotChecksum: bytes that do not hash to the ETag (LFS sha256 or
// git sha1) fail with ErrChecksum, leave neither blob nor .incomplete nor
// snapshot, and a repaired server then serves the file.
func TestSnapshotChecksum(t *testing.T) {
	for _, name := range []string{"model.safetensors", "config.json"} {
		t.Run(name, func(t *testing.T) {
			s, cache, _, want := hub(t)
			s.Corrupt(name)
			ref := mustRef(t, repoID)
			_, err := New().Snapshot(context.Background(), ref, files)
			require.ErrorIs(t, err, ErrChecksum)
			require.ErrorIs(t, err, ErrDownload)
			requireNoSnapshot(t, cache)
			blob := filepath.Join(cache, "models--acme--tiny-pruner", "blobs", hubtest.ETag(name, want[name]))
			assert.NoFileExists(t, blob)
			assert.NoFileExists(t, blob+".incomplete")

			s.Repair(name)
			dir, err := New().Snapshot(context.Background(), ref, files)
			require.NoError(t, err)
			assert.FileExists(t, filepath.Join(dir, name))
		})
	}
}

// pythonCache lays out a cache as huggingface_hub writes it (blobs, links,
// refs/main) for the files of want, by hand.
func pythonCache(t *testing.T, cache, commit string, want map[string][]byte) string {
	repoDir := filepath.Join(cache, "models--acme--tiny-pruner")
	snap := filepath.Join(repoDir, "snapshots", commit)
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755))
	for name, b := range want {
		etag := hubtest.ETag(name, b)
		require.NoError(t, os.WriteFile(filepath.Join(repoDir, "blobs", etag), b, 0o644))
		require.NoError(t, os.Symlink("../../blobs/"+etag, filepath.Join(snap, name)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(commit), 0o644))
	return snap
}

// TestSnapshotFromPythonCache: a cache huggingface_hub wrote serves
// offline (HF_HUB_OFFLINE=1: no request at all), with the Hub unreachable,
// and for a commit-hash revision; a name the cache lacks fails offline with
// ErrNotCached.
func TestSnapshotFromPythonCache(t *testing.T) {
	s, cache, commit, want := hub(t)
	snap := pythonCache(t, cache, commit, want)

	t.Run("offline", func(t *testing.T) {
		t.Setenv("HF_HUB_OFFLINE", "1")
		for _, rev := range []string{"", "@main", "@" + commit} {
			dir, err := New().Snapshot(context.Background(), mustRef(t, repoID+rev), files)
			require.NoError(t, err, rev)
			assert.Equal(t, snap, dir)
		}
		assert.Empty(t, s.Requests())
		_, err := New().Snapshot(context.Background(), mustRef(t, repoID+"@v2"), files)
		assert.ErrorIs(t, err, ErrNotCached)
		assert.ErrorIs(t, err, ErrDownload)
		assert.Contains(t, err.Error(), "HF_HUB_OFFLINE")
		_, err = New().Snapshot(context.Background(), mustRef(t, "acme/other"), files)
		assert.ErrorIs(t, err, ErrNotCached)
	})
	t.Run("commit revision online", func(t *testing.T) {
		// Every optional file is cached or known absent after one
		// online call; then the commit is served without a request.
		_, err := New().Snapshot(context.Background(), mustRef(t, repoID+"@"+commit), files)
		require.NoError(t, err)
		s.ResetRequests()
		dir, err := New().Snapshot(context.Background(), mustRef(t, repoID+"@"+commit), files)
		require.NoError(t, err)
		assert.Equal(t, snap, dir)
		assert.Empty(t, s.Requests())
	})
	t.Run("unreachable", func(t *testing.T) {
		s.Close()
		dir, err := New().Snapshot(context.Background(), mustRef(t, repoID), files)
		require.NoError(t, err)
		assert.Equal(t, snap, dir)
		_, err = New().Snapshot(context.Background(), mustRef(t, "acme/other"), files)
		assert.ErrorIs(t, err, ErrDownload)
		assert.NotErrorIs(t, err, ErrNotCached, "the network error is the one to report")
	})
}

// TestSnapshotCommitRevision: a commit-hash revision downloads from that
// commit and writes no ref; a renamed repository's relative redirect is
// followed.
func TestSnapshotCommitRevision(t *testing.T) {
	s, cache, commit, _ := hub(t)
	s.Alias("acme/old-name", repoID)
	dir, err := New().Snapshot(context.Background(), mustRef(t, repoID+"@"+commit), files)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, "models--acme--tiny-pruner", "snapshots", commit), dir)
	assert.NoDirExists(t, filepath.Join(cache, "models--acme--tiny-pruner", "refs"))
	for _, r := range s.Requests() {
		if !strings.HasPrefix(r.Path, "/cdn/") {
			assert.Contains(t, r.Path, "/resolve/"+commit+"/")
		}
	}
	dir, err = New().Snapshot(context.Background(), mustRef(t, "acme/old-name"), files)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, "models--acme--old-name", "snapshots", commit), dir)
}

// TestSnapshotCancel: a cancelled context stops before any request, and
// cancelling mid-download returns the context's error with no snapshot.
func TestSnapshotCancel(t *testing.T) {
	s, cache, _, _ := hub(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New().Snapshot(ctx, mustRef(t, repoID), files)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, s.Requests())
	_, err = New().Snapshot(context.Background(), Ref{Repo: "../../etc", Revision: "main"}, files)
	require.ErrorIs(t, err, ErrInvalidName, "a Ref not made by ParseRef is checked too")

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, err = New(WithProgress(func(file string, done, _ int64) {
		if file == "model.safetensors" && done > 0 {
			cancel()
		}
	})).Snapshot(ctx, mustRef(t, repoID), files)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.ErrorIs(t, err, ErrDownload)
	requireNoSnapshot(t, cache)
}

// TestSnapshotSweepsStaleAssembly: a ".snapshot-*" folder that a process
// left when it died while assembling a snapshot is removed by the next
// snapshot once it is older than staleSnapshotAge; a young one (another
// process at work) stays.
func TestSnapshotSweepsStaleAssembly(t *testing.T) {
	_, cache, commit, _ := hub(t)
	repoDir := filepath.Join(cache, "models--acme--tiny-pruner")
	stale := filepath.Join(repoDir, ".snapshot-"+commit+"-dead")
	young := filepath.Join(repoDir, ".snapshot-"+commit+"-busy")
	for _, d := range []string{stale, young} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "sub", "config.json"), []byte("{}"), 0o644))
	}
	past := time.Now().Add(-2 * staleSnapshotAge)
	require.NoError(t, os.Chtimes(stale, past, past))
	_, err := New().Snapshot(context.Background(), mustRef(t, repoID), files)
	require.NoError(t, err)
	assert.NoDirExists(t, stale)
	assert.DirExists(t, young)
}
