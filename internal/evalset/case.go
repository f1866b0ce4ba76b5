// Package evalset reads the project's evaluation sets (shared/evalsets: JSONL
// cases of query, file text and gold lines) and computes their metrics and
// baselines exactly as the Python reference, shared/evalsets/baselines.py,
// does, so that numbers printed by Go tools compare with the published ones.
package evalset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrFormat is wrapped by errors about malformed eval files.
var ErrFormat = errors.New("evalset: malformed case")

// Case is one eval case: a query, a file's text and the lines of that text a
// commit touched (see shared/evalsets/README.md for every field).
type Case struct {
	// ID is "owner/name@<sha10>:path".
	ID string `json:"id"`
	// Repo is "owner/name".
	Repo string `json:"repo"`
	// Commit is the full sha of the commit the case comes from.
	Commit string `json:"commit"`
	// Lang is python, go, java, javascript, typescript or rust.
	Lang string `json:"lang"`
	// Path is the file's path in the repository.
	Path string `json:"path"`
	// Query is the commit message, cleaned.
	Query string `json:"query"`
	// Text is the file before the commit (or a window of it), CRLF and BOM
	// kept.
	Text string `json:"text"`
	// GoldLines are sorted 1-based line numbers of Text (see Lines).
	GoldLines []int `json:"gold_lines"`
	// WindowStart is the original line number of Text's first line.
	WindowStart int `json:"window_start"`
	// DiffLinesChanged counts the pre-image lines deleted or modified.
	DiffLinesChanged int `json:"diff_lines_changed"`
	// LinesAdded counts the post-image lines added.
	LinesAdded int `json:"lines_added"`
	// InsertOnly is true when every gold line is an insertion anchor.
	InsertOnly bool `json:"insert_only"`
	// FileLines is the line count of the whole pre-image file.
	FileLines int `json:"file_lines"`
	// Kind is the question kind of the question sets (locate, explain,
	// debug, change, usage, tool); empty for commit cases.
	Kind string `json:"kind,omitempty"`
	// Source names where a question case's text comes from (e.g.
	// "go-stdlib 1.26", "tool:node-test"); empty for commit cases.
	Source string `json:"source,omitempty"`
}

// Lines returns the case's lines (see Lines).
func (c Case) Lines() []string { return Lines(c.Text) }

// File is one eval file and its cases, in file order.
type File struct {
	// Path is where the file was read from.
	Path string
	// Name is the file's base name without ".jsonl", e.g. "python_flask".
	Name string
	// Cases are the file's cases.
	Cases []Case
}

// Read parses JSONL cases from r; blank lines are skipped. Every case must
// have an id and gold lines within its text.
func Read(r io.Reader) ([]Case, error) {
	var cases []Case
	br := bufio.NewReader(r)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var c Case
			if jerr := json.Unmarshal(line, &c); jerr != nil {
				return nil, fmt.Errorf("%w: line %d: %w", ErrFormat, lineNo, jerr)
			}
			if verr := c.validate(); verr != nil {
				return nil, fmt.Errorf("%w: line %d: %w", ErrFormat, lineNo, verr)
			}
			cases = append(cases, c)
		}
		if errors.Is(err, io.EOF) {
			return cases, nil
		}
		if err != nil {
			return nil, fmt.Errorf("evalset: read: %w", err)
		}
	}
}

func (c Case) validate() error {
	if c.ID == "" {
		return errors.New("no id")
	}
	n := CountLines(c.Text)
	for _, g := range c.GoldLines {
		if g < 1 || g > n {
			return fmt.Errorf("%s: gold line %d outside 1..%d", c.ID, g, n)
		}
	}
	return nil
}

// ReadFile reads one JSONL eval file.
func ReadFile(path string) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return File{}, fmt.Errorf("evalset: %w", err)
	}
	defer fh.Close()
	cases, err := Read(fh)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return File{Path: path, Name: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Cases: cases}, nil
}

// Load reads eval files; a directory stands for its *.jsonl files in name
// order (as baselines.py does).
func Load(paths ...string) ([]File, error) {
	var names []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("evalset: %w", err)
		}
		if !st.IsDir() {
			names = append(names, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "*.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("evalset: %w", err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("evalset: no *.jsonl files in %s", p)
		}
		sort.Strings(m)
		names = append(names, m...)
	}
	files := make([]File, 0, len(names))
	for _, n := range names {
		f, err := ReadFile(n)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// Lines splits text the way the eval sets number lines: text.split("\n"),
// minus the empty piece after a final "\n". A "\r" before the "\n" stays in
// the line (it counts as a character); the count equals that of
// chunk.SplitLines.
func Lines(text string) []string {
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// CountLines returns len(Lines(text)) without building the lines.
func CountLines(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && text[len(text)-1] != '\n' {
		n++
	}
	return n
}
