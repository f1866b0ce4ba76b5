package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// inject is one checker-visible fault: a single line replaced (never
// inserted, so no other line moves and the pristine run's diagnostics
// stay comparable line for line).
type inject struct {
	line        int // 1-based
	before      string
	after       string
	kind, desc  string // "unused-import", ...; how a developer would say it
	name, typo_ string // the name involved and its misspelling, if any
}

var (
	reTopImport = regexp.MustCompile(`^(import [A-Za-z_][\w.]*|from [\w.]+ import .+)$`)
	reSimpleImp = regexp.MustCompile(`^import ([A-Za-z_]\w*)$`)
	reIdent     = regexp.MustCompile(`[A-Za-z_]\w*`)
	reAssign    = regexp.MustCompile(`^(\s{4,})([a-z_]\w*) = \S`)
	reSelfAttr  = regexp.MustCompile(`self\.([a-z_]\w{3,})\b`)
	reReturn    = regexp.MustCompile(`^(\s+)return (\S.*)$`)
)

var pyKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`False None True and as assert async await break class continue def del elif else except
		finally for from global if import in is lambda nonlocal not or pass raise return try while with yield self cls
		print len str int dict list set tuple isinstance type object super range bool float bytes repr iter next
		getattr setattr hasattr callable sorted reversed enumerate zip map filter min max sum any all abs hash id
		ValueError TypeError KeyError IndexError AttributeError StopIteration NotImplementedError RuntimeError
		Exception frozenset vars open kwargs args`) {
		pyKeywords[k] = true
	}
}

// typo misspells name by swapping two inner letters (or doubling one).
func typo(r *rand.Rand, name string) string {
	if len(name) >= 4 {
		i := 1 + r.IntN(len(name)-2)
		b := []byte(name)
		if b[i] != b[i+1] {
			b[i], b[i+1] = b[i+1], b[i]
			return string(b)
		}
	}
	i := r.IntN(len(name))
	return name[:i+1] + name[i:]
}

// afterImportsBlank is the first blank top-level line after the module's
// last top-level import (where a developer adds an import).
func afterImportsBlank(lines []string) int {
	last := -1
	for i, l := range lines {
		if reTopImport.MatchString(l) {
			last = i
			if strings.HasSuffix(l, "(") {
				for j := i; j < len(lines); j++ {
					if strings.HasPrefix(lines[j], ")") {
						last = j
						break
					}
				}
			}
		}
		if strings.HasPrefix(l, "def ") || strings.HasPrefix(l, "class ") {
			break
		}
	}
	if last < 0 {
		return -1
	}
	for j := last + 1; j < len(lines) && j < last+4; j++ {
		if lines[j] == "" {
			return j
		}
	}
	return -1
}

// pickInject chooses a fault of one of kinds in src.
func pickInject(r *rand.Rand, src string, kinds []string) (inject, bool) {
	lines := strings.Split(src, "\n")
	words := map[string]bool{}
	for _, w := range reIdent.FindAllString(src, -1) {
		words[w] = true
	}
	kind := family.Pick(r, kinds)
	switch kind {
	case "unused-import":
		k := afterImportsBlank(lines)
		var mods []string
		for _, m := range []string{"os", "sys", "re", "json", "time", "math", "copy", "string", "inspect", "warnings", "itertools", "functools", "operator", "collections", "textwrap", "typing"} {
			if !words[m] {
				mods = append(mods, m)
			}
		}
		if k < 0 || len(mods) == 0 {
			return inject{}, false
		}
		m := family.Pick(r, mods)
		return inject{line: k + 1, before: lines[k], after: "import " + m, kind: kind, name: m, desc: "added an import of " + m}, true
	case "reimport":
		k := afterImportsBlank(lines)
		var imps []string
		for _, l := range lines[:max(k, 0)] {
			if reSimpleImp.MatchString(l) {
				imps = append(imps, l)
			}
		}
		if k < 0 || len(imps) == 0 {
			return inject{}, false
		}
		l := family.Pick(r, imps)
		return inject{line: k + 1, before: lines[k], after: l, kind: kind, name: strings.TrimPrefix(l, "import "), desc: "imported " + strings.TrimPrefix(l, "import ") + " a second time"}, true
	case "typo-use", "typo-assign", "attr-typo", "wrong-return":
		var cands []inject
		inDoc := false // inside a triple-quoted string (docstrings, doctests)
		for i, l := range lines {
			tq := strings.Count(l, `"""`) + strings.Count(l, "'''")
			wasDoc := inDoc
			if tq%2 == 1 {
				inDoc = !inDoc
			}
			if wasDoc || tq > 0 {
				continue
			}
			if !strings.HasPrefix(l, "    ") || strings.ContainsAny(l, `"'#\`) || strings.HasSuffix(strings.TrimSpace(l), ",") {
				continue
			}
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "def ") || strings.HasPrefix(t, "class ") || strings.HasPrefix(t, "@") || strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "from ") {
				continue
			}
			switch kind {
			case "typo-use":
				for _, loc := range reIdent.FindAllStringIndex(l, -1) {
					w := l[loc[0]:loc[1]]
					if len(w) < 3 || pyKeywords[w] || loc[0] > 0 && l[loc[0]-1] == '.' || w[0] >= 'A' && w[0] <= 'Z' {
						continue
					}
					rest := strings.TrimLeft(l[loc[1]:], " ")
					if strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "==") || strings.HasPrefix(rest, ":") {
						continue // a binding or keyword argument, not a use
					}
					if loc[0] > 0 && (l[loc[0]-1] == '(' || l[loc[0]-1] == ',' || l[loc[0]-1] == ' ') && strings.HasPrefix(rest, "=") {
						continue
					}
					cands = append(cands, inject{line: i + 1, before: l, kind: kind, name: w, after: l[:loc[0]] + "\x00" + l[loc[1]:]})
				}
			case "typo-assign":
				if m := reAssign.FindStringSubmatch(l); m != nil && !pyKeywords[m[2]] && len(m[2]) >= 3 {
					cands = append(cands, inject{line: i + 1, before: l, kind: kind, name: m[2], after: m[1] + "\x00" + l[len(m[1])+len(m[2]):]})
				}
			case "attr-typo":
				for _, loc := range reSelfAttr.FindAllStringSubmatchIndex(l, -1) {
					cands = append(cands, inject{line: i + 1, before: l, kind: kind, name: l[loc[2]:loc[3]], after: l[:loc[2]] + "\x00" + l[loc[3]:]})
				}
			case "wrong-return":
				if m := reReturn.FindStringSubmatch(l); m != nil && m[2] != "None" && !strings.HasSuffix(m[2], "(") && !strings.HasSuffix(m[2], "[") {
					lit := family.Pick(r, []string{"0", "None", "[]", "{}", "True", "1.0"})
					if lit != m[2] {
						cands = append(cands, inject{line: i + 1, before: l, kind: kind, after: m[1] + "return " + lit, desc: "made a return give " + lit})
					}
				}
			}
		}
		if len(cands) == 0 {
			return inject{}, false
		}
		c := family.Pick(r, cands)
		if c.name != "" {
			tp := typo(r, c.name)
			if words[tp] {
				return inject{}, false
			}
			c.typo_ = tp
			c.after = strings.Replace(c.after, "\x00", tp, 1)
			c.desc = fmt.Sprintf("renamed %s to %s", c.name, tp)
		}
		return c, true
	}
	return inject{}, false
}

// baselines caches each (repo, command) run on the pristine tree: the
// checkouts are identical for every scenario.
var baselines sync.Map

func baseline(rp repo, dir string, argv []string) (string, error) {
	key := rp.name + "\x00" + strings.Join(argv, "\x00")
	if v, ok := baselines.Load(key); ok {
		return v.(string), nil
	}
	out, _, err := runTool(dir, rp, 120*time.Second, argv...)
	if err != nil {
		return "", err
	}
	baselines.Store(key, out)
	return out, nil
}

// newLines are the lines of out that the pristine run did not print, less
// the tool's summary lines.
func newLines(out, base string) []int {
	seen := map[string]int{}
	for _, l := range family.SplitLines(base) {
		seen[l]++
	}
	var g []int
	for i, l := range family.SplitLines(out) {
		if seen[l] > 0 {
			seen[l]--
			continue
		}
		if strings.HasPrefix(l, "Found ") || strings.HasPrefix(l, "Success:") || strings.TrimSpace(l) == "" {
			continue
		}
		g = append(g, i+1)
	}
	return g
}

var lintTools = map[string]struct {
	kinds []string
	pool  []string // repo names
	cmds  [][]string
}{
	"python-pyflakes": {
		kinds: []string{"unused-import", "unused-import", "typo-use", "typo-use", "typo-assign"},
		pool:  []string{"cachetools", "toolz", "boltons", "marshmallow", "more-itertools"},
		cmds: [][]string{{"pyflakes", "PKG"}, {"python3", "-m", "pyflakes", "PKG"}, {"pyflakes", "FILE"}, {"pyflakes", "."},
			{"pyflakes", "."}, {"python3", "-m", "pyflakes", "."}, {"pyflakes", "PKG", "tests"}},
	},
	"python-mypy": {
		kinds: []string{"typo-use", "attr-typo", "attr-typo", "wrong-return", "wrong-return", "typo-assign"},
		pool:  []string{"marshmallow"},
		// --check-untyped-defs checks the bodies of unannotated functions
		// too (more of marshmallow is reachable, and the pristine tree has
		// errors of its own that stay in the output as distractors).
		cmds: [][]string{{"mypy", "--check-untyped-defs", "PKG"}, {"mypy", "--check-untyped-defs", "PKG"}, {"mypy", "PKG"},
			{"mypy", "--pretty", "--check-untyped-defs", "PKG"}, {"mypy", "src", "tests"}, {"python3", "-m", "mypy", "--check-untyped-defs", "PKG"},
			{"mypy", "--show-column-numbers", "--check-untyped-defs", "PKG"}, {"mypy", "--show-error-codes", "FILE"}},
	},
}

var qLintMine = []string{
	"what does %s complain about after my edit?", "which warning did I just introduce?", "what new problem does %s report?",
	"what did my change in %s break according to %s?", "why is %s failing now?", "which diagnostic points at my edit?",
	"I %s; what does %s say about it?", "which lines of the %s output are about the line I changed?",
	"what's the error at the line I just edited?", "is there a problem with my last edit? what does the checker say?",
}

var qLintFile = []string{
	"what does %s report for %s?", "which problems are in %s?", "list the warnings in %s", "what's wrong in %s according to the linter?",
	"show all diagnostics for %s", "what issues are flagged in %s?", "which lines of %s get warnings?", "anything flagged in %s?",
}

var qLintKind = map[string][]string{
	"imported but unused":        {"which imports are unused?", "are there unused imports?", "list the unused imports", "what imports can I delete?", "which modules are imported but never used?"},
	"undefined name":             {"are there undefined names?", "which names are undefined?", "what undefined variable does pyflakes find?", "is anything used before it's defined?", "which name can't be resolved?"},
	"redefinition":               {"what's redefined?", "which import is shadowed by a later one?", "is anything imported twice?", "which redefinitions are reported?"},
	"assigned to but never used": {"which local variables are never used?", "any unused variables?", "which assignment is dead?", "what variables are assigned but not read?"},
	"is not defined":             {"which name is not defined?", "is there a NameError waiting to happen?", "what undefined name does mypy find?", "which variable doesn't exist?"},
	"has no attribute":           {"which attribute doesn't exist?", "what attribute error does mypy report?", "which attribute access is wrong?", "is there a misspelled attribute?"},
	"Incompatible return":        {"which function returns the wrong type?", "is there a return type mismatch?", "what return value does mypy reject?", "what's returned with the wrong type?"},
}

func genLint(fam string) family.Generator {
	tool := lintTools[fam]
	return func(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
		name := family.Pick(r, tool.pool)
		var rp repo
		for _, x := range repos {
			if x.name == name {
				rp = x
			}
		}
		if err := checkout(rp, dir); err != nil {
			return nil, err
		}
		files := rp.srcFiles(dir)
		cmd := family.Pick(r, tool.cmds)
		var f string
		var inj inject
		for try := 0; ; try++ {
			if try == 20 {
				return nil, fmt.Errorf("no injection site")
			}
			f = family.Pick(r, files)
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return nil, err
			}
			var ok bool
			if inj, ok = pickInject(r, string(b), tool.kinds); ok {
				break
			}
		}
		var argv, shown []string
		for _, a := range cmd {
			switch a {
			case "PKG":
				a = rp.pkg
			case "FILE":
				a = f
			}
			shown = append(shown, a)
			switch {
			case a == "python3":
				a = python
			case (a == "pyflakes" || a == "mypy") && len(argv) == 0:
				// The console script as Debian's module: same tool, same output.
				argv = append(argv, python, "-m", a)
				continue
			}
			argv = append(argv, a)
		}
		base, err := baseline(rp, dir, argv)
		if err != nil {
			return nil, err
		}
		b, _ := os.ReadFile(filepath.Join(dir, f))
		lines := strings.Split(string(b), "\n")
		lines[inj.line-1] = inj.after
		writeFile(filepath.Join(dir, f), strings.Join(lines, "\n"))
		out, _, err := runTool(dir, rp, 120*time.Second, argv...)
		if err != nil {
			return nil, err
		}
		ol := family.SplitLines(out)
		if len(ol) > 3000 {
			return nil, fmt.Errorf("output %d lines", len(ol))
		}
		fresh := newLines(out, base)
		if shown[len(shown)-1] == "." {
			f = "./" + f // pyflakes . names files from the argument
		}
		at := fmt.Sprintf("%s:%d:", f, inj.line)
		hit := false
		for _, n := range fresh {
			if strings.HasPrefix(ol[n-1], at) {
				hit = true
			}
			// Every new line must be about the edited file (a diagnostic
			// or a --pretty/note continuation), else the construction is off.
			if !strings.HasPrefix(ol[n-1], f+":") && !strings.HasPrefix(ol[n-1], " ") {
				return nil, fmt.Errorf("unexpected new line %q", ol[n-1])
			}
		}
		if !hit || len(fresh) > 12 {
			if os.Getenv("PYSUITES_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "DEBUG %q -> %q\n%s\n", inj.before, inj.after, out)
			}
			return nil, fmt.Errorf("injected %s at %s not reported as constructed (%d new lines)", inj.kind, at, len(fresh))
		}
		toolName := strings.TrimPrefix(fam, "python-")
		runner := strings.Join(shown, " ")
		sc := &family.Scenario{
			Name: fmt.Sprintf("%s-%04d", rp.name, idx), Path: family.Pick(r, []string{toolName + ".txt", toolName + ".log", "lint.log", "ci.log"}),
			Runner: runner, Source: source(rp), Text: out,
		}
		base0 := filepath.Base(f)
		var qs []family.Question
		q := family.Pick(r, qLintMine)
		switch strings.Count(q, "%s") {
		case 1:
			q = fmt.Sprintf(q, family.Pick(r, []string{toolName, base0}))
		case 2:
			if strings.HasPrefix(q, "I ") {
				q = fmt.Sprintf(q, inj.desc+" in "+base0, toolName)
			} else {
				q = fmt.Sprintf(q, base0, toolName)
			}
		}
		qs = append(qs, family.Question{Query: q, Gold: fresh})
		// All diagnostics for a file (old ones included): the edited file,
		// and sometimes another file the output reports on.
		fileDiags := func(path string) []int {
			var ff []int
			for i, l := range ol {
				if strings.HasPrefix(l, path+":") {
					ff = append(ff, i+1)
					for j := i + 1; j < len(ol) && strings.HasPrefix(ol[j], " "); j++ {
						ff = append(ff, j+1)
					}
				}
			}
			return ff
		}
		others := map[string]bool{}
		for _, l := range ol {
			if p, _, ok := strings.Cut(l, ":"); ok && strings.HasSuffix(p, ".py") && p != f {
				others[p] = true
			}
		}
		asked := []string{f}
		if len(others) > 0 && r.IntN(2) == 0 {
			var ps []string
			for p := range others {
				ps = append(ps, p)
			}
			sort.Strings(ps)
			asked = append(asked, family.Pick(r, ps))
		}
		for _, p := range asked {
			ff := fileDiags(p)
			if len(ff) == 0 || len(ff) > 20 {
				continue
			}
			q := family.Pick(r, qLintFile)
			if strings.Count(q, "%s") == 2 {
				q = fmt.Sprintf(q, toolName, family.Pick(r, []string{p, filepath.Base(p)}))
			} else {
				q = fmt.Sprintf(q, family.Pick(r, []string{p, filepath.Base(p)}))
			}
			qs = append(qs, family.Question{Query: q, Gold: ff})
		}
		// All diagnostics of one kind across the output.
		for key, tmpls := range qLintKind {
			if !strings.Contains(ol[fresh[0]-1], key) {
				continue
			}
			var kg []int
			for i, l := range ol {
				if strings.Contains(l, key) && !strings.HasPrefix(l, " ") {
					kg = append(kg, i+1)
				}
			}
			if len(kg) <= 15 {
				qs = append(qs, family.Question{Query: family.Pick(r, tmpls), Gold: kg})
			}
		}
		// The line the user names by number.
		var lg []int
		for _, n := range fresh {
			if strings.HasPrefix(ol[n-1], at) || len(lg) > 0 && strings.HasPrefix(ol[n-1], " ") {
				lg = append(lg, n)
			}
		}
		qs = append(qs, family.Question{Query: family.Pick(r, []string{
			"what's reported at %s line %d?", "what's wrong on line %[2]d of %[1]s?", "any diagnostic for %s:%d?", "why is line %[2]d of %[1]s flagged?",
		}), Gold: lg})
		qs[len(qs)-1].Query = fmtLine(qs[len(qs)-1].Query, base0, inj.line)
		if fam == "python-mypy" {
			for i, l := range ol {
				if strings.HasPrefix(l, "Found ") && r.IntN(3) == 0 {
					qs = append(qs, family.Question{Query: family.Pick(r, []string{"how many errors did mypy find?", "how many files have errors?", "what's mypy's summary?", "how many source files were checked?"}), Gold: []int{i + 1}})
				}
			}
		}
		r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
		sc.Qs = qs
		return sc, nil
	}
}

func fmtLine(q, file string, line int) string { return fmt.Sprintf(q, file, line) }

func genPyflakes(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	return genLint("python-pyflakes")(r, idx, dir)
}

func genMypy(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	return genLint("python-mypy")(r, idx, dir)
}
