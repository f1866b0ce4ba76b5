package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// gitTasks lists the code files at HEAD of each bare repository in dirs
// (comma separated), as the fetch tool leaves them
// (/work/.mirror/owner+name/repo). The source is
// "git:owner/name@<HEAD commit>"; the blobs are read when mined.
func gitTasks(dirs string, ex *exclusions) ([]task, error) {
	var out []task
	for _, dir := range strings.Split(dirs, ",") {
		dir = strings.TrimSpace(dir)
		if dir == "" {
			continue
		}
		ts, err := gitRepoTasks(dir, ex)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		out = append(out, ts...)
	}
	return out, nil
}

// mirrorName is the owner/name of a mirror: the nearest folder of dir
// named owner+name (a trailing .git dropped).
func mirrorName(dir string) (string, error) {
	p := filepath.ToSlash(filepath.Clean(dir))
	segs := strings.Split(p, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		s := strings.TrimSuffix(segs[i], ".git")
		if owner, name, ok := strings.Cut(s, "+"); ok && owner != "" && name != "" && !strings.Contains(name, "+") {
			return owner + "/" + name, nil
		}
	}
	return "", fmt.Errorf("no owner+name folder in the path %s", dir)
}

// treeEntry is one blob of an ls-tree listing.
type treeEntry struct {
	oid, path string
	size      int64
}

func gitRepoTasks(dir string, ex *exclusions) ([]task, error) {
	repo, err := mirrorName(dir)
	if err != nil {
		return nil, err
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", "HEAD^{commit}").Output()
	if err != nil {
		return nil, fmt.Errorf("rev-parse HEAD: %w", err)
	}
	src := "git:" + repo + "@" + strings.TrimSpace(string(head))
	if ex.excluded(src) != "" {
		return nil, nil
	}
	listing, err := exec.Command("git", "-C", dir, "ls-tree", "-r", "-z", "-l", "HEAD").Output()
	if err != nil {
		return nil, fmt.Errorf("ls-tree: %w", err)
	}
	entries := parseLsTree(listing)
	br := blobs.get(dir)
	// Package manifests name vendored copies whose folder says nothing
	// (third_party/x/Cargo.toml with name = "log"): such folders go.
	var excludedDirs []string
	for _, e := range entries {
		switch path.Base(e.path) {
		case "Cargo.toml", "package.json", "go.mod", "pyproject.toml":
		default:
			continue
		}
		if e.size > maxFileBytes {
			continue
		}
		b, err := br.read(e.oid)
		if err != nil {
			return nil, err
		}
		if name := packageName(path.Base(e.path), b); name != "" && ex.excludedPackage(path.Base(e.path), name) {
			excludedDirs = append(excludedDirs, path.Dir(e.path))
		}
	}
	var out []task
	for _, e := range entries {
		if e.size == 0 || e.size > maxFileBytes || !codeExt[strings.ToLower(path.Ext(e.path))] {
			continue
		}
		if skippedGitPath(e.path) || ex.excluded(e.path) != "" || underAny(e.path, excludedDirs) {
			continue
		}
		out = append(out, task{src: src, path: e.path, gitDir: dir, oid: e.oid})
	}
	return out, nil
}

// parseLsTree reads `git ls-tree -r -z -l` output, keeping regular files
// (no symlinks, no submodules).
func parseLsTree(b []byte) []treeEntry {
	var out []treeEntry
	for _, rec := range bytes.Split(b, []byte{0}) {
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 4 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, treeEntry{oid: f[2], path: string(p), size: size})
	}
	return out
}

// skippedGitPath applies the directory skips of walkCode to a path of a
// tree: testdata, vendor, node_modules, caches and hidden folders.
func skippedGitPath(p string) bool {
	segs := strings.Split(p, "/")
	for _, s := range segs[:len(segs)-1] {
		if skipDir(s, false) || strings.HasPrefix(s, ".") {
			return true
		}
	}
	return false
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if d == "." || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

var (
	tomlName  = regexp.MustCompile(`(?m)^\s*name\s*=\s*["']([^"']+)["']`)
	tomlTable = regexp.MustCompile(`(?m)^\s*\[(package|project)\]\s*$`)
	goModule  = regexp.MustCompile(`(?m)^\s*module\s+"?([^\s"]+)"?`)
)

// packageName reads the package a manifest declares: the crate of a
// Cargo.toml, the project of a pyproject.toml, the package of a
// package.json, the module of a go.mod; "" if none.
func packageName(base string, b []byte) string {
	switch base {
	case "package.json":
		var m struct{ Name string }
		if json.Unmarshal(b, &m) == nil {
			return m.Name
		}
	case "go.mod":
		if m := goModule.FindSubmatch(b); m != nil {
			return string(m[1])
		}
	case "Cargo.toml", "pyproject.toml":
		loc := tomlTable.FindIndex(b)
		if loc == nil {
			return ""
		}
		rest := b[loc[1]:]
		if next := bytes.Index(rest, []byte("\n[")); next >= 0 {
			rest = rest[:next]
		}
		if m := tomlName.FindSubmatch(rest); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// blobReaders keeps one `git cat-file --batch` per repository, shared by
// the workers.
type blobReaders struct {
	mu sync.Mutex
	m  map[string]*blobReader
}

var blobs = &blobReaders{m: map[string]*blobReader{}}

func (r *blobReaders) get(dir string) *blobReader {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.m[dir]
	if b == nil {
		b = &blobReader{dir: dir}
		r.m[dir] = b
	}
	return b
}

// closeAll ends the cat-file processes.
func (r *blobReaders) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for dir, b := range r.m {
		b.close()
		delete(r.m, dir)
	}
}

type blobReader struct {
	dir string
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// read returns the content of a blob.
func (b *blobReader) read(oid string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		cmd := exec.Command("git", "-C", b.dir, "cat-file", "--batch")
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		b.cmd, b.in, b.out = cmd, in, bufio.NewReaderSize(out, 1<<16)
	}
	if _, err := io.WriteString(b.in, oid+"\n"); err != nil {
		return nil, err
	}
	hdr, err := b.out.ReadString('\n')
	if err != nil {
		return nil, err
	}
	f := strings.Fields(hdr)
	if len(f) != 3 {
		return nil, fmt.Errorf("cat-file %s: %q", oid, strings.TrimSpace(hdr))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, fmt.Errorf("cat-file %s: %q", oid, strings.TrimSpace(hdr))
	}
	buf := make([]byte, n+1) // the content and its newline
	if _, err := io.ReadFull(b.out, buf); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func (b *blobReader) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return
	}
	b.in.Close()
	b.cmd.Wait()
	b.cmd = nil
}
