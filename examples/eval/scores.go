package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strings"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/syntax"
)

// External per-line scores (-scores NAME=FILE): a file holds one JSON
// object a line,
//
//	{"id": "<case id>", "hash": "<caseHash>", "lines": [s1, s2, ...]}
//
// one score per line of the case's text (evalset.Lines), any finite
// numbers. The row NAME+repair ranks each case's lines by them, scaled to
// [0,1] over the text as -column's row is, through the same budget and
// repair. A case is found by its id and the hash of its query and text, so
// a file written for other cases, another version of a set, or shuffled
// queries is refused, as is a case with no entry or with fewer or more
// scores than lines. examples/eval/teachers/score.py writes such files.

// scoresFlag collects -scores NAME=FILE values (repeatable, or a comma
// list).
type scoresFlag []scoreSpec

type scoreSpec struct{ name, path string }

var scoreNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

func (s *scoresFlag) String() string {
	var parts []string
	for _, sp := range *s {
		parts = append(parts, sp.name+"="+sp.path)
	}
	return strings.Join(parts, ",")
}

func (s *scoresFlag) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		name, path, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || path == "" {
			return fmt.Errorf("%q: want NAME=FILE.jsonl", part)
		}
		if !scoreNameRE.MatchString(name) {
			return fmt.Errorf("%q: the name must be letters, digits, '_', '.', ':' or '-'", name)
		}
		for _, sp := range *s {
			if sp.name == name {
				return fmt.Errorf("%q: named twice", name)
			}
		}
		*s = append(*s, scoreSpec{name, path})
	}
	return nil
}

// scoreRowPrefix marks a -scores row's internal method name.
const scoreRowPrefix = "scores:"

// caseHash identifies a case's query and text: the first 16 hex digits of
// the SHA-256 of the query, a NUL byte and the text.
func caseHash(c evalset.Case) string {
	h := sha256.New()
	io.WriteString(h, c.Query)
	h.Write([]byte{0})
	io.WriteString(h, c.Text)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func caseKey(c evalset.Case) string { return c.ID + "\x00" + caseHash(c) }

// scoreEntry is one line of a scores file.
type scoreEntry struct {
	ID    string    `json:"id"`
	Hash  string    `json:"hash"`
	Lines []float64 `json:"lines"`
}

// scoreTable is one scores file, by case key.
type scoreTable struct {
	name, path string
	byKey      map[string][]float64
}

// readScores reads a scores file. An entry repeated with other scores is
// an error (the same case twice in a set has the same scores).
func readScores(sp scoreSpec) (*scoreTable, error) {
	fh, err := os.Open(sp.path)
	if err != nil {
		return nil, fmt.Errorf("-scores %s: %w", sp.name, err)
	}
	defer fh.Close()
	t := &scoreTable{name: sp.name, path: sp.path, byKey: map[string][]float64{}}
	br := bufio.NewReader(fh)
	for lineNo := 1; ; lineNo++ {
		line, rerr := br.ReadBytes('\n')
		if s := strings.TrimSpace(string(line)); s != "" {
			var e scoreEntry
			if err := json.Unmarshal([]byte(s), &e); err != nil {
				return nil, fmt.Errorf("-scores %s: %s:%d: %w", sp.name, sp.path, lineNo, err)
			}
			if e.ID == "" || e.Hash == "" || e.Lines == nil {
				return nil, fmt.Errorf("-scores %s: %s:%d: want id, hash and lines", sp.name, sp.path, lineNo)
			}
			for i, v := range e.Lines {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("-scores %s: %s:%d: case %s: line %d scores %v", sp.name, sp.path, lineNo, e.ID, i+1, v)
				}
			}
			key := e.ID + "\x00" + e.Hash
			if prev, ok := t.byKey[key]; ok && !equalScores(prev, e.Lines) {
				return nil, fmt.Errorf("-scores %s: %s:%d: case %s (hash %s) given twice with different scores", sp.name, sp.path, lineNo, e.ID, e.Hash)
			}
			t.byKey[key] = e.Lines
		}
		if errors.Is(rerr, io.EOF) {
			return t, nil
		}
		if rerr != nil {
			return nil, fmt.Errorf("-scores %s: %w", sp.name, rerr)
		}
	}
}

func equalScores(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lookup returns case c's scores, or an error that says why there are none
// that fit.
func (t *scoreTable) lookup(c evalset.Case) ([]float64, error) {
	s, ok := t.byKey[caseKey(c)]
	if !ok {
		for k := range t.byKey {
			if id, _, _ := strings.Cut(k, "\x00"); id == c.ID {
				return nil, fmt.Errorf("-scores %s: %s: case %s is there for another query or text (hash %s wanted): the file was written for other cases", t.name, t.path, c.ID, caseHash(c))
			}
		}
		return nil, fmt.Errorf("-scores %s: %s: no scores for case %s (hash %s)", t.name, t.path, c.ID, caseHash(c))
	}
	if n := evalset.CountLines(c.Text); len(s) != n {
		return nil, fmt.Errorf("-scores %s: %s: case %s has %d lines, the file scores %d", t.name, t.path, c.ID, n, len(s))
	}
	return s, nil
}

// checkScores fails before any case runs when a table lacks a case.
func checkScores(tables []*scoreTable, files []evalset.File) error {
	for _, t := range tables {
		for _, f := range files {
			for _, c := range f.Cases {
				if _, err := t.lookup(c); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// scaleUnit scales s to [0,1] in place over its range (all 0 when flat):
// the -column and -scores rows' scores.
func scaleUnit(s []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range s {
		lo, hi = min(lo, v), max(hi, v)
	}
	for i := range s {
		if hi > lo {
			s[i] = (s[i] - lo) / (hi - lo)
		} else {
			s[i] = 0
		}
	}
}

// fixedScorer scores a case's lines by given scores (a -scores row).
type fixedScorer []float64

func (fixedScorer) Name() string { return "scores" }

func (f fixedScorer) Score(_ context.Context, _ string, doc *pruner.Document) (*pruner.Scores, error) {
	if len(f) != len(doc.Lines) {
		return nil, fmt.Errorf("scores: %d scores for %d lines", len(f), len(doc.Lines))
	}
	s := append([]float64(nil), f...)
	scaleUnit(s)
	return &pruner.Scores{Lines: s, Doc: 1}, nil
}

// unitDump is one line of -dump-units: what a teacher script needs of a
// case beyond its text — the identity -scores checks, the innermost
// definition of each line (an index into Defs, -1 for none) and the
// embedded line model's line scores (Result.Lines[].Score, no budget), for
// fusions.
type unitDump struct {
	ID         string    `json:"id"`
	Hash       string    `json:"hash"`
	File       string    `json:"file"`
	Lang       string    `json:"lang"`
	Def        []int     `json:"def"`
	Defs       [][2]int  `json:"defs"` // 1-based first and last line
	LineScores []float64 `json:"line_scores"`
}

// dumpUnits writes a unitDump for every case of files to path.
func dumpUnits(ctx context.Context, path string, files []evalset.File) error {
	p, err := pruner.Load(ctx, "")
	if err != nil {
		return err
	}
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-dump-units: %w", err)
	}
	bw := bufio.NewWriter(fh)
	enc := json.NewEncoder(bw)
	for _, f := range files {
		for _, c := range f.Cases {
			lang := syntax.Detect(c.Text, c.Path)
			n := evalset.CountLines(c.Text)
			d := unitDump{ID: c.ID, Hash: caseHash(c), File: f.Name, Lang: string(lang)}
			d.Def, d.Defs = defSpans(ctx, c.Text, lang, n)
			q, err := p.With(pruner.WithFileName(c.Path))
			if err != nil {
				fh.Close()
				return err
			}
			res, err := q.Prune(ctx, c.Query, c.Text)
			if err != nil {
				fh.Close()
				return fmt.Errorf("-dump-units: %s: %w", c.ID, err)
			}
			d.LineScores = make([]float64, n)
			for _, l := range res.Lines {
				if l.Number >= 1 && l.Number <= n {
					d.LineScores[l.Number-1] = l.Score
				}
			}
			if err := enc.Encode(d); err != nil {
				fh.Close()
				return err
			}
		}
	}
	if err := bw.Flush(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// defSpans finds each row's innermost definition (function, method,
// closure, class, struct, interface, enum, impl, trait, type) as the line
// model's syntax analysis does: the node types are classified by the same
// words, calls and identifiers excluded. def[r] indexes spans (1-based
// first and last line), -1 outside any definition or without a parse.
func defSpans(ctx context.Context, text string, lang syntax.Language, n int) ([]int, [][2]int) {
	def := make([]int, n)
	for i := range def {
		def[i] = -1
	}
	spans := [][2]int{}
	if !lang.IsCode() {
		return def, spans
	}
	tree, err := syntax.Parse(ctx, lang, []byte(text))
	if err != nil || tree == nil || len(tree.Nodes) == 0 {
		return def, spans
	}
	type span struct{ lo, hi int }
	var defs []span
	for j := 1; j < len(tree.Nodes); j++ {
		nd := &tree.Nodes[j]
		if !nd.Named() || !isDefType(nd.Type()) {
			continue
		}
		defs = append(defs, span{int(nd.StartRow), nd.LastRow()})
	}
	// Pre-order: a later definition that holds row r is inside an earlier
	// one, so the last open one is the innermost (a stack sweep).
	var open []int
	next := 0
	for r := 0; r < n; r++ {
		for next < len(defs) && defs[next].lo <= r {
			open = append(open, next)
			next++
		}
		for len(open) > 0 && defs[open[len(open)-1]].hi < r {
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			def[r] = open[len(open)-1]
		}
	}
	// Keep only the definitions some row points at, renumbered.
	index := map[int]int{}
	for r, d := range def {
		if d < 0 {
			continue
		}
		k, ok := index[d]
		if !ok {
			k = len(spans)
			index[d] = k
			spans = append(spans, [2]int{defs[d].lo + 1, min(defs[d].hi, n-1) + 1})
		}
		def[r] = k
	}
	return def, spans
}

// isDefType says whether a tree-sitter node type is a definition or a
// type, in the order of the line model's typeKind (identifiers, literals,
// comments, imports, decorators and calls first, so that "call_expression"
// or "method_invocation" is not one).
func isDefType(t string) bool {
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.Contains(t, x) {
				return true
			}
		}
		return false
	}
	switch {
	case strings.HasSuffix(t, "identifier") || strings.HasSuffix(t, "literal") && t != "func_literal":
		return false
	case has("comment", "import", "use_declaration", "preproc_include", "package_clause", "package_declaration", "extern_crate",
		"decorator", "annotation", "attribute_item", "call", "invocation"):
		return false
	}
	return has("class", "struct", "interface", "enum", "impl_item", "trait", "type_declaration", "type_spec", "type_alias",
		"function", "method", "constructor", "func_literal", "lambda", "closure")
}
