package hfhub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Snapshot makes every file of ref present in the cache, downloading what
// is missing, and returns the snapshot folder (snapshots/<commit>) that
// holds them. Required files must all exist and verify; optional files the
// repository lacks are recorded in .no_exist, as huggingface_hub does.
//
// Offline (WithOffline, HF_HUB_OFFLINE), nothing is requested: the commit
// is the revision itself when it is a commit hash, else refs/<revision>,
// and its snapshot must hold every required file. Online, a revision that
// is a commit hash whose snapshot already holds every file (or knows it
// absent) is served without a request; otherwise each missing file is
// resolved and fetched. When the Hub cannot be reached (a connection
// error, not an HTTP answer), a complete cached snapshot is served.
//
// Errors wrap ErrDownload and, where they apply, ErrUnauthorized,
// ErrNotFound, ErrNotCached, ErrChecksum or the context's error. A failed
// Snapshot leaves no new snapshot folder; partial downloads stay as
// blobs/<etag>.incomplete and resume on the next call.
func (c *Client) Snapshot(ctx context.Context, ref Ref, files []File) (string, error) {
	if err := checkRef(ref); err != nil {
		return "", fmt.Errorf("%w: %w", ErrDownload, err) // a Ref not made by ParseRef
	}
	for _, f := range files {
		if !fileNameOK(f.Name) {
			return "", fmt.Errorf("%w: hf:%s: bad file name %q", ErrDownload, ref, f.Name)
		}
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%w: hf:%s: %w", ErrDownload, ref, err)
	}
	if c.offline {
		return c.cached(ref, files, "offline (HF_HUB_OFFLINE)")
	}
	if commitHash.MatchString(ref.rev()) {
		if dir, ok := c.complete(ref.Repo, ref.rev(), files, true); ok {
			return dir, nil
		}
	}
	dir, err := c.fetch(ctx, ref, files)
	var ne *netError
	if err != nil && errors.As(err, &ne) && ctx.Err() == nil {
		if d, cerr := c.cached(ref, files, "the Hub is unreachable"); cerr == nil {
			return d, nil
		}
	}
	return dir, err
}

// checkRef refuses a Ref that ParseRef would not return: its Repo and its
// Revision are checked each on its own, so that an '@' in Repo cannot pass
// part of it off as a revision ("a@b?x" would put a query into the URL).
func checkRef(ref Ref) error {
	if strings.Contains(ref.Repo, "@") {
		return badName(ref.Repo, "a repository id is letters, digits, '-', '_' and '.'")
	}
	_, err := ParseRef(ref.String())
	return err
}

// fileNameOK accepts a slash-separated relative path without "." or ".."
// segments.
func fileNameOK(name string) bool {
	if name == "" || strings.ContainsAny(name, "\\\x00") {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// cached resolves ref from the cache alone.
func (c *Client) cached(ref Ref, files []File, why string) (string, error) {
	repoDir := c.RepoDir(ref.Repo)
	commit := ref.rev()
	if !commitHash.MatchString(commit) {
		b, err := os.ReadFile(filepath.Join(repoDir, "refs", filepath.FromSlash(commit)))
		if err != nil {
			return "", fmt.Errorf("%w: %w: hf:%s: %s and %s has no refs/%s; run once with network access to download it",
				ErrDownload, ErrNotCached, ref, why, repoDir, commit)
		}
		commit = strings.TrimSpace(string(b))
		if !commitHash.MatchString(commit) {
			return "", fmt.Errorf("%w: %w: hf:%s: %s and refs/%s in %s does not hold a commit hash",
				ErrDownload, ErrNotCached, ref, why, ref.rev(), repoDir)
		}
	}
	dir, ok := c.complete(ref.Repo, commit, files, false)
	if !ok {
		return "", fmt.Errorf("%w: %w: hf:%s: %s and the snapshot %s lacks required files; run once with network access to download them",
			ErrDownload, ErrNotCached, ref, why, dir)
	}
	return dir, nil
}

// complete reports whether the snapshot of commit holds every required
// file and, when withOptional, every optional file or a .no_exist marker
// for it.
func (c *Client) complete(repo, commit string, files []File, withOptional bool) (string, bool) {
	repoDir := c.RepoDir(repo)
	dir := filepath.Join(repoDir, "snapshots", commit)
	for _, f := range files {
		if isFile(filepath.Join(dir, filepath.FromSlash(f.Name))) {
			continue
		}
		if !f.Optional {
			return dir, false
		}
		if withOptional && !isFile(filepath.Join(repoDir, ".no_exist", commit, filepath.FromSlash(f.Name))) {
			return dir, false
		}
	}
	return dir, true
}

// isFile reports whether path is (or links to) a regular file.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// meta is what a HEAD request tells about a file.
type meta struct {
	commit   string
	etag     string
	size     int64  // -1: unknown
	location string // where to GET the bytes
	redirect bool   // location is not the resolve URL (an LFS file on a CDN)
}

// fetch is Snapshot online.
func (c *Client) fetch(ctx context.Context, ref Ref, files []File) (string, error) {
	repoDir := c.RepoDir(ref.Repo)
	commit := ""
	if commitHash.MatchString(ref.rev()) {
		commit = ref.rev()
	}
	type item struct {
		name string
		m    meta
	}
	var todo []item
	var absent []string
	for _, f := range files {
		if commit != "" {
			p := filepath.Join(repoDir, "snapshots", commit, filepath.FromSlash(f.Name))
			if isFile(p) || (f.Optional && isFile(filepath.Join(repoDir, ".no_exist", commit, filepath.FromSlash(f.Name)))) {
				continue
			}
		}
		rev := ref.rev()
		if commit != "" {
			rev = commit // every file from the commit the first one resolved to
		}
		m, err := c.head(ctx, ref, rev, f.Name)
		if err != nil {
			var se *statusError
			if f.Optional && commit != "" && errors.As(err, &se) && se.code == http.StatusNotFound &&
				(se.errCode == "" || se.errCode == "EntryNotFound") {
				absent = append(absent, f.Name)
				continue
			}
			return "", err
		}
		if !commitHash.MatchString(m.commit) {
			return "", fmt.Errorf("%w: hf:%s: %s: the answer has no commit hash (X-Repo-Commit %q): is %s a Hugging Face Hub?",
				ErrDownload, ref, f.Name, m.commit, c.endpoint)
		}
		if commit == "" {
			commit = m.commit
		} else if m.commit != commit {
			return "", fmt.Errorf("%w: hf:%s: %s resolved to commit %s, the other files to %s", ErrDownload, ref, f.Name, m.commit, commit)
		}
		if !safeName.MatchString(m.etag) || m.etag == "." || m.etag == ".." {
			return "", fmt.Errorf("%w: hf:%s: %s: the answer has no usable ETag (%q)", ErrDownload, ref, f.Name, m.etag)
		}
		todo = append(todo, item{f.Name, m})
	}
	blobs := filepath.Join(repoDir, "blobs")
	for _, it := range todo {
		if err := c.blob(ctx, ref, it.name, it.m, filepath.Join(blobs, it.m.etag)); err != nil {
			return "", err
		}
	}
	links := make(map[string]string, len(todo))
	for _, it := range todo {
		links[it.name] = it.m.etag
	}
	dir, err := c.link(repoDir, commit, links)
	if err != nil {
		return "", fmt.Errorf("%w: hf:%s: %w", ErrDownload, ref, err)
	}
	// Best effort, as huggingface_hub: remember the files the commit lacks
	// and the commit the revision names; neither is needed to use dir.
	for _, name := range absent {
		p := filepath.Join(repoDir, ".no_exist", commit, filepath.FromSlash(name))
		if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
			if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
	}
	if rev := ref.rev(); rev != commit {
		if err := writeRef(repoDir, rev, commit); err != nil {
			return "", fmt.Errorf("%w: hf:%s: %w", ErrDownload, ref, err)
		}
	}
	return dir, nil
}

// resolveURL is {endpoint}/{repo}/resolve/{revision}/{file}; the revision
// is escaped whole (refs/pr/1 -> refs%2Fpr%2F1), the file per segment.
func (c *Client) resolveURL(repo, rev, name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.endpoint + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + strings.Join(segs, "/")
}

func (c *Client) setHeaders(req *http.Request, auth bool) {
	req.Header.Set("User-Agent", "prunekit-pruner-hfhub")
	// The true size and bytes, never a compressed form.
	req.Header.Set("Accept-Encoding", "identity")
	if auth && c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// head asks the Hub for a file's metadata. Redirects are not followed,
// except relative ones (a renamed repository), so that an LFS file's
// X-Linked-* headers and CDN location are seen.
func (c *Client) head(ctx context.Context, ref Ref, rev, name string) (meta, error) {
	hc := *c.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	u := c.resolveURL(ref.Repo, rev, name)
	for hops := 0; ; hops++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
		if err != nil {
			return meta{}, fmt.Errorf("%w: hf:%s: %s: %w", ErrDownload, ref, name, err)
		}
		c.setHeaders(req, true)
		resp, err := hc.Do(req)
		if err != nil {
			return meta{}, c.requestError(ctx, ref, name, err)
		}
		resp.Body.Close()
		m := meta{
			commit:   resp.Header.Get("X-Repo-Commit"),
			etag:     normalizeETag(firstHeader(resp.Header, "X-Linked-Etag", "ETag")),
			size:     -1,
			location: u,
		}
		if s := firstHeader(resp.Header, "X-Linked-Size", "Content-Length"); s != "" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
				m.size = n
			}
		}
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			loc := resp.Header.Get("Location")
			target, err := resp.Request.URL.Parse(loc)
			if loc == "" || err != nil {
				return meta{}, fmt.Errorf("%w: hf:%s: %s: redirect %d without a usable Location", ErrDownload, ref, name, resp.StatusCode)
			}
			lu, _ := url.Parse(loc)
			if lu.Host == "" {
				if hops >= 10 {
					return meta{}, fmt.Errorf("%w: hf:%s: %s: too many redirects", ErrDownload, ref, name)
				}
				u = target.String()
				continue
			}
			m.location, m.redirect = target.String(), true
			return m, nil
		case resp.StatusCode >= 400:
			return meta{}, c.statusErr(ref, name, resp)
		}
		return m, nil
	}
}

func firstHeader(h http.Header, keys ...string) string {
	for _, k := range keys {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// normalizeETag strips the weak marker and the quotes: W/"abc" -> abc.
func normalizeETag(e string) string {
	e = strings.TrimPrefix(strings.TrimSpace(e), "W/")
	return strings.Trim(e, `"`)
}

// netError marks a failure to reach the Hub (no HTTP answer).
type netError struct{ err error }

func (e *netError) Error() string { return e.err.Error() }
func (e *netError) Unwrap() error { return e.err }

func (c *Client) requestError(ctx context.Context, ref Ref, name string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w: hf:%s: %s: %w", ErrDownload, ref, name, cerr)
	}
	return fmt.Errorf("%w: hf:%s: %s: %w", ErrDownload, ref, name, &netError{err})
}

// statusError is an HTTP answer the download cannot use.
type statusError struct {
	code    int
	errCode string // X-Error-Code: RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo...
	msg     string
	sent    []error // ErrUnauthorized, ErrNotFound, both or none
}

func (e *statusError) Error() string   { return e.msg }
func (e *statusError) Unwrap() []error { return e.sent }

func (c *Client) statusErr(ref Ref, name string, resp *http.Response) error {
	se := &statusError{code: resp.StatusCode, errCode: resp.Header.Get("X-Error-Code")}
	status := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if m := resp.Header.Get("X-Error-Message"); m != "" {
		status += " (" + m + ")"
	}
	switch {
	case (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && se.errCode == "RepoNotFound":
		// The Hub answers a missing repository with 401 to a caller
		// without a token (a private one looks the same).
		se.sent = []error{ErrNotFound, ErrUnauthorized}
		se.msg = fmt.Sprintf("hf:%s: %s: repository %s not found (or private: set HF_TOKEN to a token that can read it)", ref, status, ref.Repo)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		se.sent = []error{ErrUnauthorized}
		if c.token == "" {
			se.msg = fmt.Sprintf("hf:%s: %s: %s: the repository is private or gated (or does not exist); set HF_TOKEN to a token that can read it",
				ref, name, status)
		} else {
			se.msg = fmt.Sprintf("hf:%s: %s: %s: the Hub refused the token in HF_TOKEN for this repository (private or gated: check the token's access and the model's terms)",
				ref, name, status)
		}
	case resp.StatusCode == http.StatusNotFound:
		se.sent = []error{ErrNotFound}
		switch se.errCode {
		case "RepoNotFound":
			se.msg = fmt.Sprintf("hf:%s: %s: repository %s not found", ref, status, ref.Repo)
		case "RevisionNotFound":
			se.msg = fmt.Sprintf("hf:%s: %s: revision %q not found in %s", ref, status, ref.rev(), ref.Repo)
		case "EntryNotFound":
			se.msg = fmt.Sprintf("hf:%s: %s: file %s not found at that revision", ref, status, name)
		default:
			se.msg = fmt.Sprintf("hf:%s: %s: %s: repository, revision or file not found", ref, name, status)
		}
	default:
		se.msg = fmt.Sprintf("hf:%s: %s: %s", ref, name, status)
	}
	return fmt.Errorf("%w: %w", ErrDownload, se)
}

// blob makes path (blobs/<etag>) hold the verified bytes of a file.
func (c *Client) blob(ctx context.Context, ref Ref, name string, m meta, path string) error {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && (m.size < 0 || st.Size() == m.size) {
		return nil // cached by an earlier download (of any snapshot)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%w: hf:%s: %w", ErrDownload, ref, err)
	}
	unlock, err := c.lock(ctx, ref.Repo, m.etag)
	if err != nil {
		return fmt.Errorf("%w: hf:%s: %s: %w", ErrDownload, ref, name, err)
	}
	defer unlock()
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && (m.size < 0 || st.Size() == m.size) {
		return nil // another process finished it while we waited
	}
	inc := path + ".incomplete"
	if err := c.get(ctx, ref, name, m, inc); err != nil {
		return err
	}
	if err := verify(ctx, inc, m); err != nil {
		if errors.Is(err, ErrChecksum) {
			os.Remove(inc) // resuming bad bytes cannot help
		}
		return fmt.Errorf("%w: hf:%s: %s: %w", ErrDownload, ref, name, err)
	}
	if err := os.Rename(inc, path); err != nil {
		return fmt.Errorf("%w: hf:%s: %w", ErrDownload, ref, err)
	}
	return nil
}

// get downloads m.location into inc, resuming after the bytes inc holds.
func (c *Client) get(ctx context.Context, ref Ref, name string, m meta, inc string) error {
	fail := func(err error) error { return fmt.Errorf("%w: hf:%s: %s: %w", ErrDownload, ref, name, err) }
	if m.size > c.maxFile {
		return fmt.Errorf("%w: hf:%s: %s: %w: the Hub reports %d bytes, the limit is %d (WithMaxFileSize)",
			ErrDownload, ref, name, ErrTooLarge, m.size, c.maxFile)
	}
	f, err := os.OpenFile(inc, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	off := st.Size()
	if m.size >= 0 && off > m.size || off > c.maxFile {
		off = 0
	}
	if m.size >= 0 && off == m.size {
		return nil // complete: verify it
	}
	// A body that stops coming cancels its request (the bytes so far stay
	// to resume from); the cause says so.
	rctx, stalled := context.WithCancelCause(ctx)
	defer stalled(nil)
	hc := c.sameOriginAuth()
	var resp *http.Response
	for {
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, m.location, nil)
		if err != nil {
			return fail(err)
		}
		// The token goes to the Hub only, never to the CDN an LFS file
		// redirects to (as huggingface_hub).
		c.setHeaders(req, !m.redirect)
		if off > 0 {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
		}
		resp, err = hc.Do(req)
		if err != nil {
			return c.requestError(ctx, ref, name, err)
		}
		if resp.StatusCode == http.StatusOK {
			off = 0 // the server sent the whole file
			break
		}
		if resp.StatusCode == http.StatusPartialContent && off > 0 && contentRangeStart(resp.Header.Get("Content-Range")) == off {
			break
		}
		if off > 0 && (resp.StatusCode == http.StatusRequestedRangeNotSatisfiable || resp.StatusCode == http.StatusPartialContent) {
			// The server will not resume from these bytes: start over.
			resp.Body.Close()
			off = 0
			continue
		}
		defer resp.Body.Close()
		return c.statusErr(ref, name, resp)
	}
	defer resp.Body.Close()
	if err := f.Truncate(off); err != nil {
		return fail(err)
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return fail(err)
	}
	w := &progressWriter{w: f, done: off, total: m.size, name: name, fn: c.progress}
	w.report()
	// One byte past the size the Hub reported is enough for verify to
	// refuse the file, and one past the limit to refuse a file of no
	// reported size: a server that sends more does not fill the disk.
	limit := c.maxFile
	if m.size >= 0 {
		limit = m.size
	}
	watch := time.AfterFunc(c.stall, func() { stalled(errStalled) })
	defer watch.Stop()
	body := io.LimitReader(&watchedReader{r: resp.Body, watch: watch, d: c.stall}, limit-off+1)
	if _, err := io.CopyBuffer(w, body, make([]byte, 1<<20)); err != nil {
		if errors.Is(err, w.werr) && w.werr != nil {
			return fail(err)
		}
		if errors.Is(context.Cause(rctx), errStalled) {
			err = fmt.Errorf("%w for %v", errStalled, c.stall)
		}
		return c.requestError(ctx, ref, name, err)
	}
	if m.size < 0 && w.done > c.maxFile {
		// Nothing of it is worth resuming.
		_ = os.Remove(inc)
		return fmt.Errorf("%w: hf:%s: %s: %w: more than %d bytes with no reported size (WithMaxFileSize)",
			ErrDownload, ref, name, ErrTooLarge, c.maxFile)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return nil
}

// errStalled is the cause of a download cancelled for lack of data.
var errStalled = errors.New("the server stopped sending")

// watchedReader pushes watch back by d on every read that brings data.
type watchedReader struct {
	r     io.Reader
	watch *time.Timer
	d     time.Duration
}

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.watch.Reset(w.d)
	}
	return n, err
}

// sameOriginAuth returns the client for downloads: c.http, except that a
// redirect to another scheme, host or port loses the Authorization header
// (Go's own rule keeps it for the same host name on another port, and for
// subdomains), so the token reaches the Hub's own address only.
func (c *Client) sameOriginAuth() *http.Client {
	hc := *c.http
	next := c.http.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			req.Header.Del("Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &hc
}

// contentRangeStart reads the first byte position of "bytes a-b/n"; -1 if
// absent or malformed.
func contentRangeStart(s string) int64 {
	s, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return -1
	}
	a, _, ok := strings.Cut(s, "-")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

type progressWriter struct {
	w           io.Writer
	done, total int64
	name        string
	fn          func(string, int64, int64)
	werr        error // a failed write to the file (not the network)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if err != nil {
		p.werr = err
		return n, err
	}
	p.report()
	return n, nil
}

func (p *progressWriter) report() {
	if p.fn != nil {
		p.fn(p.name, p.done, p.total)
	}
}

// verify checks path against the size and the hash the Hub reported: an
// ETag of 64 hex digits is an LFS file's sha256, one of 40 a git blob's
// sha1 (sha1 of "blob <size>\x00" + content). Other ETags (a mirror's)
// are checked for size only. Hashing stops when ctx is done (a checkpoint
// of gigabytes takes seconds).
func verify(ctx context.Context, path string, m meta) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if m.size >= 0 && st.Size() != m.size {
		return fmt.Errorf("%w: %d bytes, the Hub reported %d", ErrChecksum, st.Size(), m.size)
	}
	var h hash.Hash
	kind := ""
	switch {
	case len(m.etag) == 64 && isHex(m.etag):
		h, kind = sha256.New(), "sha256"
	case len(m.etag) == 40 && isHex(m.etag):
		h, kind = sha1.New(), "git blob sha1"
		fmt.Fprintf(h, "blob %d\x00", st.Size())
	default:
		return nil
	}
	if _, err := io.CopyBuffer(h, ctxReader{ctx, f}, make([]byte, 1<<20)); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(m.etag) {
		return fmt.Errorf("%w: %s %s, the Hub reported %s", ErrChecksum, kind, got, m.etag)
	}
	return nil
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func isHex(s string) bool {
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}
