package main

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/prunekit/pruner/internal/linemodel/train"
	"github.com/prunekit/pruner/internal/syntax"
)

// Limits of the output contract.
const (
	maxBlockLines = 12
	maxUnitLines  = 40
	maxUnitBytes  = 4000
	maxNLChars    = 300
	minNLWords    = 3
)

// The output contract is the format internal/linemodel/train reads:
// a Record per line, its Units and the Pairs that point into them.
type (
	Unit   = train.PairUnit
	Pair   = train.PairItem
	Record = train.PairFile
)

// defClass says whether a definition holds statements (and so yields blocks)
// or only declares members.
type defClass int8

const (
	notDef defClass = iota
	fnDef
	typeDef
)

// defTypes lists the def-like node types of the supported grammars, the
// same families internal/linemodel's typeKind calls definitions, but
// spelled out: matching on substrings there also catches calls, bodies and
// type references, which here would become units that are not definitions.
var defTypes = map[string]defClass{
	// Go
	"function_declaration": fnDef, "method_declaration": fnDef, "type_declaration": typeDef,
	// Python
	"function_definition": fnDef, "class_definition": typeDef,
	// JavaScript, TypeScript
	"generator_function_declaration": fnDef, "method_definition": fnDef,
	"class_declaration": typeDef, "abstract_class_declaration": typeDef,
	"interface_declaration": typeDef, "enum_declaration": typeDef, "type_alias_declaration": typeDef,
	"function_signature": typeDef, "method_signature": typeDef, "abstract_method_signature": typeDef,
	// Java
	"constructor_declaration": fnDef, "compact_constructor_declaration": fnDef,
	"record_declaration": typeDef, "annotation_type_declaration": typeDef,
	// Rust
	"function_item": fnDef, "function_signature_item": typeDef, "struct_item": typeDef,
	"enum_item": typeDef, "union_item": typeDef, "trait_item": typeDef, "impl_item": typeDef,
	"type_item": typeDef, "macro_definition": typeDef,
	// C, C++ (specifiers count only with a body, see defClassOf)
	"struct_specifier": typeDef, "class_specifier": typeDef, "union_specifier": typeDef, "enum_specifier": typeDef,
}

// wrapperTypes hold a definition together with its decorators, export
// keyword or template header: the doc comment sits above the wrapper.
var wrapperTypes = map[string]bool{
	"decorated_definition": true, "export_statement": true, "template_declaration": true,
	"type_definition": true, "declaration": true, "field_declaration": true,
}

// leadTypes are the siblings that may stand between a doc comment and its
// definition (Rust attributes, Java/TS decorators outside the node).
var leadTypes = map[string]bool{"attribute_item": true, "decorator": true, "annotation": true, "marker_annotation": true}

// def is a definition found in a tree.
type def struct {
	node      int // the def-like node
	outer     int // the outermost wrapper, whose rows the unit spans
	class     defClass
	body      int // the body node, -1 if none
	docstring int // Python docstring node, -1 if none
	start     int // first and last row of the unit (0-based)
	last      int
	unit      int // index in miner.units, -1 if none
}

type miner struct {
	lang  syntax.Language
	src   []byte
	tree  *syntax.Tree
	lines []string // original lines, '\r' dropped
	clean []string // lines with comment and docstring bytes removed
	// rowStarts holds the source offset of each row (rowOffset).
	rowStarts []int
	// rowKind classifies each row; see the row* constants.
	rowKind []int8
	// commentAt maps a row to the comment nodes starting on it.
	commentAt map[int][]int
	defs      []def
	units     []Unit
	pairs     []Pair
}

const (
	rowBlank int8 = iota
	rowCode
	rowComment
	rowDocstring
)

// mineFile extracts the units and pairs of one source file. It returns nil
// units when the file does not parse.
func mineFile(ctx context.Context, lang syntax.Language, src []byte) ([]Unit, []Pair) {
	return mineFileOpts(ctx, lang, src, false)
}

// mineFileOpts is mineFile, with the message pairs when messages is set.
func mineFileOpts(ctx context.Context, lang syntax.Language, src []byte, messages bool) ([]Unit, []Pair) {
	tree, err := syntax.Parse(ctx, lang, src)
	if err != nil || tree == nil || len(tree.Nodes) == 0 {
		return nil, nil
	}
	m := &miner{lang: lang, src: src, tree: tree, commentAt: map[int][]int{}}
	m.splitLines()
	m.findDefs()
	m.maskComments()
	m.defUnits()
	m.docPairs()
	m.blocks()
	if messages {
		m.messages()
	}
	return m.finish()
}

func (m *miner) splitLines() {
	m.lines = strings.Split(string(m.src), "\n")
	for i, l := range m.lines {
		m.lines[i] = strings.TrimSuffix(l, "\r")
	}
}

func (m *miner) isComment(i int) bool {
	nd := &m.tree.Nodes[i]
	return nd.Named() && strings.Contains(nd.Type(), "comment")
}

// defClassOf says whether node i is a definition.
func (m *miner) defClassOf(i int) defClass {
	t := &m.tree.Nodes[i]
	if !t.Named() {
		return notDef
	}
	typ := t.Type()
	c := defTypes[typ]
	switch typ {
	case "struct_specifier", "class_specifier", "union_specifier", "enum_specifier":
		// Without a body it is a type reference (struct foo *p), not a
		// definition.
		if m.field(i, "body") < 0 {
			return notDef
		}
	case "declaration", "field_declaration":
		// A C/C++ prototype: headers document the API on these.
		if m.isPrototype(i) {
			return typeDef
		}
	case "lexical_declaration", "variable_declaration", "expression_statement":
		if m.jsFunctionValue(i) >= 0 {
			return fnDef
		}
	}
	return c
}

// isPrototype reports whether a C/C++ declaration declares a function,
// looking through the pointer and reference declarators of its return type.
func (m *miner) isPrototype(i int) bool {
	d := m.field(i, "declarator")
	for d >= 0 {
		switch m.tree.Nodes[d].Type() {
		case "function_declarator":
			return true
		case "pointer_declarator", "reference_declarator":
			d = m.field(d, "declarator")
			if d < 0 {
				// C++ reference declarators hold theirs unnamed.
				return false
			}
		default:
			return false
		}
	}
	return false
}

// jsFunctionValue returns the function a top-level JavaScript statement
// binds (const f = () => {...}, exports.f = function () {...}), or -1:
// much JavaScript defines its functions that way rather than with
// declarations. Nested ones are left to their enclosing function's blocks.
func (m *miner) jsFunctionValue(i int) int {
	switch m.lang {
	case syntax.JavaScript, syntax.TypeScript, syntax.TSX:
	default:
		return -1
	}
	p := m.tree.Nodes[i].Parent
	if p < 0 {
		return -1
	}
	if pt := m.tree.Nodes[p].Type(); pt != "program" && pt != "export_statement" {
		return -1
	}
	isFn := func(j int) bool {
		switch m.tree.Nodes[j].Type() {
		case "arrow_function", "function_expression", "function", "generator_function":
			return true
		}
		return false
	}
	kids := m.namedChildren(i)
	if len(kids) != 1 {
		return -1
	}
	k := kids[0]
	switch m.tree.Nodes[k].Type() {
	case "variable_declarator":
		if v := m.field(k, "value"); v >= 0 && isFn(v) {
			return v
		}
	case "assignment_expression":
		if v := m.field(k, "right"); v >= 0 && isFn(v) {
			return v
		}
	}
	return -1
}

func (m *miner) field(i int, name string) int {
	for _, c := range m.tree.Children(i) {
		if m.tree.Nodes[c].Field() == name {
			return c
		}
	}
	return -1
}

func (m *miner) namedChildren(i int) []int {
	var out []int
	for _, c := range m.tree.Children(i) {
		if m.tree.Nodes[c].Named() && !m.isComment(c) {
			out = append(out, c)
		}
	}
	return out
}

func (m *miner) findDefs() {
	nodes := m.tree.Nodes
	for i := 1; i < len(nodes); i++ {
		c := m.defClassOf(i)
		if c == notDef {
			continue
		}
		d := def{node: i, outer: i, class: c, body: -1, docstring: -1}
		// A declaration wraps a struct specifier, and a prototype is its
		// own definition: do not count both.
		for p := int(nodes[d.outer].Parent); p > 0 && wrapperTypes[nodes[p].Type()] && nodes[p].StartRow <= nodes[d.outer].StartRow; p = int(nodes[p].Parent) {
			d.outer = p
		}
		if c == fnDef {
			if v := m.jsFunctionValue(i); v >= 0 {
				d.body = m.field(v, "body")
			} else {
				d.body = m.field(i, "body")
			}
		}
		if m.lang == syntax.Python {
			if b := m.field(i, "body"); b >= 0 {
				d.docstring = m.docstring(b)
			}
		}
		d.start, d.last = int(nodes[d.outer].StartRow), nodes[d.outer].LastRow()
		m.defs = append(m.defs, d)
	}
}

// docstring returns the string statement opening a Python body, or -1.
func (m *miner) docstring(body int) int {
	kids := m.namedChildren(body)
	if len(kids) == 0 || m.tree.Nodes[kids[0]].Type() != "expression_statement" {
		return -1
	}
	inner := m.namedChildren(kids[0])
	if len(inner) != 1 {
		return -1
	}
	if t := m.tree.Nodes[inner[0]].Type(); t == "string" || t == "concatenated_string" {
		return kids[0]
	}
	return -1
}

// maskComments blanks every comment and docstring byte out of a copy of the
// lines, so that no unit's code carries the text it is paired with, and
// classifies the rows.
func (m *miner) maskComments() {
	nodes := m.tree.Nodes
	buf := []byte(string(m.src))
	blank := func(from, to uint32) {
		for b := from; b < to && int(b) < len(buf); b++ {
			if buf[b] != '\n' && buf[b] != '\r' {
				buf[b] = ' '
			}
		}
	}
	docRows := map[int]bool{}
	for i := 1; i < len(nodes); i++ {
		if m.isComment(i) {
			blank(nodes[i].StartByte, nodes[i].EndByte)
			m.commentAt[int(nodes[i].StartRow)] = append(m.commentAt[int(nodes[i].StartRow)], i)
			i = int(nodes[i].End) - 1 // a comment inside a comment is part of it
		}
	}
	for _, d := range m.defs {
		if d.docstring >= 0 {
			n := &nodes[d.docstring]
			blank(n.StartByte, n.EndByte)
			for r := int(n.StartRow); r <= n.LastRow(); r++ {
				docRows[r] = true
			}
		}
	}
	// A module docstring belongs to no unit but must not count as code.
	if m.lang == syntax.Python {
		if ds := m.docstring(0); ds >= 0 {
			n := &nodes[ds]
			blank(n.StartByte, n.EndByte)
		}
	}
	m.clean = strings.Split(string(buf), "\n")
	for i, l := range m.clean {
		m.clean[i] = strings.TrimSuffix(l, "\r")
	}
	m.rowKind = make([]int8, len(m.lines))
	for r := range m.lines {
		switch {
		case strings.TrimSpace(m.lines[r]) == "":
			m.rowKind[r] = rowBlank
		case strings.TrimSpace(m.clean[r]) != "":
			m.rowKind[r] = rowCode
		case docRows[r]:
			m.rowKind[r] = rowDocstring
		default:
			m.rowKind[r] = rowComment
		}
	}
}

// code returns the unit text of rows [from, to] without comment or
// docstring rows, capped at maxUnitLines lines and maxUnitBytes bytes.
func (m *miner) code(from, to int) string {
	var out []string
	size := 0
	for r := from; r <= to && r < len(m.clean); r++ {
		if m.rowKind[r] == rowComment || m.rowKind[r] == rowDocstring {
			continue
		}
		l := strings.TrimRight(m.clean[r], " \t")
		if len(out) == 0 && l == "" {
			continue
		}
		if len(out) == maxUnitLines || size+len(l)+1 > maxUnitBytes+1 {
			break
		}
		out = append(out, l)
		size += len(l) + 1
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

func (m *miner) addUnit(kind string, from, to int) int {
	c := m.code(from, to)
	if c == "" || !strings.ContainsFunc(c, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		// A unit of braces alone answers no question.
		return -1
	}
	m.units = append(m.units, Unit{Kind: kind, Start: from + 1, End: to + 1, Code: c})
	return len(m.units) - 1
}

func (m *miner) defUnits() {
	for i := range m.defs {
		m.defs[i].unit = m.addUnit("def", m.defs[i].start, m.defs[i].last)
	}
}

// docPairs pairs each definition with the comment run directly above it
// and with its docstring.
func (m *miner) docPairs() {
	nodes := m.tree.Nodes
	for _, d := range m.defs {
		if d.unit < 0 {
			continue
		}
		if d.docstring >= 0 {
			m.addPair(docstringText(m.tree.Text(m.src, d.docstring)), d.unit, "doc")
		}
		lead := d.start
		for s := m.prevSibling(d.outer); s >= 0 && leadTypes[nodes[s].Type()] && nodes[s].LastRow() == lead-1; s = m.prevSibling(s) {
			lead = int(nodes[s].StartRow)
		}
		r := lead - 1
		for r >= 0 && m.rowKind[r] == rowComment {
			r--
		}
		if r+1 < lead {
			m.addPair(m.commentRun(r+1, lead-1), d.unit, "doc")
		}
	}
}

// prevSibling returns the sibling before node i that is not a comment, or -1.
func (m *miner) prevSibling(i int) int {
	p := m.tree.Nodes[i].Parent
	if p < 0 {
		return -1
	}
	prev := -1
	for _, c := range m.tree.Children(int(p)) {
		if c == i {
			return prev
		}
		if !m.isComment(c) {
			prev = c
		}
	}
	return -1
}

// commentRun returns the text of the comments starting on rows [from, to].
func (m *miner) commentRun(from, to int) string {
	var parts []string
	for r := from; r <= to; r++ {
		for _, c := range m.commentAt[r] {
			parts = append(parts, commentText(m.tree.Text(m.src, c)))
		}
	}
	return strings.Join(parts, "\n")
}

func (m *miner) addPair(raw string, unit int, kind string) {
	nl, ok := cleanNL(raw)
	if !ok {
		return
	}
	m.pairs = append(m.pairs, Pair{NL: nl, Unit: unit, Kind: kind})
}

// blocks splits every function body into blocks at blank and comment rows
// and pairs each comment run inside a body with the block right below it.
func (m *miner) blocks() {
	nodes := m.tree.Nodes
	// owner[r]: the innermost function whose body holds row r; -1 for
	// none. A nested definition takes its rows from the enclosing body,
	// since they are its own unit.
	owner := make([]int, len(m.lines))
	for r := range owner {
		owner[r] = -1
	}
	for di, d := range m.defs { // pre-order: inner definitions come later
		for r := d.start; r <= d.last && r < len(owner); r++ {
			owner[r] = -1
		}
		if d.class != fnDef || d.body < 0 {
			continue
		}
		first, last := -1, -1
		for _, c := range m.tree.Children(d.body) {
			if !nodes[c].Named() {
				continue
			}
			if first < 0 {
				first = int(nodes[c].StartRow)
			}
			last = max(last, nodes[c].LastRow())
		}
		for r := max(first, int(nodes[d.node].StartRow)+1); first >= 0 && r <= last && r < len(owner); r++ {
			owner[r] = di
		}
	}
	blockStart := -1
	runStart := -1 // first row of the comment run just above, -1 if none
	flush := func(end int) {
		if blockStart >= 0 {
			u := m.addUnit("block", blockStart, end)
			if u >= 0 && runStart >= 0 {
				m.addPair(m.commentRun(runStart, blockStart-1), u, "inline")
			}
		}
		blockStart, runStart = -1, -1
	}
	for r := 0; r < len(m.lines); r++ {
		if owner[r] < 0 || (r > 0 && owner[r-1] != owner[r]) {
			flush(r - 1)
			if owner[r] < 0 {
				continue
			}
		}
		switch m.rowKind[r] {
		case rowCode:
			if blockStart >= 0 && r-blockStart == maxBlockLines {
				flush(r - 1)
			}
			if blockStart < 0 {
				blockStart = r
			}
		case rowComment:
			if blockStart >= 0 {
				flush(r - 1)
			}
			if r == 0 || owner[r-1] != owner[r] || m.rowKind[r-1] != rowComment {
				runStart = r
			}
		default:
			flush(r - 1)
		}
	}
	flush(len(m.lines) - 1)
}

// finish orders the units by position and drops pairs whose text the
// filters refused, remapping pair indices.
func (m *miner) finish() ([]Unit, []Pair) {
	idx := make([]int, len(m.units))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ua, ub := m.units[idx[a]], m.units[idx[b]]
		if ua.Start != ub.Start {
			return ua.Start < ub.Start
		}
		if ua.Kind != ub.Kind {
			return ua.Kind == "def"
		}
		return ua.End > ub.End
	})
	pos := make([]int, len(m.units))
	units := make([]Unit, len(m.units))
	for n, i := range idx {
		pos[i] = n
		units[n] = m.units[i]
	}
	pairs := make([]Pair, len(m.pairs))
	for i, p := range m.pairs {
		p.Unit = pos[p.Unit]
		pairs[i] = p
	}
	sort.SliceStable(pairs, func(a, b int) bool { return pairs[a].Unit < pairs[b].Unit })
	return units, pairs
}

// keepRecord: a file is worth a record when some pair has at least one
// negative of its own kind in the file.
func keepRecord(units []Unit, pairs []Pair) bool {
	n := map[string]int{}
	for _, u := range units {
		n[u.Kind]++
	}
	for _, p := range pairs {
		if n[units[p.Unit].Kind] >= 2 {
			return true
		}
	}
	return false
}

// commentText strips the markers from one comment's text, one line per
// source line.
func commentText(raw string) string {
	lines := strings.Split(strings.ReplaceAll(raw, "\r", ""), "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		rawLine := l
		if i == 0 {
			for _, p := range []string{"/**", "/*!", "/*", "///", "//!", "//", "#"} {
				if strings.HasPrefix(l, p) {
					l = l[len(p):]
					break
				}
			}
			l = strings.TrimLeft(l, "#/")
		} else if strings.HasPrefix(l, "*") && !strings.HasPrefix(l, "*/") {
			l = strings.TrimLeft(l, "*")
		}
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), "*/"))
		l = strings.TrimRight(l, "*")
		if isDirective(rawLine) || isDirective(l) {
			l = ""
		}
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "\n")
}

// docstringText strips the prefix and quotes of a Python string literal.
func docstringText(raw string) string {
	s := strings.TrimSpace(raw)
	s = strings.TrimLeft(s, "rRbBuUfF")
	for _, q := range []string{`"""`, `'''`, `"`, `'`} {
		if strings.HasPrefix(s, q) {
			s = strings.TrimSuffix(strings.TrimPrefix(s, q), q)
			break
		}
	}
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "\n")
}

var (
	directiveRE = regexp.MustCompile(`(?i)nolint|eslint-|type:\s*ignore|noqa|go:generate|^//go:|^go:[a-z]|^#!|pylint:|rubocop|prettier-ignore|@ts-|istanbul\s|clang-format|spdx|^\+build|^//\s*\+build|^line \S+:\d|jshint|jscs:|c8 ignore|pragma: no cover|^fmt: (on|off)|^isort:|^mypy:|^@flow|^@jsx|^#\s*pragma`)
	licenseRE   = regexp.MustCompile(`(?i)copyright|all rights reserved|licensed under|permission is hereby granted|license,? version|gnu (lesser )?general public|apache license|mit license|redistribution and use|without warranties`)
	codeStartRE = regexp.MustCompile(`^(if|for|while|switch|catch|elif|else if)\s*\(|^(return|import|export|from|const|let|var|def|func|fn|package|#include|#define|public|private|static|throw|assert|print|await|yield)\b`)
	todoRE      = regexp.MustCompile(`(?i)^(todo|fixme|xxx|hack)\b\s*(\([^)]*\))?\s*:?\s*`)
)

func isDirective(line string) bool { return directiveRE.MatchString(strings.TrimSpace(line)) }

// cleanNL turns a stripped comment into the pair's text, or refuses it.
// Lines that are directives go, and so does everything from a code fence,
// doctest, tag block (@param...) or rustdoc section (# Examples) on: the
// description comes first, and what follows is code or parameter lists
// whose braces would read as code.
func cleanNL(text string) (string, bool) {
	var kept []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, ">>>") || strings.HasPrefix(l, "@") || strings.HasPrefix(l, "# ") {
			break
		}
		if isDirective(l) {
			continue
		}
		kept = append(kept, l)
	}
	words := strings.Fields(strings.Join(kept, " "))
	if len(words) < minNLWords {
		return "", false
	}
	nl := strings.Join(words, " ")
	switch {
	case licenseRE.MatchString(nl), directiveRE.MatchString(nl), looksLikeCode(nl):
		return "", false
	}
	if loc := todoRE.FindStringIndex(nl); loc != nil && len(strings.Fields(nl[loc[1]:])) < 4 {
		return "", false
	}
	return truncateWords(nl, maxNLChars), true
}

// looksLikeCode is the commented-out-code heuristic: code is dense in
// ;{}()[]= where prose is not, and it opens with a keyword and carries some
// of that punctuation.
func looksLikeCode(s string) bool {
	letters, punct := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case strings.ContainsRune(";{}()[]=", r):
			punct++
		}
	}
	if punct >= 2 && float64(punct) >= 0.15*float64(letters) {
		return true
	}
	if strings.HasSuffix(s, ";") || strings.HasSuffix(s, "{") || strings.HasSuffix(s, "}") {
		return true
	}
	return codeStartRE.MatchString(s) && punct > 0
}

// truncateWords cuts s to at most n bytes at a word boundary.
func truncateWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n+1], ' ')
	if cut <= 0 {
		cut = n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
	}
	return strings.TrimSpace(s[:cut])
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
