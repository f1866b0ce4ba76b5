// Package hubtest is a fake Hugging Face Hub for tests: an httptest server
// on loopback that answers resolve URLs as the Hub does (X-Repo-Commit,
// ETag, and for LFS files a 302 to a CDN path on the same server with
// X-Linked-Etag and X-Linked-Size), with switches for the failures a
// download must survive: a required token, a connection cut mid-file, bytes
// that do not match their hash.
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Request is one request the server saw.
type Request struct {
	Method, Path string
	Range        string // the Range header
	Auth         string // the Authorization header
}

// Server is a fake Hub. Its methods are safe for concurrent use.
type Server struct {
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	repos    map[string]*repo
	aliases  map[string]string // old repo id -> new (a renamed repository)
	token    string
	truncate map[string]int // file name -> bytes sent before the connection is cut (once)
	corrupt  map[string]bool
	noRange  bool
	requests []Request
}

type repo struct {
	commit string
	files  map[string][]byte
}

// New starts a fake Hub, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{repos: map[string]*repo{}, aliases: map[string]string{}, truncate: map[string]int{}, corrupt: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Close stops the server (later requests fail to connect).
func (s *Server) Close() { s.srv.Close() }

// AddRepo serves files as repository id at one commit (derived from id) and
// returns that commit. Files named *.safetensors are LFS files.
func (s *Server) AddRepo(id string, files map[string][]byte) string {
	sum := sha1.Sum([]byte("commit " + id))
	commit := hex.EncodeToString(sum[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[id] = &repo{commit: commit, files: files}
	return commit
}

// Alias makes requests for old redirect (relatively) to repository id, as
// the Hub does for a renamed repository.
func (s *Server) Alias(old, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aliases[old] = id
}

// RequireToken makes resolve requests without "Authorization: Bearer tok"
// fail with 401 (the CDN needs none, as its URLs are signed).
func (s *Server) RequireToken(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = tok
}

// Truncate cuts the connection after n bytes of the next download of the
// file name.
func (s *Server) Truncate(name string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.truncate[name] = n
}

// Corrupt makes downloads of the file name send other bytes than those its
// hash names (until Repair).
func (s *Server) Corrupt(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.corrupt[name] = true
}

// Repair undoes Corrupt.
func (s *Server) Repair(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.corrupt, name)
}

// IgnoreRange makes downloads answer Range requests with the whole file
// (200), as servers without range support do.
func (s *Server) IgnoreRange() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noRange = true
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ResetRequests forgets the requests seen so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// IsLFS reports whether the fake Hub stores name with LFS.
func IsLFS(name string) bool { return strings.HasSuffix(name, ".safetensors") }

// SHA256 is an LFS file's ETag.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// GitSHA1 is a git file's ETag: the sha1 of "blob <size>\x00" + content.
func GitSHA1(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// ETag is the hash the Hub reports for a file (and the blob's name in the
// cache).
func ETag(name string, b []byte) string {
	if IsLFS(name) {
		return SHA256(b)
	}
	return GitSHA1(b)
}

// ReadDir reads the regular files of dir (not recursive).
func ReadDir(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(), Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization")})
	if sha, ok := strings.CutPrefix(r.URL.Path, "/cdn/"); ok {
		for _, rp := range s.repos {
			for name, b := range rp.files {
				if IsLFS(name) && SHA256(b) == sha {
					s.body(w, r, name, b)
					return
				}
			}
		}
		http.NotFound(w, r)
		return
	}
	// /{owner}/{name}/resolve/{revision}/{file...}, the revision escaped
	// whole.
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	at := -1
	for i, seg := range segs {
		if seg == "resolve" {
			at = i
			break
		}
	}
	if at < 1 || at > 2 || len(segs) < at+3 {
		http.NotFound(w, r)
		return
	}
	id := strings.Join(segs[:at], "/")
	rev, err1 := url.PathUnescape(segs[at+1])
	name, err2 := url.PathUnescape(strings.Join(segs[at+2:], "/"))
	if err1 != nil || err2 != nil {
		http.Error(w, "bad path", http.StatusBadRequest)
		return
	}
	if s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
		w.Header().Set("X-Error-Message", "Invalid credentials in Authorization header")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if to, ok := s.aliases[id]; ok {
		w.Header().Set("Location", "/"+to+"/resolve/"+strings.Join(segs[at+1:], "/"))
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	rp, ok := s.repos[id]
	if !ok {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if rev != "main" && rev != rp.commit {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", rp.commit)
	b, ok := rp.files[name]
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if IsLFS(name) {
		sha := SHA256(b)
		pointer := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sha, len(b))
		w.Header().Set("ETag", `"`+GitSHA1([]byte(pointer))+`"`)
		w.Header().Set("X-Linked-Etag", `"`+sha+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(b)))
		w.Header().Set("Location", s.URL+"/cdn/"+sha)
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+GitSHA1(b)+`"`)
	s.body(w, r, name, b)
}

// body answers with b (from a "bytes=N-" Range on), corrupted or cut as
// set.
func (s *Server) body(w http.ResponseWriter, r *http.Request, name string, b []byte) {
	if s.corrupt[name] && len(b) > 0 {
		b = append([]byte(nil), b...)
		b[len(b)/2] ^= 0xff
	}
	start := 0
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" && !s.noRange {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		if err != nil || n < 0 || n >= len(b) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(b)))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		start, status = n, http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(b)-1, len(b)))
	}
	body := b[start:]
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Accept-Ranges", "bytes")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if n, ok := s.truncate[name]; ok && n < len(body) {
		delete(s.truncate, name)
		w.Write(body[:n])
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // cut the connection mid-body
	}
	w.Write(body)
}
