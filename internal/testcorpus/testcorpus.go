// Package testcorpus gives the module's tests the texts they check the
// library's promises on: the corpus kept in the repository
// (testdata/corpus: real code, real tool output and commit cases, with
// their licenses noted) on every clone, and the shared eval and training
// sets where a checkout has ../shared beside it, as CI does.
//
// A test that guards a promise (budgets, verbatim output, parse validity,
// cancellation, memory) runs over the fixture and adds the shared sets
// when present; a test whose purpose is to measure the shared sets skips
// with SkipReason when they are absent.
//
// It imports nothing of the module, so that any package's internal tests
// can use it.
package testcorpus

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Case is one text with its query, as the eval sets record it. Gold lines
// are left to the eval reader (internal/evalset), which validates them.
type Case struct {
	ID    string `json:"id"`
	Repo  string `json:"repo"`
	Lang  string `json:"lang"`
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Query string `json:"query"`
	Text  string `json:"text"`
}

// Root returns the repository's root folder, found from this source file's
// path: tests run from their package's folder, at any depth.
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// FixturePath is the corpus file kept in the repository: code questions in
// eight languages, tool output of six families and commit cases, 66 in all
// (testdata/corpus/README.md).
func FixturePath() string { return filepath.Join(Root(), "testdata", "corpus", "cases.jsonl.gz") }

// Open returns the fixture's JSONL, decompressed.
func Open() (io.ReadCloser, error) { return open(FixturePath()) }

// Shared returns the path of elem under ../shared beside the repository
// and whether it exists.
func Shared(elem ...string) (string, bool) {
	p := filepath.Join(append([]string{Root(), "..", "shared"}, elem...)...)
	_, err := os.Stat(p)
	return p, err == nil
}

// SkipReason is the message of a test that skips without the shared sets.
func SkipReason(elem ...string) string {
	p, _ := Shared(elem...)
	return fmt.Sprintf("%s is absent: the shared eval and training sets sit beside the repository in CI, not in a user's clone", filepath.Clean(p))
}

// Cases returns the fixture's cases followed by those of the shared files
// named by rel (paths under ../shared with "/" separators, each a .jsonl
// or .jsonl.gz file or a folder of them, read in name order) that exist.
// Missing shared paths are left out; the fixture is always read.
func Cases(rel ...string) ([]Case, error) {
	paths := []string{FixturePath()}
	for _, r := range rel {
		p, ok := Shared(strings.Split(r, "/")...)
		if !ok {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			m, _ := filepath.Glob(filepath.Join(p, "*.jsonl"))
			gz, _ := filepath.Glob(filepath.Join(p, "*.jsonl.gz"))
			m = append(m, gz...)
			sort.Strings(m)
			paths = append(paths, m...)
			continue
		}
		paths = append(paths, p)
	}
	var out []Case
	for _, p := range paths {
		cs, err := readFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

func readFile(path string) ([]Case, error) {
	r, err := open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	var out []Case
	for sc.Scan() {
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("testcorpus: %s: %w", path, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("testcorpus: %s: %w", path, err)
	}
	return out, nil
}

// open opens a JSONL file, decompressing a .gz one.
func open(path string) (io.ReadCloser, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("testcorpus: %w", err)
	}
	if !strings.HasSuffix(path, ".gz") {
		return fh, nil
	}
	zr, err := gzip.NewReader(fh)
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("testcorpus: %s: %w", path, err)
	}
	return gzReadCloser{zr, fh}, nil
}

type gzReadCloser struct {
	*gzip.Reader
	f *os.File
}

func (g gzReadCloser) Close() error {
	err := g.Reader.Close()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
