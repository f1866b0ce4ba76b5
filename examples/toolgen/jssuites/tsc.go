package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

const dateFns = "date-fns+date-fns"

// tsconfig is the project's src/tsconfig.json without the project
// references and declaration emit, checking only: a developer's
// type-check setup for a handful of functions.
const tsconfig = `{
  "compilerOptions": {
    "target": "ESNext",
    "lib": ["dom", "es2020", "es2018.promise", "ESNext.Intl"],
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "allowImportingTsExtensions": true,
    "skipLibCheck": true,
    "strict": true,
    "noEmit": true
  },
  "include": ["src/**/*.ts"]
}
`

var (
	reImport     = regexp.MustCompile(`(?:from|import)\s+"(\.[^"]+\.ts)"`)
	reDiagPlain  = regexp.MustCompile(`^(\S+\.ts)\((\d+),(\d+)\): error (TS\d+): `)
	reDiagPretty = regexp.MustCompile(`^(\S+\.ts):(\d+):(\d+) - error (TS\d+): `)
	reFound      = regexp.MustCompile(`^Found \d+ errors?`)
	reIdent      = regexp.MustCompile(`\b[a-z_][A-Za-z0-9_]{3,}\b`)
	reProp       = regexp.MustCompile(`[A-Za-z0-9_)?]\.([a-zA-Z_][A-Za-z0-9_]{2,})\b`)
	reCall       = regexp.MustCompile(`\b([a-zA-Z_][A-Za-z0-9_]*)\(([^()]*)\)`)
)

var tsKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`const let var return if else function typeof new number string boolean
		undefined null true false this void await async extends export import type interface keyof infer
		readonly instanceof default case break throw while for switch of in from as const continue never
		unknown any object symbol bigint declare enum implements private public protected static super try
		catch finally yield delete with constructor get set isNaN`) {
		tsKeywords[k] = true
	}
}

// dateFnsFuncs lists the function folders of src (each has index.ts).
func dateFnsFuncs(src string) []string {
	ents, _ := os.ReadDir(src)
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || n == "locale" || n == "fp" || n == "_lib" || n == "parse" || n == "format" || n == "constants" || n[0] < 'a' || n[0] > 'z' {
			continue
		}
		if _, err := os.Stat(filepath.Join(src, n, "index.ts")); err == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// closure returns the .ts files (relative to src) that roots import,
// transitively.
func closure(src string, roots []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	var visit func(rel string) error
	visit = func(rel string) error {
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			return err
		}
		out = append(out, rel)
		for _, m := range reImport.FindAllStringSubmatch(string(b), -1) {
			if err := visit(path.Clean(path.Join(path.Dir(rel), m[1]))); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := visit(r); err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// tsFault is one injected type error.
type tsFault struct {
	file   string // relative to the project, e.g. src/addDays/index.ts
	line   int
	kind   string // misspell, property, argcount, argtype, return
	before string
	after  string
	diags  []int // lines of its diagnostics in the output
}

// codeLine says whether a line is code a fault may go in (not a comment,
// an import or a type-only line).
func codeLine(t string) bool {
	if t == "" || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "import") ||
		strings.HasPrefix(t, "export") || strings.HasPrefix(t, "type ") || strings.HasPrefix(t, "interface") ||
		strings.HasPrefix(t, "}") || strings.HasPrefix(t, "case ") {
		return false
	}
	return !strings.ContainsAny(t, "`'\"")
}

// injectOne proposes a fault of a random kind on a random code line of
// src; ok is false when the kind has no site.
func injectOne(r *rand.Rand, lines []string, kind string) (line int, after string, ok bool) {
	var sites []int
	for i, l := range lines {
		if codeLine(strings.TrimSpace(l)) {
			sites = append(sites, i)
		}
	}
	r.Shuffle(len(sites), func(i, j int) { sites[i], sites[j] = sites[j], sites[i] })
	for _, i := range sites {
		l := lines[i]
		switch kind {
		case "misspell":
			var cands [][]int
			for _, m := range reIdent.FindAllStringIndex(l, -1) {
				w := l[m[0]:m[1]]
				if tsKeywords[w] || m[0] > 0 && l[m[0]-1] == '.' || m[1] < len(l) && (l[m[1]] == ':' || l[m[1]] == '?') {
					continue
				}
				cands = append(cands, m)
			}
			if len(cands) == 0 {
				continue
			}
			m := family.Pick(r, cands)
			w := l[m[0]:m[1]]
			k := 1 + r.IntN(len(w)-2)
			return i + 1, l[:m[0]] + w[:k] + w[k+1:] + l[m[1]:], true
		case "property":
			ms := reProp.FindAllStringSubmatchIndex(l, -1)
			if len(ms) == 0 {
				continue
			}
			m := family.Pick(r, ms)
			w := l[m[2]:m[3]]
			nw := w[:len(w)-1]
			if r.IntN(2) == 0 {
				nw = w + "s"
			}
			return i + 1, l[:m[2]] + nw + l[m[3]:], true
		case "argcount", "argtype":
			var cands [][]int
			for _, m := range reCall.FindAllStringSubmatchIndex(l, -1) {
				name := l[m[2]:m[3]]
				if tsKeywords[name] || name == "if" || name == "for" || name == "while" || name == "switch" || name == "catch" {
					continue
				}
				if kind == "argtype" && strings.TrimSpace(l[m[4]:m[5]]) == "" {
					continue
				}
				cands = append(cands, m)
			}
			if len(cands) == 0 {
				continue
			}
			m := family.Pick(r, cands)
			args := strings.TrimSpace(l[m[4]:m[5]])
			var parts []string
			if args != "" {
				parts = strings.Split(args, ", ")
			}
			if kind == "argtype" {
				parts[r.IntN(len(parts))] = family.Pick(r, []string{`"1"`, `"2024-01-31"`, `true`, `{}`, `[]`})
			} else if len(parts) > 0 && r.IntN(2) == 0 {
				parts = parts[:len(parts)-1]
			} else {
				parts = append(parts, family.Pick(r, []string{"0", "1", "undefined", "options"}))
			}
			return i + 1, l[:m[4]] + strings.Join(parts, ", ") + l[m[5]:], true
		case "return":
			t := strings.TrimSpace(l)
			if !strings.HasPrefix(t, "return ") || !strings.HasSuffix(t, ";") {
				continue
			}
			expr := strings.TrimSuffix(strings.TrimPrefix(t, "return "), ";")
			ind := l[:len(l)-len(strings.TrimLeft(l, " "))]
			repl := family.Pick(r, []string{"String(" + expr + ")", `"` + "invalid" + `"`, "null", "[" + expr + "]"})
			return i + 1, ind + "return " + repl + ";", true
		}
	}
	return 0, "", false
}

// tsDiag is one diagnostic in tsc's output.
type tsDiag struct {
	file  string
	line  int
	code  string
	lines []int // header and continuation lines (message chain, code frame, related info)
}

// parseTsc reads tsc's plain (file(l,c): error) or pretty (file:l:c -
// error) diagnostics with their continuation lines, and the Found line.
func parseTsc(out string) (diags []tsDiag, found int) {
	lines := family.SplitLines(out)
	var cur *tsDiag
	flush := func() {
		if cur != nil {
			diags = append(diags, *cur)
		}
		cur = nil
	}
	for i, l := range lines {
		m := reDiagPlain.FindStringSubmatch(l)
		if m == nil {
			m = reDiagPretty.FindStringSubmatch(l)
		}
		switch {
		case m != nil:
			flush()
			ln, _ := strconv.Atoi(m[2])
			cur = &tsDiag{file: m[1], line: ln, code: m[4], lines: []int{i + 1}}
		case reFound.MatchString(l):
			flush()
			found = i + 1
		case cur != nil && strings.TrimSpace(l) == "":
		case cur != nil && strings.HasPrefix(l, " "):
			cur.lines = append(cur.lines, i+1)
		case cur != nil && len(l) > 0 && l[0] >= '0' && l[0] <= '9':
			// Pretty output's code frame: "47   code" with no indent.
			cur.lines = append(cur.lines, i+1)
		default:
			flush()
		}
	}
	flush()
	return diags, found
}

var tscKinds = []string{"misspell", "property", "argcount", "argtype", "return"}

func (e *env) genTsc(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	srcRoot := filepath.Join(e.repos, dateFns, "src")
	funcs := dateFnsFuncs(srcRoot)
	if len(funcs) == 0 {
		return nil, fmt.Errorf("no date-fns checkout under %s", e.repos)
	}
	var roots []string
	for k := 1 + r.IntN(3); k > 0; k-- {
		roots = append(roots, family.Pick(r, funcs)+"/index.ts")
	}
	roots = uniq(roots)
	files, err := closure(srcRoot, roots)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(srcRoot, f))
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, "src", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte(tsconfig), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"date-fns","private":true,"type":"module"}`+"\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.Symlink(filepath.Join(e.tools, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		return nil, err
	}
	// Faults go in the chosen functions (mostly) or a helper they import,
	// at most one per file so that every diagnostic has one cause.
	var faults []*tsFault
	used := map[string]bool{}
	for k := 1 + r.IntN(4); k > 0; k-- {
		f := family.Pick(r, roots)
		if r.IntN(4) == 0 {
			f = family.Pick(r, files)
		}
		if used[f] {
			continue
		}
		rel := "src/" + f
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(b), "\n")
		kind := family.Pick(r, tscKinds)
		ln, after, ok := injectOne(r, lines, kind)
		if !ok {
			continue
		}
		used[f] = true
		faults = append(faults, &tsFault{file: rel, line: ln, kind: kind, before: lines[ln-1], after: after})
		lines[ln-1] = after
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			return nil, err
		}
	}
	if len(faults) == 0 {
		return nil, fmt.Errorf("no fault site")
	}
	// Plain and pretty output about equally; the statistics and file
	// listings (flags developers reach for when a check is slow or picks
	// up the wrong files) give longer outputs and non-failure questions.
	cmd := family.Pick(r, []string{"npx tsc --noEmit", "npx tsc", "npx tsc -p tsconfig.json", "npx tsc -p . --noEmit",
		"npx tsc --noEmit --pretty", "npx tsc --pretty", "npx tsc --pretty -p tsconfig.json",
		"npx tsc --noEmit --extendedDiagnostics", "npx tsc --diagnostics", "npx tsc --noEmit --listFiles",
		"npx tsc --listFiles --pretty", "npx tsc --noEmit --listFiles"})
	// Run, then revert the faults tsc did not flag and run again, so every
	// fault left in the shown run has its diagnostic.
	var out string
	var diags []tsDiag
	var found int
	for pass := 0; pass < 2; pass++ {
		out, _, err = e.run(dir, strings.TrimPrefix(cmd, "npx "))
		if err != nil {
			return nil, err
		}
		out = strings.ReplaceAll(out, relTools(dir, e.tools), "node_modules/")
		diags, found = parseTsc(out)
		var kept []*tsFault
		for _, f := range faults {
			f.diags = nil
			for _, d := range diags {
				if d.file == f.file && d.line == f.line {
					f.diags = append(f.diags, d.lines...)
				}
			}
			if len(f.diags) > 0 {
				kept = append(kept, f)
				continue
			}
			b, _ := os.ReadFile(filepath.Join(dir, f.file))
			ls := strings.Split(string(b), "\n")
			ls[f.line-1] = f.before
			os.WriteFile(filepath.Join(dir, f.file), []byte(strings.Join(ls, "\n")), 0o644)
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("no fault gave a diagnostic")
		}
		done := len(kept) == len(faults)
		faults = kept
		if done {
			break
		}
		if pass == 1 {
			return nil, fmt.Errorf("faults changed between runs")
		}
	}
	// Every diagnostic must come from a fault: one elsewhere would be a
	// cause the labels do not know.
	for _, d := range diags {
		ok := false
		for _, f := range faults {
			ok = ok || d.file == f.file && d.line == f.line
		}
		if !ok {
			return nil, fmt.Errorf("unexpected diagnostic %s:%d %s", d.file, d.line, d.code)
		}
	}
	if err := checkOut(out); err != nil {
		return nil, err
	}
	qs := tscQuestions(r, out, faults, diags, found)
	return &family.Scenario{Name: fmt.Sprintf("date-fns-%d", idx), Path: "tsc_output.txt", Runner: cmd,
		Source: source(dateFns), Text: out, Qs: qs}, nil
}

// relTools is how tsc writes the tools' node_modules relative to the
// project (the default library's path in related information).
func relTools(dir, tools string) string {
	rel, err := filepath.Rel(dir, filepath.Join(tools, "node_modules"))
	if err != nil {
		return filepath.Join(tools, "node_modules") + "/"
	}
	return rel + "/"
}

var qTscAll = []string{
	"Why does the type check fail?",
	"What errors does tsc report?",
	"List the type errors.",
	"why won't this compile",
	"What does tsc complain about?",
	"Show me the TypeScript errors.",
	"which lines fail type checking?",
	"What do I need to fix to get tsc passing?",
	"What's breaking the build?",
	"Where are the compile errors?",
	"tsc exits non-zero — what are the diagnostics?",
}

var qTscFile = []string{
	"What's wrong in %s?",
	"Which error does tsc report for %s?",
	"tsc fails on %s — what's the error?",
	"show me the diagnostics for %s",
	"What type error is there in %s?",
}

var qTscFunc = []string{
	"Why is %s failing to type-check?",
	"What's the compile error in %s?",
	"I edited %s and now tsc complains. What's wrong?",
	"what does the compiler say about %s",
}

var qTscKind = map[string][]string{
	"misspell": {"Which name can't be found?", "Did I misspell a variable somewhere?", "where is the undefined identifier?", "which identifier does tsc not recognise?"},
	"property": {"Which property doesn't exist on the type?", "where am I calling a method that doesn't exist?", "Is there a typo in a property or method name?"},
	"argcount": {"Where is a function called with the wrong number of arguments?", "which call has too many or too few arguments?", "Did I drop or add an argument somewhere?"},
	"argtype":  {"Which argument has the wrong type?", "where do I pass a value of the wrong type?", "Which call gets an argument it can't accept?"},
	"return":   {"Which function returns the wrong type?", "where is the return type mismatch?", "What's wrong with the returned value?"},
}

var qTscCode = []string{"Where does %s come from?", "Show me the %s error.", "what triggers %s here?"}

func tscQuestions(r *rand.Rand, out string, faults []*tsFault, diags []tsDiag, found int) []family.Question {
	var qs []family.Question
	add := func(q string, gold []int) {
		if len(gold) > 0 && len(gold) <= maxGold {
			qs = append(qs, family.Question{Query: q, Gold: family.UniqSorted(gold)})
		}
	}
	var all []int
	for _, d := range diags {
		all = append(all, d.lines...)
	}
	add(family.Pick(r, qTscAll), all)
	f := family.Pick(r, faults)
	switch r.IntN(3) {
	case 0:
		add(fmt.Sprintf(family.Pick(r, qTscFile), f.file), f.diags)
	case 1:
		fn := path.Base(path.Dir(f.file))
		add(fmt.Sprintf(family.Pick(r, qTscFunc), fn), f.diags)
	default:
		add(family.Pick(r, qTscKind[f.kind]), f.diags)
	}
	if len(faults) > 1 {
		g := family.Pick(r, faults)
		add(family.Pick(r, qTscKind[g.kind]), g.diags)
	}
	if r.IntN(3) == 0 {
		d := family.Pick(r, diags)
		var gold []int
		for _, e := range diags {
			if e.code == d.code {
				gold = append(gold, e.lines...)
			}
		}
		add(fmt.Sprintf(family.Pick(r, qTscCode), d.code), gold)
	}
	lines := family.SplitLines(out)
	if found > 0 && r.IntN(3) == 0 {
		add(family.Pick(r, []string{"How many errors did tsc find?", "how many type errors are there", "What's the error count?"}), []int{found})
	}
	stat := func(prefix string) []int {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return []int{i + 1}
			}
		}
		return nil
	}
	if g := listed(lines, faults); len(g) > 0 && r.IntN(2) == 0 {
		add(fmt.Sprintf(family.Pick(r, []string{"Is %s part of the program tsc checked?", "Does tsc pick up %s?", "was %s included in the compile?"}), faults[0].file), g)
	}
	if g := stat("Check time:"); g != nil {
		switch r.IntN(3) {
		case 0:
			add(family.Pick(r, []string{"How long did type checking take?", "what was the check time?"}), g)
		case 1:
			add(family.Pick(r, []string{"How many files did tsc load?", "how many files are in the program?"}), stat("Files:"))
		default:
			add(family.Pick(r, []string{"How much memory did tsc use?", "what's the memory usage of the compile?"}), stat("Memory used:"))
		}
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return qs
}

// listed returns, for --listFiles output, the line listing a faulty file;
// the query names it (see tscQuestions), so the gold is that line.
func listed(lines []string, faults []*tsFault) []int {
	for i, l := range lines {
		if strings.HasSuffix(l, "/"+faults[0].file) && strings.HasPrefix(l, "/") {
			return []int{i + 1}
		}
	}
	return nil
}
