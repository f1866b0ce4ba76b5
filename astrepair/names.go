package astrepair

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prunekit/pruner/internal/syntax"
)

// A placeholder names what it folds: the definitions that start inside the
// fold (code, from the parse) or the records of a tool output (test names,
// commit subjects, grep paths, exception lines; from the text's shape), so
// a reader can tell which fold to open.

// nameRow is one nameable thing: the row it starts on, its rank (lower
// first: a definition's nesting depth, a record's severity) and its label.
type nameRow struct {
	row   int32
	rank  uint8
	label string
	short string // what a placeholder too narrow for label shows ("" : label cut)
	// first and last are the rows of the whole definition or record (its
	// decorators and doc comment included): what unfolding the name shows.
	first, last int32
	// key is the bare name: a definition's identifier (`do` of `func (c
	// *Client) do`), "" for a record (its label is its name); qual the
	// name qualified by its enclosing definition or receiver (`Client.do`),
	// "" for none.
	key, qual string
}

// Naming bounds the names a placeholder shows.
type Naming struct {
	// Max is the most names shown (0: none); the rest are counted as
	// "and N more".
	Max int
	// Label caps one name's characters (longer ones are cut with "…").
	Label int
	// Chars caps all names' characters together: names past it are
	// counted, not shown; the first name is always shown.
	Chars int
	// Unnamed lists folds, by their first input line (1-based), whose
	// placeholders name nothing (a budget's room for names ran out).
	Unnamed map[int]bool
	// Hints point readers at what in a fold most likely holds more of the
	// answer: a placeholder whose fold holds a hint's lines ends with
	// "; likely relevant: ITEM" (see Analysis.Hint).
	Hints []Hint
}

// Hint is what a placeholder suggests unfolding: Item, a name Lookup
// resolves to exactly the lines First..Last (1-based), or those lines as a
// range ("140-150").
type Hint struct {
	Item        string
	First, Last int
}

// DefaultNaming is the naming the library uses unless a budget asks for
// less: up to three names, 40 characters each, 80 in all.
var DefaultNaming = Naming{Max: 3, Label: 40, Chars: 80}

// ShortNaming is the naming of a budget too tight for DefaultNaming: one
// name of at most 24 characters.
var ShortNaming = Naming{Max: 1, Label: 24, Chars: 24}

// WithNaming makes placeholders name what they fold, bounded by n (a zero
// Max names nothing): `// ... 40 lines omitted (120-159): func (c *Client)
// do, func retry, and 3 more`. Non-code text shows its range too: `... 12
// lines omitted (40-51): --- FAIL: TestX ...`.
func WithNaming(n Naming) RenderOption {
	return func(c *renderConfig) { c.naming = n }
}

// FoldNames returns the names of everything that starts in the 1-based
// input lines first..last, in the order a placeholder lists them, without
// the caps of a Naming.
func (a *Analysis) FoldNames(first, last int) []string {
	return a.foldNames(first-1, last-1)
}

// Names returns every name the text's placeholders can show (labels of
// definitions or records), in row order; nil when it has none.
func (a *Analysis) Names() []string {
	if len(a.names) == 0 {
		return nil
	}
	out := make([]string, len(a.names))
	for i, n := range a.names {
		out[i] = n.label
	}
	return out
}

// foldNames lists the distinct labels of the rows first..last (0-based),
// by rank then row.
func (a *Analysis) foldNames(first, last int) []string {
	rows := a.foldRows(first, last)
	if len(rows) == 0 {
		return nil
	}
	out := make([]string, len(rows))
	for i, n := range rows {
		out[i] = n.label
	}
	return out
}

// foldRows lists the names of the rows first..last (0-based), distinct by
// label, by rank then row.
func (a *Analysis) foldRows(first, last int) []nameRow {
	lo, _ := slices.BinarySearchFunc(a.names, int32(first), func(n nameRow, r int32) int { return int(n.row - r) })
	var in []nameRow
	for k := lo; k < len(a.names) && int(a.names[k].row) <= last; k++ {
		in = append(in, a.names[k])
	}
	if len(in) == 0 {
		return nil
	}
	slices.SortStableFunc(in, func(x, y nameRow) int { return int(x.rank) - int(y.rank) })
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, n := range in {
		if !seen[n.label] {
			seen[n.label] = true
			out = append(out, n)
		}
	}
	return out
}

// display is what a placeholder shows of n within max characters: the
// label, else its short form, cut if need be.
func (n nameRow) display(max int) string {
	if max <= 0 || utf8.RuneCountInString(n.label) <= max {
		return n.label
	}
	if n.short != "" {
		return cutLabel(n.short, max)
	}
	return cutLabel(n.label, max)
}

// namesSuffix renders the names of a fold under n: ": a, b, and 3 more";
// "" when the fold names nothing. shown are the labels of the names it
// shows (uncut), more the number it counts.
func namesSuffix(names []nameRow, n Naming) (suffix string, shown []string, more int) {
	if n.Max <= 0 || len(names) == 0 {
		return "", nil, 0
	}
	chars := 0
	var disp []string
	for _, name := range names {
		if len(disp) == n.Max {
			break
		}
		d := name.display(n.Label)
		c := utf8.RuneCountInString(d)
		if len(disp) > 0 && chars+c > n.Chars {
			break
		}
		chars += c + 2
		disp = append(disp, d)
		shown = append(shown, name.label)
	}
	var sb strings.Builder
	sb.WriteString(": ")
	// Records of one kind share a prefix ("--- PASS: "): the first name
	// shows it, the others go without.
	prefix := ""
	if k := strings.LastIndex(disp[0], ": "); k > 0 && k+2 < len(disp[0]) {
		prefix = disp[0][:k+2]
	}
	for i, name := range disp {
		if i > 0 {
			sb.WriteString(", ")
			if prefix != "" && strings.HasPrefix(name, prefix) && len(name) > len(prefix) {
				name = name[len(prefix):]
			}
		}
		sb.WriteString(name)
	}
	more = len(names) - len(shown)
	if more > 0 {
		if len(shown) > 1 {
			sb.WriteString(",")
		}
		sb.WriteString(" and ")
		sb.WriteString(strconv.Itoa(more))
		sb.WriteString(" more")
	}
	return sb.String(), shown, more
}

// cutLabel cuts s to at most max characters, marking the cut with "…".
func cutLabel(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:max-1]), " ") + "…"
}

// cleanLabel makes s one safe line of a comment: valid UTF-8, control
// characters (C0, DEL, C1, the Unicode line and paragraph separators)
// turned into blanks, bidirectional formatting characters dropped (a name
// copied from the input must not reorder how the placeholder, or the code
// after it, is displayed: "Trojan Source"), blanks collapsed, and no
// trailing backslash (a C line comment would swallow the next line).
func cleanLabel(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r >= 0x7f && r <= 0x9f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		if isBidiControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimRight(s, "\\ ")
}

// isBidiControl reports the Unicode bidirectional formatting characters:
// the marks (LRM, RLM, ALM), embeddings and overrides (LRE…RLO) and
// isolates (LRI…PDI).
func isBidiControl(r rune) bool {
	return r == '\u200e' || r == '\u200f' || r == '\u061c' ||
		r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// maxName caps the characters of any name a placeholder or Names can hold
// (a record's label, a definition's name alone): a 50,000-character
// identifier or log line is named by its start, cut with "…".
const maxName = 120

// nameLabel is s cleaned (cleanLabel) and capped at maxName characters.
func nameLabel(s string) string {
	return cutLabel(cleanLabel(s), maxName)
}

// --- definitions of code ---

// definitionTypes are named node types that define something without a
// scope marker in their type name.
var definitionTypes = set("type_spec", "type_alias_declaration", "type_item", "const_item", "static_item")

// collectNames records, for every definition of the parse, the row of its
// name and its label: the name's line from its first non-blank character
// through the name (`func (c *Client) do`, `class Retry`, `def dedent`),
// ranked by nesting depth; and the rows the definition spans, its bare
// name and its name qualified by the definition around it, for Lookup.
// File-level variables and constants are named too (`var maxRetries`,
// `const x`, `MAX = 3`, `#define N`), ranked after the functions and types
// beside them.
func (b *builder) collectNames() {
	depth := make([]uint8, len(b.nodes))
	// encl holds, per node, 1 + the index in b.a.names of the innermost
	// definition around it (0: none), to qualify the names inside.
	encl := make([]int32, len(b.nodes))
	for i := range b.nodes {
		if b.stop() {
			return
		}
		nd := &b.nodes[i]
		if i > 0 {
			depth[i] = depth[nd.Parent]
			encl[i] = encl[nd.Parent]
		}
		if !nd.Named() || i == 0 {
			continue
		}
		typ := nd.Type()
		var label, short string
		name, rank := -1, depth[i]
		if b.definition(i, typ) {
			if name = b.defName(i); name < 0 {
				continue
			}
			label, short = b.defLabel(i, name)
		} else {
			var kw string
			if name, kw = b.variable(i, typ); name < 0 {
				continue
			}
			if kw != "" {
				label = kw + " " + cutLabel(cleanLabel(b.text(name)), maxLabel)
			} else {
				label, short = b.defLabel(i, name)
			}
			rank = min(rank, 254) + 1
		}
		if label == "" {
			continue
		}
		key := cutLabel(cleanLabel(b.text(name)), maxLabel)
		qual := ""
		if e := encl[i]; e > 0 {
			qual = b.a.names[e-1].key + "." + key
		} else if recv := goReceiver(label); recv != "" {
			qual = recv + "." + key
		}
		first, last := b.defRows(i)
		b.a.names = append(b.a.names, nameRow{row: int32(b.nodes[name].StartRow), rank: rank, label: label, short: short,
			first: first, last: last, key: key, qual: qual})
		encl[i] = int32(len(b.a.names))
		if depth[i] < 255 {
			depth[i]++
		}
	}
	slices.SortStableFunc(b.a.names, func(x, y nameRow) int { return int(x.row - y.row) })
}

// variable reports whether node i, of type typ, declares a file-level
// variable or constant (Java: a static final field), and returns the node
// of its name and the keyword its label starts with ("" : the label is
// the line through the name); -1 when it declares none.
func (b *builder) variable(i int, typ string) (name int, kw string) {
	nd := &b.nodes[i]
	parent := int(nd.Parent)
	atTop := func(decl int) bool {
		p := int(b.nodes[decl].Parent)
		return p == 0 || p > 0 && b.nodes[p].Type() == "export_statement" && b.nodes[p].Parent == 0
	}
	switch b.a.lang {
	case syntax.Go:
		if typ != "var_spec" && typ != "const_spec" {
			return -1, ""
		}
		decl := parent
		if t := b.nodes[decl].Type(); t == "var_spec_list" || t == "const_spec_list" {
			decl = int(b.nodes[decl].Parent)
		}
		if decl < 0 || b.nodes[decl].Parent != 0 {
			return -1, ""
		}
		return b.childField(i, "name"), strings.TrimSuffix(typ, "_spec")
	case syntax.Python:
		if typ != "assignment" || parent <= 0 || b.nodes[parent].Type() != "expression_statement" || b.nodes[parent].Parent != 0 {
			return -1, ""
		}
		if l := b.childField(i, "left"); l >= 0 && b.nodes[l].Type() == "identifier" {
			return l, ""
		}
	case syntax.JavaScript, syntax.TypeScript:
		if typ != "variable_declarator" || parent <= 0 || !atTop(parent) {
			return -1, ""
		}
		if t := b.nodes[parent].Type(); t != "lexical_declaration" && t != "variable_declaration" {
			return -1, ""
		}
		n := b.childField(i, "name")
		if n < 0 || b.nodes[n].Type() != "identifier" {
			return -1, ""
		}
		kw, _, _ := strings.Cut(strings.TrimSpace(b.text(parent)), " ")
		return n, kw
	case syntax.C, syntax.CPP:
		if parent != 0 {
			return -1, ""
		}
		switch typ {
		case "preproc_def":
			if n := b.childField(i, "name"); n >= 0 {
				return n, "#define"
			}
		case "declaration":
			// A global variable, not a prototype: no function declarator
			// on the way down to the name.
			d := b.childField(i, "declarator")
			for k := 0; d >= 0 && k < 6; k++ {
				switch t := b.nodes[d].Type(); {
				case t == "identifier":
					return d, ""
				case t == "function_declarator":
					return -1, ""
				}
				d = b.childField(d, "declarator")
			}
		}
	case syntax.Java:
		if typ != "field_declaration" {
			return -1, ""
		}
		mods := ""
		for c := i + 1; c < int(nd.End); c = int(b.nodes[c].End) {
			if b.nodes[c].Type() == "modifiers" {
				mods = b.text(c)
			}
		}
		if !strings.Contains(mods, "static") || !strings.Contains(mods, "final") {
			return -1, ""
		}
		if d := b.childField(i, "declarator"); d >= 0 {
			return b.childField(d, "name"), ""
		}
	}
	return -1, ""
}

// childField returns the first child of node i held under field f, -1 if
// none.
func (b *builder) childField(i int, f string) int {
	for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
		if b.nodes[c].Field() == f {
			return c
		}
	}
	return -1
}

// defRows returns the rows definition i spans, with what belongs to it
// above its first line: the decorators or export keyword of its parent
// node and the comment lines right above (its doc comment, Rust's
// attributes).
func (b *builder) defRows(i int) (first, last int32) {
	nd := &b.nodes[i]
	first, last = int32(nd.StartRow), int32(nd.LastRow())
	for p := int(nd.Parent); p > 0; p = int(b.nodes[p].Parent) {
		t := b.nodes[p].Type()
		if t != "decorated_definition" && t != "export_statement" && t != "var_declaration" && t != "const_declaration" &&
			t != "lexical_declaration" && t != "variable_declaration" && t != "expression_statement" && t != "type_declaration" {
			break
		}
		if int32(b.nodes[p].StartRow) < first && b.nodes[p].LastRow() <= int(last) {
			first = int32(b.nodes[p].StartRow)
		}
	}
	for first > 0 && b.docLine(int(first)-1) {
		first--
	}
	return first, last
}

// docLine reports a row that holds a comment alone (or, in Rust, an
// attribute): what documents the definition below it.
func (b *builder) docLine(row int) bool {
	t := strings.TrimSpace(b.a.lines.content(row))
	if t == "" {
		return false
	}
	switch b.a.lang {
	case syntax.Python:
		return strings.HasPrefix(t, "#")
	case syntax.Rust:
		if strings.HasPrefix(t, "#[") {
			return true
		}
	}
	return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
}

// goReceiver returns the receiver type of a Go method's label (`Client`
// of `func (c *Client) do`), "" for any other label.
func goReceiver(label string) string {
	rest, ok := strings.CutPrefix(label, "func (")
	if !ok {
		return ""
	}
	recv, _, ok := strings.Cut(rest, ")")
	if !ok {
		return ""
	}
	fs := strings.Fields(recv)
	if len(fs) == 0 {
		return ""
	}
	t := strings.TrimLeft(fs[len(fs)-1], "*")
	if k := strings.IndexByte(t, '['); k >= 0 {
		t = t[:k]
	}
	return t
}

// notDefinition marks node types whose names are uses, not definitions,
// though their type names look like scopes (method_invocation,
// struct_expression, function_declarator, enumerator ...).
var notDefinition = []string{"invocation", "call", "expression", "reference", "_declarator",
	"enumerator", "enum_variant", "enum_constant", "_type", "literal", "pattern", "argument", "signature_help"}

// definition reports whether node i, of type typ, defines a name a
// placeholder should list.
func (b *builder) definition(i int, typ string) bool {
	if definitionTypes[typ] {
		return true
	}
	if typ == "variable_declarator" {
		return b.arrowValue(i)
	}
	if b.info(typ).kind != kindScope {
		return false
	}
	for _, s := range notDefinition {
		if strings.Contains(typ, s) {
			return false
		}
	}
	if strings.HasSuffix(typ, "_specifier") {
		// C's struct_specifier names a type where it is used too; only
		// one with a body defines it.
		for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
			if b.nodes[c].Field() == "body" {
				return true
			}
		}
		return false
	}
	return true
}

// arrowValue reports a declarator whose value is a function
// (`const f = () => ...`).
func (b *builder) arrowValue(i int) bool {
	for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
		if b.nodes[c].Field() == "value" {
			t := b.nodes[c].Type()
			return t == "arrow_function" || t == "function_expression" || t == "function"
		}
	}
	return false
}

// defName finds the node naming definition i: its name field, else the
// innermost of its declarator fields (C, C++), else an impl's type; -1
// when it has none.
func (b *builder) defName(i int) int {
	var decl, typ = -1, -1
	for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
		switch b.nodes[c].Field() {
		case "name":
			return c
		case "declarator":
			decl = c
		case "type":
			typ = c
		}
	}
	for depth := 0; decl >= 0 && depth < 6; depth++ {
		if isIdentifierType(b.nodes[decl].Type()) || strings.HasSuffix(b.nodes[decl].Type(), "_name") ||
			b.nodes[decl].Type() == "qualified_identifier" {
			return decl
		}
		next := -1
		for c := decl + 1; c < int(b.nodes[decl].End); c = int(b.nodes[c].End) {
			if b.nodes[c].Field() == "declarator" || b.nodes[c].Field() == "name" {
				next = c
				break
			}
		}
		decl = next
	}
	if typ >= 0 && b.nodes[i].Type() == "impl_item" {
		return typ
	}
	return -1
}

// defLabel is the line of definition def's name from its first non-blank
// byte (or from def's start, when def starts later on that line) through
// the name (`func (c *Client) do`), at most maxLabel characters, and its
// short form: the label's first word and the name (`func do`), or the name
// alone.
func (b *builder) defLabel(def, name int) (label, short string) {
	nd := &b.nodes[name]
	row := int(nd.StartRow)
	if row >= b.a.lines.n() || int(nd.EndByte) > len(b.a.text) {
		return "", ""
	}
	start := b.a.lines.start(row)
	if d := &b.nodes[def]; int(d.StartRow) == row && b.info(d.Type()).kind == kindScope {
		start = max(start, int(d.StartByte))
	}
	end := int(nd.EndByte)
	if lineEnd := b.a.lines.end(row); end > lineEnd {
		end = lineEnd
	}
	if end <= start {
		return "", ""
	}
	nameText := cutLabel(cleanLabel(b.text(name)), maxLabel)
	label = cleanLabel(b.a.text[start:end])
	if utf8.RuneCountInString(label) > maxLabel {
		label = nameText
	}
	short = nameText
	if w, _, ok := strings.Cut(label, " "); ok && w != nameText && isWord(w) {
		short = w + " " + nameText
	}
	if short == label {
		short = ""
	}
	return label, short
}

// maxLabel bounds a definition's label; a longer one is its name alone.
const maxLabel = 80

// isWord reports a keyword-like word: letters only.
func isWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return s != ""
}

// --- records of tool output ---

var (
	reGoTest    = regexp.MustCompile(`^\s*--- (FAIL|PASS|SKIP): (\S+)`)
	reGoPkg     = regexp.MustCompile(`^(FAIL|ok) *\t(\S+)`)
	reTAP       = regexp.MustCompile(`^\s*(not ok|ok) \d+ - \S`)
	reSpec      = regexp.MustCompile(`^\s*([✖✔✗✓✕√×●]) +(\S.*?)(?: \([\d.]+m?s\))?$`)
	rePytest    = regexp.MustCompile(`^(FAILED|ERROR|PASSED) (\S+)`)
	rePytestID  = regexp.MustCompile(`^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL)`)
	rePyBanner  = regexp.MustCompile(`^_{3,} (\S.*?) _{3,}$`)
	reException = regexp.MustCompile(`^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning))\b( \[[^\]]*\])?(:.*)?$`)
	rePanic     = regexp.MustCompile(`^(panic|fatal error): `)
	reCommit    = regexp.MustCompile(`^commit [0-9a-f]{7,40}\b`)
	reOneline   = regexp.MustCompile(`^[0-9a-f]{7,12} (\S.*)$`)
	reBlame     = regexp.MustCompile(`^\^?[0-9a-f]{7,40} .*\(.*\d{4}-\d\d-\d\d.*\d+\)`)
	reDiff      = regexp.MustCompile(`^diff --git a/(\S+) b/`)
	reHunk      = regexp.MustCompile(`^@@ [^@]* @@ ?(.*)$`)
	reGrep      = regexp.MustCompile(`^(\.?[\w./@+-]*\w\.\w+)[:-]\d+[:-]`)
	reLogLevel  = regexp.MustCompile(`(?:\[(?:ERROR|FATAL|CRITICAL)\]|\b(?:ERROR|FATAL|CRITICAL)\b|level=(?:error|fatal))`)
	reLogWarn   = regexp.MustCompile(`(?:\[(?:WARN|WARNING)\]|\b(?:WARN|WARNING)\b|level=warn)`)
	reDu        = regexp.MustCompile(`^\s*\d+(?:[.,]\d+)?[KMGTP]?\s+(\S*[/.]\S*)$`)
	reLs        = regexp.MustCompile(`^[-dlcbps][rwxsStT-]{9}[.@+]?\s.*\s(\S+)$`)
)

// Record ranks: failures and errors are listed first.
const (
	rankFailure = 0
	rankRecord  = 1
)

// collectRecords records the records of a non-code text, with the rows
// each spans (recordRows).
func (a *Analysis) collectRecords() {
	n := a.lines.n()
	var kinds []recKind
	for r := 0; r < n; r++ {
		line := a.lines.content(r)
		if len(line) > 4096 {
			line = line[:4096]
		}
		label, rank, kind := recordLabel(line)
		if label == "" && reCommit.MatchString(line) {
			// The subject is the first indented line after the header.
			for k := r + 1; k < n && k <= r+6; k++ {
				if s := a.lines.content(k); strings.HasPrefix(s, "    ") && strings.TrimSpace(s) != "" {
					label, rank, kind = cleanLabel(s), rankRecord, recCommit
					break
				}
			}
		}
		// Some patterns capture raw bytes (a test's name, a diff's path):
		// every label is made one clean, bounded line here.
		if label = nameLabel(label); label != "" {
			a.names = append(a.names, nameRow{row: int32(r), rank: rank, label: label, short: pathTail(label)})
			kinds = append(kinds, kind)
		}
	}
	a.recordRows(kinds)
}

// recKind says how far a record reaches, for Lookup.
type recKind uint8

const (
	recLine      recKind = iota // the line and the lines indented under it
	recCommit                   // a git log entry: up to the next commit header
	recDiff                     // a file of a diff: up to the next diff --git
	recHunk                     // a hunk: up to the next hunk or file
	recBanner                   // a pytest section (___ name ___): up to the next banner or ===== line
	recException                // an exception line: with the traceback above it
)

// recordRows sets the rows each record spans (kinds[k] is a.names[k]'s
// kind). A run of records with one label (the lines of one file in grep
// output) is one record: each of them spans the run.
func (a *Analysis) recordRows(kinds []recKind) {
	n := int32(a.lines.n())
	indent := func(r int32) int {
		s := a.lines.content(int(r))
		return len(s) - len(strings.TrimLeft(s, " \t"))
	}
	blank := func(r int32) bool { return strings.TrimSpace(a.lines.content(int(r))) == "" }
	for k := range a.names {
		nm := &a.names[k]
		r := nm.row
		first, last := r, r
		switch kinds[k] {
		case recCommit, recDiff, recHunk, recBanner:
			for last+1 < n && !recordEnds(a.lines.content(int(last+1)), kinds[k]) {
				last++
			}
		case recException:
			// Python prints the traceback above the exception.
			for up := r - 1; up >= 0 && up >= r-400; up-- {
				s := a.lines.content(int(up))
				if strings.HasPrefix(s, "Traceback (most recent call last)") {
					first = up
					break
				}
				if !strings.HasPrefix(s, " ") {
					break
				}
			}
			fallthrough
		default:
			in := indent(r)
			for next := last + 1; next < n; next++ {
				if blank(next) {
					continue
				}
				if indent(next) <= in {
					break
				}
				last = next
			}
		}
		nm.first, nm.last = first, last
	}
	// Records of one label in a row (grep's lines of one file) span
	// their run.
	for k := 0; k < len(a.names); {
		j := k
		for j+1 < len(a.names) && a.names[j+1].label == a.names[k].label && a.names[j+1].first <= a.names[j].last+1 {
			j++
		}
		first, last := a.names[k].first, a.names[j].last
		for m := k; m <= j; m++ {
			a.names[m].first, a.names[m].last = first, max(last, a.names[m].last)
		}
		k = j + 1
	}
}

// recordEnds reports whether line starts the record after one of kind.
func recordEnds(line string, kind recKind) bool {
	switch kind {
	case recCommit:
		return reCommit.MatchString(line)
	case recDiff:
		return strings.HasPrefix(line, "diff --git ")
	case recHunk:
		return strings.HasPrefix(line, "@@ ") || strings.HasPrefix(line, "diff --git ")
	case recBanner:
		return strings.HasPrefix(line, "___") || strings.HasPrefix(line, "====")
	}
	return true
}

// recordLabel names the record a line of tool output starts, if any.
//
// Every pattern sits behind a test of a byte or a substring: most lines
// of a long log match none, and running every regular expression on each
// would cost more than the rest of the pruning.
func recordLabel(line string) (string, uint8, recKind) {
	t := strings.TrimSpace(line)
	if t == "" {
		return "", 0, recLine
	}
	has := func(prefix string) bool { return strings.HasPrefix(line, prefix) }
	tok0 := t
	if k := strings.IndexAny(t, " :["); k >= 0 {
		tok0 = t[:k]
	}
	first := line
	if k := strings.IndexByte(line, ' '); k >= 0 {
		first = line[:k]
	}
	hex := isHex(line[0]) || line[0] == '^'
	switch {
	case strings.HasPrefix(t, "--- "):
		if m := reGoTest.FindStringSubmatch(line); m != nil {
			rank := uint8(rankRecord)
			if m[1] == "FAIL" {
				rank = rankFailure
			}
			return "--- " + m[1] + ": " + m[2], rank, recLine
		}
	case has("FAIL") || has("ok"):
		if m := reGoPkg.FindStringSubmatch(line); m != nil {
			if m[1] == "FAIL" {
				return "FAIL " + m[2], rankFailure, recLine
			}
			return "ok " + m[2], rankRecord, recLine
		}
	}
	if strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "not ok ") {
		if m := reTAP.FindStringSubmatch(line); m != nil {
			if m[1] == "not ok" {
				return cleanLabel(t), rankFailure, recLine
			}
			return cleanLabel(t), rankRecord, recLine
		}
	}
	if t[0] >= 0x80 {
		if m := reSpec.FindStringSubmatch(line); m != nil {
			rank := uint8(rankRecord)
			switch m[1] {
			case "✖", "✗", "✕", "×", "●":
				rank = rankFailure
			}
			return cleanLabel(m[1] + " " + m[2]), rank, recLine
		}
	}
	if has("FAILED ") || has("ERROR ") || has("PASSED ") {
		if m := rePytest.FindStringSubmatch(line); m != nil {
			if m[1] == "PASSED" {
				return m[2], rankRecord, recLine
			}
			return m[1] + " " + m[2], rankFailure, recLine
		}
	}
	if strings.Contains(line, "::") {
		if m := rePytestID.FindStringSubmatch(line); m != nil {
			if m[2] == "FAILED" || m[2] == "ERROR" {
				return m[1] + " " + m[2], rankFailure, recLine
			}
			return m[1], rankRecord, recLine
		}
	}
	if has("___") {
		if m := rePyBanner.FindStringSubmatch(line); m != nil {
			return cleanLabel(m[1]), rankRecord, recBanner
		}
	}
	if (exceptionLike(tok0) && reException.MatchString(line)) || ((has("panic: ") || has("fatal error: ")) && rePanic.MatchString(line)) {
		return cleanLabel(t), rankFailure, recException
	}
	if has("diff --git ") {
		if m := reDiff.FindStringSubmatch(line); m != nil {
			return m[1], rankRecord, recDiff
		}
	}
	if has("@@ ") {
		if m := reHunk.FindStringSubmatch(line); m != nil {
			if s := cleanLabel(m[1]); s != "" {
				return s, rankRecord, recHunk
			}
			return "", 0, recLine
		}
	}
	if hex && reBlame.MatchString(line) {
		return "", 0, recLine
	}
	if strings.Contains(first, ".") && strings.ContainsAny(first, ":-") {
		if m := reGrep.FindStringSubmatch(line); m != nil {
			return m[1], rankRecord, recLine
		}
	}
	if hex {
		if m := reOneline.FindStringSubmatch(line); m != nil {
			return cleanLabel(m[1]), rankRecord, recLine
		}
	}
	if containsAny(line, "ERROR", "FATAL", "CRITICAL", "level=") {
		if loc := reLogLevel.FindStringIndex(line); loc != nil {
			return cleanLabel(line[loc[0]:]), rankFailure, recLine
		}
	}
	if containsAny(line, "WARN", "level=") {
		if loc := reLogWarn.FindStringIndex(line); loc != nil {
			return cleanLabel(line[loc[0]:]), rankRecord, recLine
		}
	}
	if sizeLike(t) {
		if m := reDu.FindStringSubmatch(line); m != nil {
			return m[1], rankRecord, recLine
		}
	}
	if len(line) >= 11 && strings.IndexByte("-dlcbps", line[0]) >= 0 && strings.IndexByte("rwx-", line[1]) >= 0 {
		if m := reLs.FindStringSubmatch(line); m != nil && m[1] != "." && m[1] != ".." {
			return m[1], rankRecord, recLine
		}
	}
	return "", 0, recLine
}

// exceptionLike reports a first word that may name an exception.
func exceptionLike(w string) bool {
	for _, s := range []string{"Error", "Exception", "Exit", "Interrupt", "Failure", "Warning"} {
		if strings.HasSuffix(w, s) {
			return true
		}
	}
	return false
}

// sizeLike reports a line whose first field is a size as du prints it
// (4, 4.0K, 12M).
func sizeLike(t string) bool {
	k := strings.IndexAny(t, " \t")
	if k <= 0 || t[0] < '0' || t[0] > '9' {
		return false
	}
	for i := 1; i < k; i++ {
		if c := t[i]; !(c >= '0' && c <= '9' || c == '.' || c == ',' || i == k-1 && strings.IndexByte("KMGTP", c) >= 0) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// pathTail is the short form of a path label: its last two elements
// ("…/file/CountersTest.java"); "" for a label that is no path or is
// short already.
func pathTail(label string) string {
	if strings.ContainsAny(label, " \t") {
		return ""
	}
	// Trailing slashes belong to the last element ("du -sh /tmp/" prints
	// "/tmp/"): "/x/" and "a//" have no two elements to show.
	k := strings.LastIndexByte(strings.TrimRight(label, "/"), '/')
	if k <= 0 {
		return ""
	}
	if k = strings.LastIndexByte(label[:k], '/'); k < 0 {
		return ""
	}
	return "…" + label[k:]
}

// textAnalysis is the analysis of a text rendered without a parse: its
// records when it is not code.
func textAnalysis(text string, lang syntax.Language) *Analysis {
	a := &Analysis{lang: lang, text: text, lines: newLineIndex(text)}
	if !lang.IsCode() {
		a.collectRecords()
	}
	return a
}
