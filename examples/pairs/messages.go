package main

import (
	"regexp"
	"strings"
	"unicode"
)

// Message pairs: the text of an error, panic or log message and the code
// around the statement that emits it (the condition that guards it, or
// the statements just before). Debug questions quote or paraphrase such
// messages; the pair teaches the encoder which code a message's words
// describe. The unit's code has the message's own characters blanked
// (its quotes stay), so the answer is not in the code, and its kind is
// "msg": its negatives are the file's other message units, the other
// checks and failures of the same file.

// maxMsgPairs bounds the message pairs of one file, so that a file of
// log calls does not outweigh the rest of its repository.
const maxMsgPairs = 64

// stringTypes are the string literal node types of the supported grammars.
var stringTypes = map[string]bool{
	"interpreted_string_literal": true, "raw_string_literal": true, // Go, Rust, C++
	"string": true, "template_string": true, // Python, JavaScript, TypeScript
	"string_literal": true, // Java, Rust, C, C++
}

// msgPassTypes may stand between a message literal and the call or
// statement that emits it: argument lists, concatenations, formatting.
var msgPassTypes = map[string]bool{
	"argument_list": true, "arguments": true, "binary_expression": true, "binary_operator": true,
	"parenthesized_expression": true, "token_tree": true, "concatenated_string": true,
	"keyword_argument": true, "pair": true,
}

// msgCallTypes are the call-like nodes whose callee name decides whether a
// string in their arguments is a message, with the field holding the callee.
var msgCallTypes = map[string]string{
	"call_expression": "function", "call": "function", "method_invocation": "name",
	"object_creation_expression": "type", "new_expression": "constructor", "macro_invocation": "macro",
}

// msgStatementTypes emit whatever string they hold: raise and throw.
var msgStatementTypes = map[string]bool{"raise_statement": true, "throw_statement": true, "throw_expression": true}

// msgContextTypes are the guards whose condition says when a message is
// emitted; the innermost one of at most maxBlockLines rows is the unit.
var msgContextTypes = map[string]bool{
	"if_statement": true, "if_expression": true, "elif_clause": true,
	"match_arm": true, "case_clause": true, "expression_case": true, "type_case": true, "switch_case": true,
	"switch_block_statement_group": true, "catch_clause": true, "except_clause": true,
}

var (
	// msgCalleeRE matches the last name of a callee that reports: errors,
	// panics, assertions, warnings, logs.
	msgCalleeRE = regexp.MustCompile(`(?i)^(panicf?|panicln|fatal(f|ln)?|error(f|ln)?|warn(f|ln|ing|ingf)?|bail|anyhow|ensure|expect|(with_)?context|abort|die|fail(f|ure)?|eprint(ln)?|perror|fprintf|critical|exception|log(f)?|info(f)?|debug(f)?|trace(f)?|notice|assert\w*|raise\w*|\w*error|\w*exception|\w*err|new)$`)
	// loggerRE matches a callee reached through a logger (log.Printf,
	// self.logger.info), whatever the method's name.
	loggerRE   = regexp.MustCompile(`(?i)(^|[^a-z])(log|logger|logging|slog|klog|glog|zap|logrus)\b`)
	fmtVerbRE  = regexp.MustCompile(`%[-+# 0]*[0-9*]*(\.[0-9*]+)?[a-zA-Z%]|\$?\{[^{}]*\}|\\[ntrv0]`)
	wordRuneRE = regexp.MustCompile(`[A-Za-z]`)
)

// messages mines the message pairs of the file's function bodies.
func (m *miner) messages() {
	nodes := m.tree.Nodes
	seen := map[int]bool{}
	n := 0
	for _, d := range m.defs {
		if d.class != fnDef || d.body < 0 {
			continue
		}
		for i := d.body + 1; i < int(nodes[d.body].End) && n < maxMsgPairs; i++ {
			if !stringTypes[nodes[i].Type()] || seen[i] {
				continue
			}
			// A concatenation of strings is one message.
			top := m.concatTop(i, d.body)
			var parts []int
			var text []string
			for j := top; j < int(nodes[top].End); j++ {
				if stringTypes[nodes[j].Type()] {
					parts = append(parts, j)
					text = append(text, m.tree.Text(m.src, j))
					seen[j] = true
					j = int(nodes[j].End) - 1 // a template's parts are the template's
				}
			}
			if !m.isMessage(top, d.body) {
				continue
			}
			nl, ok := messageText(text)
			if !ok {
				continue
			}
			from, to := m.messageRows(top, d.body)
			u := m.addMaskedUnit("msg", from, to, parts)
			if u < 0 {
				continue
			}
			// messageText has cleaned nl as addPair would.
			m.pairs = append(m.pairs, Pair{NL: nl, Unit: u, Kind: "msg"})
			n++
		}
	}
}

// concatTop returns the outermost concatenation (or parentheses) holding
// string node s within body, or s.
func (m *miner) concatTop(s, body int) int {
	nodes := m.tree.Nodes
	top := s
	for p := int(nodes[s].Parent); p > body && p >= 0; p = int(nodes[p].Parent) {
		switch nodes[p].Type() {
		case "binary_expression", "binary_operator", "concatenated_string", "parenthesized_expression":
			top = p
			continue
		}
		break
	}
	return top
}

// isMessage reports whether string node s is emitted as a message: an
// argument of a reporting call (through at most one other call, as in
// panic(fmt.Sprintf(...))) or of a raise or throw, within body.
func (m *miner) isMessage(s, body int) bool {
	nodes := m.tree.Nodes
	calls := 0
	for p := int(nodes[s].Parent); p > body && p >= 0; p = int(nodes[p].Parent) {
		typ := nodes[p].Type()
		switch {
		case msgStatementTypes[typ]:
			return true
		case msgCallTypes[typ] != "":
			if f := m.field(p, msgCallTypes[typ]); f >= 0 {
				if callee := m.tree.Text(m.src, f); msgCalleeRE.MatchString(lastName(callee)) || loggerRE.MatchString(callee) {
					return true
				}
			}
			if calls++; calls > 1 {
				return false
			}
		case msgPassTypes[typ]:
		default:
			return false
		}
	}
	return false
}

// lastName returns the last identifier of a callee's text (fmt.Errorf →
// Errorf, panic! → panic, std::runtime_error → runtime_error).
func lastName(callee string) string {
	f := strings.FieldsFunc(callee, func(r rune) bool { return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') })
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// messageText turns the string literals of a message into the pair's text: quotes,
// prefixes, format verbs, placeholders and escapes removed.
func messageText(raw []string) (string, bool) {
	for i, r := range raw {
		r = strings.TrimLeft(strings.TrimSpace(r), "rRbBuUfFL@$#")
		raw[i] = strings.Trim(r, "\"'`#")
	}
	s := strings.Join(raw, " ")
	s = fmtVerbRE.ReplaceAllString(s, " ")
	s = strings.NewReplacer(":", " ", "\\", " ").Replace(s)
	if !wordRuneRE.MatchString(s) {
		return "", false
	}
	return cleanNL(s)
}

// messageRows returns the rows of a message's unit: the innermost guard
// around it of at most maxBlockLines rows, else its statement with the
// rows just above it in the body.
func (m *miner) messageRows(s, body int) (from, to int) {
	nodes := m.tree.Nodes
	stmt := s
	for p := int(nodes[s].Parent); p > body && p >= 0; p = int(nodes[p].Parent) {
		if msgContextTypes[nodes[p].Type()] {
			if nodes[p].LastRow()-int(nodes[p].StartRow) < maxBlockLines {
				return int(nodes[p].StartRow), nodes[p].LastRow()
			}
			break
		}
		stmt = p
	}
	to = nodes[stmt].LastRow()
	from = max(int(nodes[stmt].StartRow)-3, int(nodes[body].StartRow)+1)
	if to-from >= maxBlockLines {
		from = to - maxBlockLines + 1
	}
	return from, to
}

// addMaskedUnit adds a unit of rows [from, to] whose code has the
// characters of the string nodes parts blanked, each string's first and
// last (its quotes) kept.
func (m *miner) addMaskedUnit(kind string, from, to int, parts []int) int {
	nodes := m.tree.Nodes
	sr, er := int(nodes[parts[0]].StartRow), int(nodes[parts[len(parts)-1]].EndRow)
	if sr < from || er > to || er >= len(m.clean) {
		return -1
	}
	saved := make([]string, er-sr+1)
	copy(saved, m.clean[sr:er+1])
	for r := sr; r <= er; r++ {
		line := []byte(m.clean[r])
		off := m.rowOffset(r)
		for c := range line {
			b := off + c
			for _, s := range parts {
				if b > int(nodes[s].StartByte) && b < int(nodes[s].EndByte)-1 {
					line[c] = ' '
					break
				}
			}
		}
		m.clean[r] = string(line)
	}
	u := m.addUnit(kind, from, to)
	copy(m.clean[sr:er+1], saved)
	return u
}

// rowOffset returns the byte offset of row r in the source.
func (m *miner) rowOffset(r int) int {
	if m.rowStarts == nil {
		m.rowStarts = []int{0}
		for i, b := range m.src {
			if b == '\n' {
				m.rowStarts = append(m.rowStarts, i+1)
			}
		}
	}
	if r < len(m.rowStarts) {
		return m.rowStarts[r]
	}
	return len(m.src)
}
