package hfhub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// tmpSeq numbers this process's temporary links.
var tmpSeq atomic.Uint64

// link makes snapshots/<commit>/<name> point at blobs/<etag> for each
// entry of links (name -> etag) and returns the snapshot folder. A new
// snapshot folder is assembled beside the others and renamed into place
// whole, so that it never appears with some of its files only; an
// existing one (huggingface_hub fetches file by file) gains the missing
// links one by one, each renamed into place.
func (c *Client) link(repoDir, commit string, links map[string]string) (string, error) {
	snapshots := filepath.Join(repoDir, "snapshots")
	final := filepath.Join(snapshots, commit)
	if err := os.MkdirAll(snapshots, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		sweepStaleSnapshots(repoDir, time.Now())
		tmp, err := os.MkdirTemp(repoDir, ".snapshot-"+commit+"-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp) // gone once renamed
		for name, etag := range links {
			if err := pointer(repoDir, final, tmp, name, etag); err != nil {
				return "", err
			}
		}
		if err := os.Rename(tmp, final); err == nil {
			return final, nil
		} else if _, serr := os.Stat(final); serr != nil {
			return "", err
		}
		// Another process made the folder meanwhile: add to it below.
	}
	for name, etag := range links {
		p := filepath.Join(final, filepath.FromSlash(name))
		if isFile(p) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		// The temporary link's name is this call's own: another process
		// or goroutine adding the same file must not remove or collide
		// with it.
		tmpName := fmt.Sprintf("%s.tmp-link-%d-%d", name, os.Getpid(), tmpSeq.Add(1))
		tmp := filepath.Join(final, filepath.FromSlash(tmpName))
		if err := pointer(repoDir, final, final, tmpName, etag); err != nil {
			os.Remove(tmp)
			return "", err
		}
		if err := os.Rename(tmp, p); err != nil {
			os.Remove(tmp)
			if isFile(p) {
				continue // another caller linked it first
			}
			return "", err
		}
	}
	return final, nil
}

// staleSnapshotAge is how old a ".snapshot-*" folder must be before it
// counts as a dead process's leftover rather than another process's folder
// being assembled (which takes a moment: links only).
const staleSnapshotAge = time.Hour

// sweepStaleSnapshots removes the ".snapshot-*" folders in repoDir that a
// process left when it died while assembling a snapshot (link removes its
// own on every return), once they are older than staleSnapshotAge.
// Failures are ignored: the folders only take a little space.
func sweepStaleSnapshots(repoDir string, now time.Time) {
	old, _ := filepath.Glob(filepath.Join(repoDir, ".snapshot-*"))
	for _, dir := range old {
		if st, err := os.Lstat(dir); err == nil && st.IsDir() && now.Sub(st.ModTime()) > staleSnapshotAge {
			_ = os.RemoveAll(dir)
		}
	}
}

// pointer creates at in/name the entry that the snapshot folder final will
// hold for name: a symbolic link relative to its final place
// (../../blobs/<etag>), or, where the file system has no symbolic links, a
// hard link or a copy of the blob (huggingface_hub copies too).
func pointer(repoDir, final, in, name, etag string) error {
	blob := filepath.Join(repoDir, "blobs", etag)
	at := filepath.Join(in, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(filepath.Join(final, filepath.FromSlash(name))), blob)
	if err != nil {
		return err
	}
	if err := os.Symlink(rel, at); err == nil {
		return nil
	}
	if err := os.Link(blob, at); err == nil {
		return nil
	}
	return copyFile(blob, at)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeRef records that revision names commit (refs/<revision>, the bare
// hash without a newline, as huggingface_hub writes it). The file is
// replaced whole, never left half written.
func writeRef(repoDir, revision, commit string) error {
	p := filepath.Join(repoDir, "refs", filepath.FromSlash(revision))
	if b, err := os.ReadFile(p); err == nil && string(b) == commit {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".ref-*")
	if err != nil {
		return err
	}
	_, werr := f.WriteString(commit)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// lock takes the lock file huggingface_hub takes for a blob
// (<cache>/.locks/models--owner--name/<etag>.lock), waiting for it until
// ctx is done, and returns its release.
func (c *Client) lock(ctx context.Context, repo, etag string) (func(), error) {
	dir := filepath.Join(c.cacheDir, ".locks", filepath.Base(c.RepoDir(repo)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, etag+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if ok {
			return func() { unlock(f); f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
