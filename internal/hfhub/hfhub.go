// Package hfhub fetches model files from the Hugging Face Hub into the cache
// that Python's huggingface_hub uses, so that a checkpoint downloaded by one
// serves the other:
//
//	<cache>/models--owner--name/
//	    blobs/<etag>                      the files' bytes, named by their hash
//	    snapshots/<commit>/<file>         relative links ../../blobs/<etag>
//	    refs/<revision>                   the commit a branch or tag resolved to
//	    .no_exist/<commit>/<file>         files known to be absent at a commit
//
// The cache folder is HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. Files come
// from {endpoint}/{repo}/resolve/{revision}/{file} (endpoint: HF_ENDPOINT,
// else https://huggingface.co): a HEAD request, redirects not followed, gives
// the commit (X-Repo-Commit), the hash (X-Linked-Etag for LFS files, else
// ETag) and the size (X-Linked-Size, else Content-Length), and for LFS files
// the CDN location to GET. Each file is written to blobs/<etag>.incomplete
// (an interrupted download resumes there with a Range request), checked
// against the size and the hash the Hub reported (sha256 for LFS files, the
// git blob sha1 for the others) and only then renamed into place. A snapshot
// folder appears only once every required file of it is verified.
//
// HF_TOKEN (else the token file huggingface-cli login writes) is sent as a
// bearer token; HF_HUB_OFFLINE=1 forbids the network: names then resolve
// from refs/ or a commit-hash revision in the cache alone. When the Hub
// cannot be reached at all, a complete cached snapshot is used, as
// huggingface_hub does.
//
// Every setting is read from the environment when New builds a Client and
// can be overridden with an Option; a Client holds no other state and is
// safe for concurrent use (downloads of one blob by several processes are
// serialised with the lock file huggingface_hub uses, on Unix).
package hfhub

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// DefaultEndpoint is the Hub used when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// DefaultRevision is the revision of a name without "@revision".
const DefaultRevision = "main"

// Errors. Every error of Client.Snapshot wraps ErrDownload, and the specific
// ones below where they apply.
var (
	// ErrDownload: a file could not be fetched from the Hub or found in
	// the cache.
	ErrDownload = errors.New("hub download failed")
	// ErrUnauthorized: the Hub answered 401 or 403 (a private or gated
	// repository, or a token without access).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNotFound: the Hub answered 404 (repository, revision or file).
	ErrNotFound = errors.New("not found")
	// ErrNotCached: offline (HF_HUB_OFFLINE or the Hub unreachable) and
	// the cache holds no complete snapshot for the name.
	ErrNotCached = errors.New("not in the cache")
	// ErrChecksum: a downloaded file's size or hash differs from what the
	// Hub reported.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrInvalidName: not a valid "owner/name[@revision]".
	ErrInvalidName = errors.New("invalid hub name")
	// ErrTooLarge: a file is, or is reported to be, larger than the
	// client's limit (WithMaxFileSize).
	ErrTooLarge = errors.New("file too large")
)

// DefaultMaxFileSize bounds one downloaded file (a Qwen3-0.6B checkpoint
// in float32 is 2.4 GB): a server that reports no size, or a huge one,
// cannot fill the disk.
const DefaultMaxFileSize int64 = 32 << 30

// Client downloads files from one Hub endpoint into one cache folder.
type Client struct {
	endpoint string
	token    string
	cacheDir string
	offline  bool
	http     *http.Client
	progress func(file string, done, total int64)
	maxFile  int64
	stall    time.Duration // a download with no data for this long fails
}

// ResponseHeaderTimeout is how long the default client waits for a
// server's answer to a request (its headers; a file's body may take as
// long as it takes, as long as it keeps coming: see stallTimeout).
// huggingface_hub's metadata requests give up after 10 seconds.
const ResponseHeaderTimeout = 10 * time.Second

// stallTimeout fails a download whose body sends nothing for this long,
// leaving what arrived to resume from.
const stallTimeout = time.Minute

// defaultHTTP is the default client: the default transport's dial and TLS
// timeouts, plus ResponseHeaderTimeout.
var defaultHTTP = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = ResponseHeaderTimeout
	return &http.Client{Transport: t}
}()

// Option configures a Client.
type Option func(*Client)

// WithEndpoint sets the Hub's base URL (default: HF_ENDPOINT, else
// DefaultEndpoint).
func WithEndpoint(url string) Option {
	return func(c *Client) { c.endpoint = strings.TrimRight(url, "/") }
}

// WithToken sets the bearer token (default: HF_TOKEN, else the token file).
// An empty token sends none.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithCacheDir sets the cache folder (default: see CacheDir).
func WithCacheDir(dir string) Option { return func(c *Client) { c.cacheDir = dir } }

// WithOffline forbids (true) or allows (false) network access (default:
// HF_HUB_OFFLINE).
func WithOffline(offline bool) Option { return func(c *Client) { c.offline = offline } }

// WithHTTPClient sets the HTTP client (default: one whose requests give up
// when a server does not answer within ResponseHeaderTimeout, so that a
// Hub that accepts connections and never answers falls back to the cache).
// The client's CheckRedirect is replaced for the metadata requests, which
// must see the Hub's redirects; for the downloads it is kept, behind a
// check that the token only follows redirects to the same scheme, host and
// port.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.http = hc
		}
	}
}

// WithProgress sets a function called as each file downloads, with the
// file's name, the bytes on disk so far (a resumed download starts above
// zero) and the file's size (-1 when unknown). It is called from the
// goroutine that called Snapshot, never for files already cached.
func WithProgress(fn func(file string, done, total int64)) Option {
	return func(c *Client) { c.progress = fn }
}

// WithMaxFileSize bounds each downloaded file to n bytes (default
// DefaultMaxFileSize): a file the Hub reports larger is refused before it
// is fetched, and a download without a reported size stops once it passes
// n; both fail with ErrTooLarge.
func WithMaxFileSize(n int64) Option {
	return func(c *Client) {
		if n > 0 {
			c.maxFile = n
		}
	}
}

// New returns a Client configured from the environment (HF_ENDPOINT,
// HF_TOKEN, HF_HUB_OFFLINE, the cache variables of CacheDir), then opts.
func New(opts ...Option) *Client {
	c := &Client{
		endpoint: strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/"),
		token:    envToken(),
		cacheDir: CacheDir(),
		offline:  envTrue(os.Getenv("HF_HUB_OFFLINE")),
		http:     defaultHTTP,
		maxFile:  DefaultMaxFileSize,
		stall:    stallTimeout,
	}
	if c.endpoint == "" {
		c.endpoint = DefaultEndpoint
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// CacheDir returns the cache folder huggingface_hub uses: HF_HUB_CACHE
// (or its older name HUGGINGFACE_HUB_CACHE), else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. A
// leading "~" is expanded.
func CacheDir() string {
	for _, v := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if d := os.Getenv(v); d != "" {
			return expandHome(d)
		}
	}
	return filepath.Join(hfHome(), "hub")
}

// hfHome is HF_HOME, else $XDG_CACHE_HOME/huggingface, else
// ~/.cache/huggingface.
func hfHome() string {
	if d := os.Getenv("HF_HOME"); d != "" {
		return expandHome(d)
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(expandHome(d), "huggingface")
	}
	return filepath.Join(expandHome("~"), ".cache", "huggingface")
}

func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, `~`+string(filepath.Separator)) {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

// maxTokenFile bounds the token file read.
const maxTokenFile = 4096

// envToken is HF_TOKEN, else the file HF_TOKEN_PATH names, else the token
// file of huggingface-cli login ($HF_HOME/token).
func envToken() string {
	if t := strings.TrimSpace(os.Getenv("HF_TOKEN")); t != "" {
		return t
	}
	path := os.Getenv("HF_TOKEN_PATH")
	if path == "" {
		path = filepath.Join(hfHome(), "token")
	} else {
		path = expandHome(path)
	}
	// A token is short: read no more of the file than one can be, whatever
	// the path names (a huge file, a device that never ends).
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil || len(b) > maxTokenFile {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// envTrue reads a boolean variable as huggingface_hub does.
func envTrue(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// Ref names a repository at a revision.
type Ref struct {
	Repo     string // "owner/name" (or "name")
	Revision string // a branch, a tag or a commit hash; DefaultRevision if empty
}

func (r Ref) String() string { return r.Repo + "@" + r.rev() }

func (r Ref) rev() string {
	if r.Revision == "" {
		return DefaultRevision
	}
	return r.Revision
}

var (
	repoPart   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)
	safeName   = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// ParseRef parses "owner/name" or "owner/name@revision" (the Hub's repo id
// rules: letters, digits, '-', '_' and '.', no "--" or ".."). A revision is
// a branch, a tag or a commit hash; it may contain '/' (refs/pr/1) but no
// ".." segment.
func ParseRef(s string) (Ref, error) {
	repo, rev, hasRev := strings.Cut(s, "@")
	if hasRev && rev == "" {
		return Ref{}, badName(s, "empty revision after @")
	}
	parts := strings.Split(repo, "/")
	if len(parts) > 2 || len(repo) > 96 {
		return Ref{}, badName(s, `want "owner/name" or "owner/name@revision"`)
	}
	for _, p := range parts {
		if !repoPart.MatchString(p) || strings.Contains(p, "--") || strings.Contains(p, "..") {
			return Ref{}, badName(s, "a repository id is letters, digits, '-', '_' and '.'")
		}
	}
	if hasRev {
		for _, seg := range strings.Split(rev, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "\\\x00") || strings.ContainsFunc(seg, isControl) {
				return Ref{}, badName(s, "bad revision")
			}
		}
	} else {
		rev = DefaultRevision
	}
	return Ref{Repo: repo, Revision: rev}, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func badName(s, why string) error {
	return &nameError{name: s, why: why}
}

type nameError struct{ name, why string }

func (e *nameError) Error() string {
	return ErrInvalidName.Error() + " " + quote(e.name) + ": " + e.why
}
func (e *nameError) Unwrap() error { return ErrInvalidName }

func quote(s string) string { return `"` + s + `"` }

// File is a file of a snapshot. A required file missing from the
// repository fails Snapshot; an optional one is skipped.
type File struct {
	Name     string
	Optional bool
}

// RepoDir returns the cache folder of repo (models--owner--name).
func (c *Client) RepoDir(repo string) string {
	return filepath.Join(c.cacheDir, "models--"+strings.ReplaceAll(repo, "/", "--"))
}

// CacheRoot returns the cache folder the client uses.
func (c *Client) CacheRoot() string { return c.cacheDir }
