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
// ranked by nesting depth.
func (b *builder) collectNames() {
	depth := make([]uint8, len(b.nodes))
	for i := range b.nodes {
		if b.stop() {
			return
		}
		nd := &b.nodes[i]
		if i > 0 {
			depth[i] = depth[nd.Parent]
		}
		if !nd.Named() || i == 0 {
			continue
		}
		typ := nd.Type()
		if !b.definition(i, typ) {
			continue
		}
		name := b.defName(i)
		if name < 0 {
			continue
		}
		label, short := b.defLabel(i, name)
		if label == "" {
			continue
		}
		b.a.names = append(b.a.names, nameRow{row: int32(b.nodes[name].StartRow), rank: depth[i], label: label, short: short})
		if depth[i] < 255 {
			depth[i]++
		}
	}
	slices.SortStableFunc(b.a.names, func(x, y nameRow) int { return int(x.row - y.row) })
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

// collectRecords records the records of a non-code text.
func (a *Analysis) collectRecords() {
	n := a.lines.n()
	for r := 0; r < n; r++ {
		line := a.lines.content(r)
		if len(line) > 4096 {
			line = line[:4096]
		}
		label, rank := recordLabel(line)
		if label == "" && reCommit.MatchString(line) {
			// The subject is the first indented line after the header.
			for k := r + 1; k < n && k <= r+6; k++ {
				if s := a.lines.content(k); strings.HasPrefix(s, "    ") && strings.TrimSpace(s) != "" {
					label, rank = cleanLabel(s), rankRecord
					break
				}
			}
		}
		// Some patterns capture raw bytes (a test's name, a diff's path):
		// every label is made one clean, bounded line here.
		if label = nameLabel(label); label != "" {
			a.names = append(a.names, nameRow{row: int32(r), rank: rank, label: label, short: pathTail(label)})
		}
	}
}

// recordLabel names the record a line of tool output starts, if any.
//
// Every pattern sits behind a test of a byte or a substring: most lines
// of a long log match none, and running every regular expression on each
// would cost more than the rest of the pruning.
func recordLabel(line string) (string, uint8) {
	t := strings.TrimSpace(line)
	if t == "" {
		return "", 0
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
			return "--- " + m[1] + ": " + m[2], rank
		}
	case has("FAIL") || has("ok"):
		if m := reGoPkg.FindStringSubmatch(line); m != nil {
			if m[1] == "FAIL" {
				return "FAIL " + m[2], rankFailure
			}
			return "ok " + m[2], rankRecord
		}
	}
	if strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "not ok ") {
		if m := reTAP.FindStringSubmatch(line); m != nil {
			if m[1] == "not ok" {
				return cleanLabel(t), rankFailure
			}
			return cleanLabel(t), rankRecord
		}
	}
	if t[0] >= 0x80 {
		if m := reSpec.FindStringSubmatch(line); m != nil {
			rank := uint8(rankRecord)
			switch m[1] {
			case "✖", "✗", "✕", "×", "●":
				rank = rankFailure
			}
			return cleanLabel(m[1] + " " + m[2]), rank
		}
	}
	if has("FAILED ") || has("ERROR ") || has("PASSED ") {
		if m := rePytest.FindStringSubmatch(line); m != nil {
			if m[1] == "PASSED" {
				return m[2], rankRecord
			}
			return m[1] + " " + m[2], rankFailure
		}
	}
	if strings.Contains(line, "::") {
		if m := rePytestID.FindStringSubmatch(line); m != nil {
			if m[2] == "FAILED" || m[2] == "ERROR" {
				return m[1] + " " + m[2], rankFailure
			}
			return m[1], rankRecord
		}
	}
	if has("___") {
		if m := rePyBanner.FindStringSubmatch(line); m != nil {
			return cleanLabel(m[1]), rankRecord
		}
	}
	if (exceptionLike(tok0) && reException.MatchString(line)) || ((has("panic: ") || has("fatal error: ")) && rePanic.MatchString(line)) {
		return cleanLabel(t), rankFailure
	}
	if has("diff --git ") {
		if m := reDiff.FindStringSubmatch(line); m != nil {
			return m[1], rankRecord
		}
	}
	if has("@@ ") {
		if m := reHunk.FindStringSubmatch(line); m != nil {
			if s := cleanLabel(m[1]); s != "" {
				return s, rankRecord
			}
			return "", 0
		}
	}
	if hex && reBlame.MatchString(line) {
		return "", 0
	}
	if strings.Contains(first, ".") && strings.ContainsAny(first, ":-") {
		if m := reGrep.FindStringSubmatch(line); m != nil {
			return m[1], rankRecord
		}
	}
	if hex {
		if m := reOneline.FindStringSubmatch(line); m != nil {
			return cleanLabel(m[1]), rankRecord
		}
	}
	if containsAny(line, "ERROR", "FATAL", "CRITICAL", "level=") {
		if loc := reLogLevel.FindStringIndex(line); loc != nil {
			return cleanLabel(line[loc[0]:]), rankFailure
		}
	}
	if containsAny(line, "WARN", "level=") {
		if loc := reLogWarn.FindStringIndex(line); loc != nil {
			return cleanLabel(line[loc[0]:]), rankRecord
		}
	}
	if sizeLike(t) {
		if m := reDu.FindStringSubmatch(line); m != nil {
			return m[1], rankRecord
		}
	}
	if len(line) >= 11 && strings.IndexByte("-dlcbps", line[0]) >= 0 && strings.IndexByte("rwx-", line[1]) >= 0 {
		if m := reLs.FindStringSubmatch(line); m != nil && m[1] != "." && m[1] != ".." {
			return m[1], rankRecord
		}
	}
	return "", 0
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
