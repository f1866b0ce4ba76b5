package train

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/syntax"
)

// Question cases mined from documented functions.
//
// Commit messages teach a prior that questions do not share: a commit
// names what changed, often with the identifiers it touched, while an agent
// asks about behaviour it has not read yet. A doc comment is a description
// of behaviour written by the code's author, next to the code it describes,
// so a documented function gives a question-style pair for free: the
// comment's first sentence is the question, the function is the answer,
// and the comment is removed from the text so that the pair cannot be
// solved by finding the comment.

// MinerVersion changes whenever MineDocQuestions mines other cases from the
// same files, so that feature caches of mined cases are rebuilt.
const MinerVersion = "m2"

// DocOptions tune MineDocQuestions; the zero value gives the defaults.
type DocOptions struct {
	// PerFile bounds the cases taken from one file (default 3).
	PerFile int
	// MaxGold bounds a function's answer lines: longer functions are
	// skipped, since a question about them is answered by a few of their
	// lines, not all (default 14).
	MaxGold int
	// ValShare is the share of files whose cases are "val" (default 0.05).
	ValShare float64
	// Seed drives the choices (which functions, which phrasing).
	Seed uint64
}

func (o DocOptions) withDefaults() DocOptions {
	if o.PerFile <= 0 {
		o.PerFile = 3
	}
	if o.MaxGold <= 0 {
		o.MaxGold = 14
	}
	if o.ValShare <= 0 {
		o.ValShare = 0.05
	}
	return o
}

// defTypes are the node types of the documented definitions mined per
// language.
var defTypes = map[syntax.Language][]string{
	syntax.Go:         {"function_declaration", "method_declaration"},
	syntax.Python:     {"function_definition"},
	syntax.Java:       {"method_declaration", "constructor_declaration"},
	syntax.JavaScript: {"function_declaration", "method_definition", "generator_function_declaration"},
	syntax.TypeScript: {"function_declaration", "method_definition", "generator_function_declaration"},
	syntax.TSX:        {"function_declaration", "method_definition", "generator_function_declaration"},
	syntax.Rust:       {"function_item"},
	syntax.C:          {"function_definition"},
	syntax.CPP:        {"function_definition"},
}

// questionForms phrase a doc sentence s as an agent's question. The
// sentence is kept whole: the model reads bags of pieces, and what it must
// learn here is that the question words around the description carry no
// information.
var questionForms = []string{
	"%s",
	"Where is the code that does this: %s?",
	"How does this file handle the following: %s?",
	"Which part of the code is responsible for this: %s",
	"I need the lines that implement this: %s",
	"Find where it does this: %s.",
	"How is this done here: %s?",
	"Show me the logic behind this: %s",
}

// MineDocQuestions turns documented functions of the cases' files into
// question cases: one file version per repository path (the last case of
// that path), at most PerFile functions per file, each with its doc
// comment (or Python docstring) removed from the text, the comment's first
// sentence (without the function's name) as the query and the function's
// non-blank, non-comment lines — signature included, lone closing brackets
// excluded — as the gold lines. Functions with fewer than 2 or more than
// MaxGold such lines, with parse errors, or cut by the window are skipped.
// The result is deterministic given the cases and opts.Seed.
func MineDocQuestions(ctx context.Context, cases []Case, opts DocOptions) []Case {
	opts = opts.withDefaults()
	last := map[string]int{}
	var keys []string
	for i, c := range cases {
		k := c.Repo + "\x00" + c.Path
		if _, ok := last[k]; !ok {
			keys = append(keys, k)
		}
		last[k] = i
	}
	var out []Case
	for _, k := range keys {
		if ctx.Err() != nil {
			break
		}
		c := cases[last[k]]
		lang := CaseLanguage(c)
		if len(defTypes[lang]) == 0 {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(k))
		fileHash := h.Sum64()
		split := "train"
		if float64(fileHash%10000)/10000 < opts.ValShare {
			split = "val"
		}
		rng := rand.New(rand.NewPCG(opts.Seed, fileHash))
		for _, q := range mineFile(ctx, c, lang, opts, rng) {
			q.Split = split
			out = append(out, q)
		}
	}
	return out
}

// docDef is one documented definition found in a file.
type docDef struct {
	name       string
	doc        []int // rows of the doc comment or docstring (0-based)
	start, end int   // rows of the definition (of the answer, for inline)
	sentence   string
	inline     bool // an inline comment over the statements it describes
}

func mineFile(ctx context.Context, c Case, lang syntax.Language, opts DocOptions, rng *rand.Rand) []Case {
	src := []byte(c.Text)
	tree, err := syntax.Parse(ctx, lang, src)
	if err != nil {
		return nil
	}
	lines := evalset.Lines(c.Text)
	n := len(lines)
	commentRow := make([]bool, n)
	for i := range tree.Nodes {
		nd := &tree.Nodes[i]
		if !strings.Contains(nd.Type(), "comment") {
			continue
		}
		for r := int(nd.StartRow); r <= nd.LastRow() && r < n; r++ {
			if isCommentLine(lines[r]) {
				commentRow[r] = true
			}
		}
	}
	types := defTypes[lang]
	var defs []docDef
	for i := range tree.Nodes {
		nd := &tree.Nodes[i]
		if !slices.Contains(types, nd.Type()) {
			continue
		}
		start, end := int(nd.StartRow), nd.LastRow()
		if start <= 0 || end >= n-1 || hasErrors(tree, i) {
			continue // cut by the window, or broken
		}
		d := docDef{name: defName(tree, src, i), start: start, end: end}
		if d.name == "" {
			continue
		}
		var text []string
		if lang == syntax.Python {
			d.doc, text = pyDocstring(tree, src, i, lines)
		} else {
			r := start - 1
			for r >= 0 && strings.HasPrefix(strings.TrimSpace(lines[r]), "#[") && lang == syntax.Rust {
				r-- // attributes sit between a Rust doc comment and its fn
			}
			for ; r >= 0 && commentRow[r]; r-- {
				d.doc = append(d.doc, r)
			}
			slices.Reverse(d.doc)
			for _, r := range d.doc {
				text = append(text, lines[r])
			}
		}
		if len(d.doc) == 0 {
			continue
		}
		d.sentence = firstSentence(text, d.name)
		if d.sentence == "" {
			continue
		}
		defs = append(defs, d)
	}
	inline := inlineComments(defs, lines, commentRow)
	rng.Shuffle(len(defs), func(i, j int) { defs[i], defs[j] = defs[j], defs[i] })
	rng.Shuffle(len(inline), func(i, j int) { inline[i], inline[j] = inline[j], inline[i] })
	var out []Case
	for _, group := range [][]docDef{defs, inline} {
		taken := 0
		for _, d := range group {
			if taken >= opts.PerFile {
				break
			}
			if q, ok := docCase(c, lines, commentRow, d, opts, rng); ok {
				out = append(out, q)
				taken++
			}
		}
	}
	return out
}

// inlineComments finds the comment blocks inside the definitions' bodies
// that describe the statements right below them: the block is the
// question, the code lines that follow it (up to a blank line, another
// comment or a line indented less than the comment) the answer. Answers
// inside functions are what most questions ask for, and what doc comments
// cannot teach.
func inlineComments(defs []docDef, lines []string, commentRow []bool) []docDef {
	var out []docDef
	for _, d := range defs {
		for r := d.start + 1; r < d.end; r++ {
			if !commentRow[r] || commentRow[r-1] {
				continue
			}
			e := r
			for e+1 < d.end && commentRow[e+1] {
				e++
			}
			ind := linemodel.IndentWidth(lines[r])
			g := e + 1
			for g <= d.end && strings.TrimSpace(lines[g]) != "" && !commentRow[g] && linemodel.IndentWidth(lines[g]) >= ind {
				g++
			}
			if g-e-1 < 1 || g-e-1 > 8 {
				continue
			}
			var doc []int
			var text []string
			for k := r; k <= e; k++ {
				doc = append(doc, k)
				text = append(text, lines[k])
			}
			s := firstSentence(text, "")
			if s == "" {
				continue
			}
			out = append(out, docDef{name: d.name + "/inline", doc: doc, start: e + 1, end: g - 1, sentence: s, inline: true})
		}
	}
	return out
}

// docCase builds the case of d: the text without d's doc rows, the gold
// lines renumbered.
func docCase(c Case, lines []string, commentRow []bool, d docDef, opts DocOptions, rng *rand.Rand) (Case, bool) {
	if d.doc[0] == 0 && c.WindowStart > 1 {
		return Case{}, false // the window may cut the comment's first lines
	}
	drop := make([]bool, len(lines))
	for _, r := range d.doc {
		drop[r] = true
	}
	var b strings.Builder
	newRow := make([]int, len(lines))
	kept := 0
	for r, l := range lines {
		newRow[r] = -1
		if drop[r] {
			continue
		}
		newRow[r] = kept
		kept++
		b.WriteString(l)
		b.WriteByte('\n')
	}
	var gold []int
	for r := d.start; r <= d.end; r++ {
		if drop[r] || commentRow[r] || !answerLine(lines[r]) {
			continue
		}
		gold = append(gold, newRow[r]+1)
	}
	if minGold := 2; len(gold) < minGold && !d.inline || len(gold) == 0 || len(gold) > opts.MaxGold {
		return Case{}, false
	}
	form := questionForms[rng.IntN(len(questionForms))]
	s := d.sentence
	if form != "%s" {
		s = strings.TrimRight(s, ".")
		s = lowerFirst(s)
	}
	kind := "doc"
	if d.inline {
		kind = "inline"
	}
	q := Case{Case: evalset.Case{
		ID: fmt.Sprintf("doc:%s:%s#%s@%d", c.Repo, c.Path, d.name, d.start+1), Repo: c.Repo, Commit: c.Commit, Lang: c.Lang, Path: c.Path,
		Query: strings.Replace(form, "%s", s, 1), Text: b.String(), GoldLines: gold, WindowStart: c.WindowStart,
		FileLines: c.FileLines - len(d.doc), Kind: kind, Source: "doc-comment",
	}}
	return q, true
}

// answerLine is a line that can answer: not blank, not a lone bracket
// (comment lines are known from the parse, not from their text: "*p = v"
// and "#if" are code).
func answerLine(l string) bool {
	t := strings.TrimSpace(l)
	if t == "" {
		return false
	}
	return strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

func isCommentLine(l string) bool {
	t := strings.TrimSpace(l)
	for _, p := range []string{"//", "/*", "*", "#"} {
		if strings.HasPrefix(t, p) && !strings.HasPrefix(t, "#[") && !strings.HasPrefix(t, "#include") && !strings.HasPrefix(t, "#define") {
			return true
		}
	}
	return false
}

func hasErrors(t *syntax.Tree, i int) bool {
	for j := i; j < int(t.Nodes[i].End); j++ {
		if t.Nodes[j].IsError() || t.Nodes[j].IsMissing() {
			return true
		}
	}
	return false
}

// defName returns the name of definition i: its "name" field, or for C
// functions the identifier inside the declarator.
func defName(t *syntax.Tree, src []byte, i int) string {
	for _, c := range t.Children(i) {
		if t.Nodes[c].Field() == "name" {
			return t.Text(src, c)
		}
	}
	for _, c := range t.Children(i) {
		if t.Nodes[c].Field() != "declarator" {
			continue
		}
		for j := c; j < int(t.Nodes[c].End); j++ {
			if typ := t.Nodes[j].Type(); typ == "identifier" || typ == "field_identifier" {
				return t.Text(src, j)
			}
		}
	}
	return ""
}

// pyDocstring returns the rows and lines of the docstring of the Python
// function i: the string expression that opens its body.
func pyDocstring(t *syntax.Tree, src []byte, i int, lines []string) ([]int, []string) {
	for _, c := range t.Children(i) {
		if t.Nodes[c].Field() != "body" {
			continue
		}
		stmts := t.Children(c)
		if len(stmts) < 2 || t.Nodes[stmts[0]].Type() != "expression_statement" {
			return nil, nil
		}
		inner := t.Children(stmts[0])
		if len(inner) != 1 || t.Nodes[inner[0]].Type() != "string" {
			return nil, nil
		}
		s := &t.Nodes[stmts[0]]
		var rows []int
		var text []string
		for r := int(s.StartRow); r <= s.LastRow() && r < len(lines); r++ {
			if r == int(t.Nodes[i].StartRow) {
				return nil, nil // a one-line def with its docstring on the same row
			}
			rows = append(rows, r)
			text = append(text, lines[r])
		}
		return rows, text
	}
	return nil, nil
}

var (
	docMarkers = regexp.MustCompile(`^\s*(///?!?|/\*\*?|\*/|\*|#|[rRbBuU]?("""|'''|"|'))\s?`)
	docSkip    = regexp.MustCompile(`(?i)\b(todo|fixme|deprecated|copyright|license|nolint|eslint|noinspection|@ts-|spdx|xxx|hack)\b`)
	mdLinks    = strings.NewReplacer("`", "", "[", "", "]", "", "}", "")
	htmlTags   = regexp.MustCompile(`<[^>]{1,20}>|\{@\w+\s?`)
)

// firstSentence extracts the first sentence of a doc comment's first
// paragraph, without comment markers, tags, markup or a leading mention of
// the function's own name; "" when it is too short, too long or not prose.
func firstSentence(doc []string, name string) string {
	var words []string
	for _, l := range doc {
		l = docMarkers.ReplaceAllString(l, "")
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(l), "*/"), `"""`))
		l = strings.TrimSuffix(l, `'''`)
		if l == "" {
			if len(words) > 0 {
				break // end of the first paragraph
			}
			continue
		}
		if strings.HasPrefix(l, "@") || strings.HasPrefix(l, ":param") || strings.HasPrefix(l, "Args:") || strings.HasPrefix(l, "#") {
			break
		}
		words = append(words, strings.Fields(l)...)
	}
	s := mdLinks.Replace(htmlTags.ReplaceAllString(strings.Join(words, " "), ""))
	if i := sentenceEnd(s); i > 0 {
		s = s[:i+1]
	}
	s = strings.TrimSpace(s)
	if f := strings.Fields(s); len(f) > 0 && strings.Trim(f[0], "().,:") == name {
		s = strings.TrimSpace(strings.TrimPrefix(s, f[0]))
	}
	if docSkip.MatchString(s) {
		return ""
	}
	f := strings.Fields(s)
	letters := 0
	for _, w := range f {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			letters++
		}
	}
	if len(f) < 4 || len(f) > 40 || letters < 3 {
		return ""
	}
	return s
}

// sentenceEnd is the index of the period that ends the first sentence, or
// -1: a period followed by a space and an upper-case letter, or at the end.
func sentenceEnd(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '.' {
			continue
		}
		if i == len(s)-1 {
			return i
		}
		if i+2 < len(s) && s[i+1] == ' ' && unicode.IsUpper(rune(s[i+2])) {
			return i
		}
	}
	return -1
}

func lowerFirst(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return s
	}
	// Keep identifiers and acronyms ("HTTP", "URLPath") as they are.
	w := []rune(f[0])
	if len(w) > 1 && unicode.IsUpper(w[0]) && !slices.ContainsFunc(w[1:], unicode.IsUpper) {
		r, size := utf8.DecodeRuneInString(s)
		return string(unicode.ToLower(r)) + s[size:]
	}
	return s
}
