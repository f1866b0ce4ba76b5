package train

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prunekit/pruner/internal/evalset"
)

// Case is one training or eval case. Split is "train" or "val" for
// training cases and "" for eval cases.
type Case struct {
	evalset.Case
	Split string `json:"split"`
}

// ReadCases parses JSONL cases from r (blank lines skipped).
func ReadCases(r io.Reader) ([]Case, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []Case
	for sc.Scan() {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("linemodel: case %d: %w", len(out)+1, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// LoadFile reads one .jsonl or .jsonl.gz file.
func LoadFile(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("linemodel: %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	cs, err := ReadCases(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}

// LoadDir reads every *.jsonl.gz and *.jsonl file of dir, in name order.
func LoadDir(dir string) ([]Case, error) {
	var paths []string
	for _, pat := range []string{"*.jsonl.gz", "*.jsonl"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		return nil, fmt.Errorf("linemodel: no *.jsonl(.gz) files in %s", dir)
	}
	var all []Case
	for _, p := range paths {
		cs, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	return all, nil
}

// Split returns the cases whose Split equals split.
func Split(cases []Case, split string) []Case {
	var out []Case
	for _, c := range cases {
		if c.Split == split {
			out = append(out, c)
		}
	}
	return out
}
