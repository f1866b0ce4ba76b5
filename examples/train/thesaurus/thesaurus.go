// Package thesaurus is a programming thesaurus: a table of concepts, each
// named by a head phrase as a person would say it in a question ("give up",
// "clean up", "position"), and the identifier pieces, words and abbreviations
// code uses for it across languages ("max", "retries", "abort"; "close",
// "defer", "dispose"; "pos", "offset", "idx").
//
// It exists so that a lexical matcher can connect a question that names a
// behaviour in everyday words to the lines that implement it in code words.
// The table, thesaurus.tsv, was written from general programming knowledge
// (see README.md); it is embedded, and Expand uses it.
//
// The file format is one entry per line, concept<TAB>term1,term2,..., UTF-8,
// with lowercase terms. Blank lines and lines starting with '#' are skipped.
package thesaurus

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// Weights given by Expand.
const (
	// HeadWeight is the weight of a word of a matched concept's head phrase.
	HeadWeight = 1.0
	// TermWeight is the weight of a term listed for a matched concept.
	TermWeight = 0.5
)

// ErrFormat is wrapped by every error Parse and Load return for a malformed
// table.
var ErrFormat = errors.New("thesaurus: malformed table")

//go:embed thesaurus.tsv
var embedded string

// Load reads a thesaurus table from the file at path and returns it as a map
// from concept head phrase to its terms, in file order.
func Load(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("thesaurus: open table: %w", err)
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("thesaurus: load %s: %w", path, err)
	}
	return t, nil
}

// Parse reads a thesaurus table from r. Each non-blank, non-comment line
// must be a concept, a tab, and a comma-separated list of non-empty terms; a
// concept may appear only once. Errors for malformed lines wrap ErrFormat.
func Parse(r io.Reader) (map[string][]string, error) {
	t := make(map[string][]string)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		concept, list, ok := strings.Cut(line, "\t")
		concept = strings.TrimSpace(concept)
		if !ok || concept == "" {
			return nil, fmt.Errorf("line %d: want concept<TAB>terms: %w", n, ErrFormat)
		}
		if _, dup := t[concept]; dup {
			return nil, fmt.Errorf("line %d: concept %q repeated: %w", n, concept, ErrFormat)
		}
		var terms []string
		for _, term := range strings.Split(list, ",") {
			term = strings.TrimSpace(term)
			if term == "" {
				return nil, fmt.Errorf("line %d: empty term in %q: %w", n, concept, ErrFormat)
			}
			terms = append(terms, term)
		}
		t[concept] = terms
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("thesaurus: read table: %w", err)
	}
	return t, nil
}

var defaultTable = sync.OnceValues(func() (map[string][]string, error) {
	return Parse(strings.NewReader(embedded))
})

// Default returns the embedded table. The map is shared: callers must not
// modify it.
func Default() (map[string][]string, error) {
	return defaultTable()
}

// Expand returns the words related to words by the embedded table, with a
// weight each: a concept matches when every word of its head phrase is among
// words (compared in lower case); its head words then get HeadWeight and its
// terms TermWeight, a word keeping the highest weight it is given. Multi-word
// terms are returned as they are written in the table. Expand returns an
// empty map if nothing matches, or if the embedded table cannot be parsed
// (which the package's tests rule out).
func Expand(words []string) map[string]float64 {
	t, err := Default()
	if err != nil {
		return map[string]float64{}
	}
	return ExpandIn(t, words)
}

// ExpandIn is Expand over the table t, as returned by Load or Parse.
func ExpandIn(t map[string][]string, words []string) map[string]float64 {
	out := make(map[string]float64)
	put := func(w string, weight float64) {
		if weight > out[w] {
			out[w] = weight
		}
	}
	for _, concept := range Matches(t, words) {
		for _, h := range strings.Fields(strings.ToLower(concept)) {
			put(h, HeadWeight)
		}
		for _, term := range t[concept] {
			put(term, TermWeight)
		}
	}
	return out
}

// Matches returns, sorted, the concepts of t whose head words all occur
// among words (compared in lower case).
func Matches(t map[string][]string, words []string) []string {
	have := make(map[string]bool, len(words))
	for _, w := range words {
		have[strings.ToLower(strings.TrimSpace(w))] = true
	}
	var out []string
	for concept := range t {
		head := strings.Fields(strings.ToLower(concept))
		match := len(head) > 0
		for _, h := range head {
			match = match && have[h]
		}
		if match {
			out = append(out, concept)
		}
	}
	sort.Strings(out)
	return out
}
