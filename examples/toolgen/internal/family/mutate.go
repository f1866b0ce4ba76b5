package family

import (
	"fmt"
	"regexp"
	"strings"
)

// Mutation is one injected fault: a single source line changed the way a
// slip of the hand changes it (a flipped comparison, an off-by-one, a
// wrong constant, a dropped line, swapped arguments, a negated boolean).
type Mutation struct {
	Line   int    // 1-based line changed
	Kind   string // "compare", "off-by-one", "constant", "logic", "arith", "bool", "drop", "swap"
	Before string // the line as it was
	After  string // the line as mutated ("" for a dropped line: it becomes blank-free code, see Apply)
	Desc   string // e.g. "`<` became `<=`"
}

// Apply returns src with m applied. A dropped line is replaced by a line
// holding only its indentation, so line numbers after it do not move.
func (m Mutation) Apply(src string) string {
	lines := strings.Split(src, "\n")
	if m.Line < 1 || m.Line > len(lines) {
		return src
	}
	lines[m.Line-1] = m.After
	return strings.Join(lines, "\n")
}

// Lang families the lexer knows: how comments and strings look.
const (
	LangC      = "c" // C, C++, Go, Java, JavaScript, TypeScript, Rust
	LangPython = "python"
)

var (
	reCompare = regexp.MustCompile(`<=|>=|==|!=|<|>`)
	reInt     = regexp.MustCompile(`\b[0-9]+\b`)
	reLogicC  = regexp.MustCompile(`&&|\|\|`)
	reLogicPy = regexp.MustCompile(`\band\b|\bor\b`)
	reBoolC   = regexp.MustCompile(`\btrue\b|\bfalse\b`)
	reBoolPy  = regexp.MustCompile(`\bTrue\b|\bFalse\b`)
	reArith   = regexp.MustCompile(` [+-] `)
	reSwap    = regexp.MustCompile(`\(([A-Za-z_][A-Za-z0-9_.]*), ([A-Za-z_][A-Za-z0-9_.]*)\)`)
)

var flipCompare = map[string]string{"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}

// Candidates lists every single-line mutation of src the lexer can place
// outside comments and string literals. lang is LangC or LangPython.
func Candidates(src, lang string) []Mutation {
	lines := strings.Split(src, "\n")
	code := codeMask(lines, lang)
	// depth[i] is the bracket depth at the start of line i: a line inside
	// an open call or literal is part of a longer statement and cannot be
	// dropped alone.
	depth := make([]int, len(lines)+1)
	for i, c := range code {
		d := depth[i]
		for _, ch := range c {
			switch ch {
			case '(', '[':
				d++
			case ')', ']':
				d--
			}
		}
		depth[i+1] = d
	}
	var out []Mutation
	for i, line := range lines {
		c := code[i]
		if strings.TrimSpace(c) == "" {
			continue
		}
		trim := strings.TrimSpace(line)
		if lang == LangC && (strings.HasPrefix(trim, "#") || strings.HasPrefix(trim, "import ") || strings.HasPrefix(trim, "package ")) {
			continue
		}
		if lang == LangPython && (strings.HasPrefix(trim, "import ") || strings.HasPrefix(trim, "from ") || strings.HasPrefix(trim, "@")) {
			continue
		}
		add := func(kind string, lo, hi int, repl, desc string) {
			after := line[:lo] + repl + line[hi:]
			if after == line {
				return
			}
			out = append(out, Mutation{Line: i + 1, Kind: kind, Before: line, After: after, Desc: desc})
		}
		for _, m := range reCompare.FindAllStringIndex(c, -1) {
			op := c[m[0]:m[1]]
			// Skip generics, arrows, shifts and the like: a comparison has
			// spaces around it.
			if m[0] == 0 || m[1] >= len(c) || c[m[0]-1] != ' ' || c[m[1]] != ' ' {
				continue
			}
			add("compare", m[0], m[1], flipCompare[op], fmt.Sprintf("`%s` became `%s`", op, flipCompare[op]))
		}
		for _, m := range reInt.FindAllStringIndex(c, -1) {
			lit := c[m[0]:m[1]]
			if len(lit) > 6 || (m[0] > 0 && (c[m[0]-1] == '.' || isIdent(c[m[0]-1]))) || (m[1] < len(c) && (c[m[1]] == '.' || isIdent(c[m[1]]))) {
				continue
			}
			var n int
			fmt.Sscan(lit, &n)
			repl := fmt.Sprint(n + 1)
			kind := "off-by-one"
			if n > 2 && (i+m[0])%2 == 0 {
				repl, kind = fmt.Sprint(n-1), "off-by-one"
			}
			if n >= 8 && (i+m[0])%3 == 0 {
				repl, kind = fmt.Sprint(n*2), "constant"
			}
			add(kind, m[0], m[1], repl, fmt.Sprintf("`%s` became `%s`", lit, repl))
		}
		logic, boolRe := reLogicC, reBoolC
		if lang == LangPython {
			logic, boolRe = reLogicPy, reBoolPy
		}
		for _, m := range logic.FindAllStringIndex(c, -1) {
			op := c[m[0]:m[1]]
			repl := map[string]string{"&&": "||", "||": "&&", "and": "or", "or": "and"}[op]
			add("logic", m[0], m[1], repl, fmt.Sprintf("`%s` became `%s`", op, repl))
		}
		for _, m := range boolRe.FindAllStringIndex(c, -1) {
			op := c[m[0]:m[1]]
			repl := map[string]string{"true": "false", "false": "true", "True": "False", "False": "True"}[op]
			add("bool", m[0], m[1], repl, fmt.Sprintf("`%s` became `%s`", op, repl))
		}
		for _, m := range reArith.FindAllStringIndex(c, -1) {
			op := strings.TrimSpace(c[m[0]:m[1]])
			repl := map[string]string{"+": " - ", "-": " + "}[op]
			add("arith", m[0], m[1], repl, fmt.Sprintf("`%s` became `%s`", op, strings.TrimSpace(repl)))
		}
		for _, m := range reSwap.FindAllStringSubmatchIndex(c, -1) {
			a, b := c[m[2]:m[3]], c[m[4]:m[5]]
			if a == b || a == "self" || a == "this" {
				continue
			}
			add("swap", m[0], m[1], "("+b+", "+a+")", fmt.Sprintf("arguments `%s, %s` swapped", a, b))
		}
		if depth[i] == 0 && depth[i+1] == 0 && !continues(code, i) && droppable(lines, i, trim, lang) {
			indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
			repl := indent // C-like: an empty line; Python needs a statement
			if lang == LangPython {
				repl = indent + "pass"
			}
			out = append(out, Mutation{Line: i + 1, Kind: "drop", Before: line, After: repl, Desc: "line dropped"})
		}
	}
	return out
}

func isIdent(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// continues reports whether the code line before line i leaves its
// statement open (a trailing operator, comma, backslash or keyword), so
// line i is its continuation.
func continues(code []string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		p := strings.TrimSpace(code[j])
		if p == "" {
			continue
		}
		for _, end := range []string{"\\", ",", "+", "-", "*", "/", "&&", "||", "=", " and", " or", " not", "?", "|", "&"} {
			if strings.HasSuffix(p, end) {
				return true
			}
		}
		return false
	}
	return false
}

// droppable says whether a line is a simple statement whose removal
// leaves the program well formed: an assignment or a call on one line,
// not a declaration, a return or a block's opening or closing line.
func droppable(lines []string, i int, trim, lang string) bool {
	if trim == "" || strings.HasSuffix(trim, "{") || strings.HasSuffix(trim, ":") || strings.HasSuffix(trim, ",") ||
		strings.HasSuffix(trim, "(") || strings.HasSuffix(trim, "[") || strings.HasPrefix(trim, "}") || strings.HasPrefix(trim, ")") {
		return false
	}
	for _, kw := range []string{"return", "def ", "class ", "func ", "var ", "let ", "const ", "if ", "else", "for ", "while ", "elif ", "try", "except", "finally", "with ", "case ", "default", "break", "continue", "yield", "raise", "throw", "fn ", "pub ", "type ", "struct ", "import", "from ", "package ", "#", "//", "/*", "*", "@", "}", "lambda"} {
		if strings.HasPrefix(trim, kw) {
			return false
		}
	}
	// The next code line must not be a continuation of this one.
	if i+1 < len(lines) {
		nt := strings.TrimSpace(lines[i+1])
		if strings.HasPrefix(nt, ".") || strings.HasPrefix(nt, "&&") || strings.HasPrefix(nt, "||") || strings.HasPrefix(nt, "+") {
			return false
		}
	}
	// Python: the only statement of a block cannot go (pass keeps it valid anyway).
	return strings.Contains(trim, "=") && !strings.Contains(trim, "==") || strings.HasSuffix(trim, ")") || strings.HasSuffix(trim, ");")
}

// codeMask returns each line with comments and string literals blanked
// (replaced by spaces), so patterns match code only. It is a lexer for
// finding mutation sites, not a parser: on doubt it blanks more.
func codeMask(lines []string, lang string) []string {
	out := make([]string, len(lines))
	inBlock := false    // C block comment
	inTriple := ""      // Python triple-quoted string delimiter
	inTemplate := false // JS template literal / Go raw string
	for i, line := range lines {
		b := []byte(line)
		j := 0
		for j < len(b) {
			switch {
			case inBlock:
				if j+1 < len(b) && b[j] == '*' && b[j+1] == '/' {
					b[j], b[j+1] = ' ', ' '
					j += 2
					inBlock = false
					continue
				}
				b[j] = ' '
				j++
			case inTriple != "":
				if strings.HasPrefix(string(b[j:]), inTriple) {
					for k := 0; k < 3; k++ {
						b[j+k] = ' '
					}
					j += 3
					inTriple = ""
					continue
				}
				b[j] = ' '
				j++
			case inTemplate:
				if b[j] == '`' {
					inTemplate = false
				}
				b[j] = ' '
				j++
			default:
				c := b[j]
				if lang == LangC && c == '/' && j+1 < len(b) && b[j+1] == '/' || lang == LangPython && c == '#' {
					for k := j; k < len(b); k++ {
						b[k] = ' '
					}
					j = len(b)
					continue
				}
				if lang == LangC && c == '/' && j+1 < len(b) && b[j+1] == '*' {
					b[j], b[j+1] = ' ', ' '
					j += 2
					inBlock = true
					continue
				}
				if lang == LangPython && (strings.HasPrefix(string(b[j:]), `"""`) || strings.HasPrefix(string(b[j:]), `'''`)) {
					inTriple = string(b[j : j+3])
					for k := 0; k < 3; k++ {
						b[j+k] = ' '
					}
					j += 3
					continue
				}
				if lang == LangC && c == '`' {
					inTemplate = true
					b[j] = ' '
					j++
					continue
				}
				if c == '"' || c == '\'' {
					// Rust lifetimes and char literals: a lone quote
					// blanks the rest of the line, which only loses sites.
					q := c
					b[j] = ' '
					j++
					for j < len(b) && b[j] != q {
						if b[j] == '\\' && j+1 < len(b) {
							b[j] = ' '
							j++
						}
						b[j] = ' '
						j++
					}
					if j < len(b) {
						b[j] = ' '
						j++
					}
					continue
				}
				j++
			}
		}
		out[i] = string(b)
	}
	return out
}
