package evalset

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ReadSplit reads every step-th case of one split ("train", "val") from
// the training-data files in dir (*.jsonl.gz whose records carry a
// "split" field, as shared/traindata and examples/train's sets), one File
// per input file in name order. The count runs across files, so a step
// samples the whole directory evenly.
func ReadSplit(dir, split string, step int) ([]File, error) {
	if step < 1 {
		return nil, fmt.Errorf("evalset: step %d: want at least 1", step)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("evalset: no *.jsonl.gz in %s", dir)
	}
	sort.Strings(paths)
	var files []File
	k := 0
	for _, path := range paths {
		f, err := readSplitFile(path, split, step, &k)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

func readSplitFile(path, split string, step int, k *int) (File, error) {
	f := File{Path: path, Name: strings.TrimSuffix(filepath.Base(path), ".jsonl.gz")}
	fh, err := os.Open(path)
	if err != nil {
		return f, err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		var c struct {
			Case
			Split string `json:"split"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return f, fmt.Errorf("%s:%d: %w: %w", path, line, ErrFormat, err)
		}
		if c.Split != split {
			continue
		}
		if *k%step == 0 {
			f.Cases = append(f.Cases, c.Case)
		}
		*k++
	}
	if err := sc.Err(); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
