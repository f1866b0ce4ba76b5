package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// vetFault is one vet-detectable fault put into a real source file: the
// file, the 1-based line vet must report (in the edited file) and the
// analyzer that reports it.
type vetFault struct {
	file, kind string
	line       int
}

var (
	rePrintfCall = regexp.MustCompile(`\bfmt\.(Sprintf|Errorf|Printf|Fprintf\(\w+,) ?\(?"`)
	reTag        = regexp.MustCompile("`(json|yaml|toml|form|xml):\"[A-Za-z_]")
	reSimpleLHS  = regexp.MustCompile(`^\s*([a-z][A-Za-z0-9_]*) :?= `)
	// The messages of the analyzers the faults trigger.
	reVetMsg = regexp.MustCompile(`: (unreachable code|self-assignment of |struct field tag |result of \S+ call not used|\S+ format %.* reads arg #)`)
)

// injectVet puts one fault of a random applicable kind into src (the file
// rel) and returns the new source; ok is false when no kind applies.
func injectVet(r *rand.Rand, src, rel string) (string, vetFault, bool) {
	lines := strings.Split(src, "\n")
	var stmts []int // simple statements: safe anchors inside function bodies
	for _, m := range family.Candidates(src, family.LangC) {
		if m.Kind == "drop" {
			stmts = append(stmts, m.Line-1)
		}
	}
	indent := func(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " \t"))] }
	insert := func(at int, s string) string {
		out := append(append(append([]string{}, lines[:at]...), s), lines[at:]...)
		return strings.Join(out, "\n")
	}
	imports := func(pkg string) bool {
		return strings.Contains(src, "\t\""+pkg+"\"\n") || strings.Contains(src, "import \""+pkg+"\"")
	}
	kinds := []string{"printf", "unreachable", "selfassign", "structtag", "unusedresult"}
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for _, k := range kinds {
		switch k {
		case "printf":
			var at []int
			for i, l := range lines {
				if m := rePrintfCall.FindStringIndex(l); m != nil && !strings.HasPrefix(strings.TrimSpace(l), "//") {
					at = append(at, i)
				}
			}
			if len(at) == 0 {
				continue
			}
			i := family.Pick(r, at)
			l := lines[i]
			m := rePrintfCall.FindStringIndex(l)
			// The format literal's closing quote: the first unescaped '"'
			// after the opening one.
			j := m[1]
			for j < len(l) && l[j] != '"' {
				if l[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(l) {
				continue
			}
			lines[i] = l[:j] + family.Pick(r, []string{" %d", ": %s", " (%v)", " %q"}) + l[j:]
			return strings.Join(lines, "\n"), vetFault{rel, k, i + 1}, true
		case "unreachable":
			if len(stmts) == 0 {
				continue
			}
			i := family.Pick(r, stmts)
			return insert(i, indent(lines[i])+family.Pick(r, []string{`panic("unreachable")`, `panic("TODO")`, `panic("not implemented")`})), vetFault{rel, k, i + 2}, true
		case "selfassign":
			var at []int
			for _, i := range stmts {
				if m := reSimpleLHS.FindStringSubmatch(lines[i]); m != nil {
					at = append(at, i)
				}
			}
			if len(at) == 0 {
				continue
			}
			i := family.Pick(r, at)
			v := reSimpleLHS.FindStringSubmatch(lines[i])[1]
			return insert(i+1, indent(lines[i])+v+" = "+v), vetFault{rel, k, i + 2}, true
		case "structtag":
			var at []int
			for i, l := range lines {
				if reTag.MatchString(l) {
					at = append(at, i)
				}
			}
			if len(at) == 0 {
				continue
			}
			i := family.Pick(r, at)
			m := reTag.FindStringIndex(lines[i])
			l := lines[i]
			colon := strings.Index(l[m[0]:], ":") + m[0]
			if r.IntN(2) == 0 {
				lines[i] = l[:colon+1] + " " + l[colon+1:] // `json: "x"`
			} else {
				lines[i] = l[:colon] + "=" + l[colon+1:] // `json="x"`
			}
			return strings.Join(lines, "\n"), vetFault{rel, k, i + 1}, true
		case "unusedresult":
			if len(stmts) == 0 {
				continue
			}
			var call string
			switch {
			case imports("fmt"):
				call = family.Pick(r, []string{`fmt.Sprintf("%d", 0)`, `fmt.Sprint("debug")`, `fmt.Errorf("not reached")`})
			case imports("errors"):
				call = `errors.New("unexpected")`
			case imports("strings"):
				call = family.Pick(r, []string{`strings.TrimSpace(" x ")`, `strings.ToLower("X")`})
			default:
				continue
			}
			i := family.Pick(r, stmts)
			return insert(i, indent(lines[i])+call), vetFault{rel, k, i + 1}, true
		}
	}
	return src, vetFault{}, false
}

var (
	qVetAll = []string{
		"What does go vet report?",
		"Why does go vet fail?",
		"which vet warnings do I need to fix?",
		"List the vet findings with file and line.",
		"What problems did vet find?",
		"go vet exits non-zero — what's the complaint?",
		"Show the vet diagnostics.",
		"Which packages have vet issues, and what are they?",
		"what did the static checks flag?",
		"Is vet clean? If not, where are the problems?",
		"Which lines does vet flag in {pkg}?",
	}
	qVetKind = map[string][]string{
		"printf": {
			"Is there a format string mismatch somewhere?",
			"Which Sprintf/Errorf call has the wrong number of arguments?",
			"where does vet see a printf verb without an argument?",
			"Which format string reads more args than it gets?",
			"Find the printf-style call vet complains about.",
			"what's wrong with the format string in {file}?",
			"Which fmt call does vet flag?",
			"Where's the bad format verb?",
			"Does vet complain about a printf format? Where?",
			"Which line has the formatting bug vet found?",
		},
		"unreachable": {
			"Where is the unreachable code?",
			"Which line does vet say can never run?",
			"vet says some code is unreachable — where?",
			"Find the dead code vet reports.",
			"which statement is unreachable, in which file?",
			"Where did I leave code after a panic?",
			"Is there unreachable code in {file}?",
			"What line is dead according to vet?",
			"Which code after a terminating statement does vet flag?",
			"show the unreachable-code warning",
		},
		"selfassign": {
			"Where is a variable assigned to itself?",
			"Which line has a self-assignment?",
			"vet flags an x = x somewhere — where?",
			"Find the useless self-assignment.",
			"Which variable gets assigned to itself, and where?",
			"Is there a self-assignment in {file}?",
			"where is the no-op assignment vet reports?",
			"Show the self-assignment warning.",
			"What assignment does vet consider pointless?",
			"Which line assigns a variable to itself in {pkg}?",
		},
		"structtag": {
			"Which struct tag is malformed?",
			"Where is the bad struct tag?",
			"vet complains about a struct field tag — which one?",
			"Find the struct tag that reflect can't parse.",
			"Which field's tag has bad syntax?",
			"Is there a broken json/yaml tag in {file}?",
			"where's the struct tag problem?",
			"Show the structtag finding.",
			"Which tag would StructTag.Get fail on?",
			"What's wrong with the tags in {file}?",
		},
		"unusedresult": {
			"Which call's result is thrown away?",
			"Where is a function result not used?",
			"vet says a result is unused — where?",
			"Find the call whose return value is ignored.",
			"Which Sprintf or errors.New result is discarded?",
			"Is there an ignored result in {file}?",
			"where's the unusedresult warning?",
			"Show the call vet says has no effect.",
			"Which line computes a value and drops it?",
			"What result is unused according to vet?",
		},
	}
)

func genGoVet(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	w := pickWork(r)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.prepare(); err != nil {
		return nil, err
	}
	// Two to four faults, each in its own file.
	nf := 2 + r.IntN(3)
	var faults []vetFault
	restore := map[string][]byte{}
	defer func() {
		for f, b := range restore {
			os.WriteFile(f, b, 0o644)
		}
	}()
	for t := 0; t < 4*nf && len(faults) < nf; t++ {
		p := family.Pick(r, w.pkgs)
		rel := family.Pick(r, p.files)
		full := filepath.Join(w.root, rel)
		if _, done := restore[full]; done {
			continue
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, err
		}
		src, f, ok := injectVet(r, string(b), rel)
		if !ok {
			continue
		}
		restore[full] = b
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			return nil, err
		}
		faults = append(faults, f)
	}
	if len(faults) == 0 {
		return nil, fmt.Errorf("no vet fault applies")
	}
	args := []string{"vet", "./..."}
	out, rc, err := goCmd(w.root, args...)
	if err != nil {
		return nil, err
	}
	if rc == 0 {
		return nil, fmt.Errorf("vet passed")
	}
	out = scrub(out, w.root)
	lines := family.SplitLines(out)
	if len(lines) > 3000 {
		return nil, fmt.Errorf("output of %d lines", len(lines))
	}
	diags := parseVet(lines)
	// Every diagnostic must be one we injected, and every fault reported:
	// a compile error or a pre-existing finding drops the scenario.
	byFault := map[int][]int{}
	for _, d := range diags {
		k := -1
		for fi, f := range faults {
			if strings.HasSuffix("/"+f.file, "/"+d.file) && d.at == f.line {
				k = fi
			}
		}
		// A type error at the injected line (an insertion that landed in
		// a const block, say) is not the vet finding we constructed.
		if k < 0 || !reVetMsg.MatchString(lines[d.line-1]) {
			return nil, fmt.Errorf("unexpected diagnostic %q", lines[d.line-1])
		}
		byFault[k] = append(byFault[k], d.line)
		// Older go vet heads a package's findings with "# pkg" (and
		// "# [pkg]" for its test variant): the header belongs to them.
		if d.header > 0 {
			byFault[k] = append(byFault[k], d.header)
			if d.header > 1 && strings.HasPrefix(lines[d.header-2], "# ") {
				byFault[k] = append(byFault[k], d.header-1)
			}
		}
	}
	// A fault vet does not report (its file is not built, say) is no
	// label: only the reported ones are asked about.
	var kept []vetFault
	var keptDiags [][]int
	for fi, f := range faults {
		if len(byFault[fi]) > 0 {
			kept = append(kept, f)
			keptDiags = append(keptDiags, byFault[fi])
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("none of %d faults reported", len(faults))
	}
	faults = kept
	for fi := range faults {
		byFault[fi] = keptDiags[fi]
	}
	var qs []family.Question
	var all []int
	for fi := range faults {
		all = append(all, byFault[fi]...)
	}
	pkgOf := func(f vetFault) string {
		d := path.Dir(f.file)
		if d == "." {
			return w.path
		}
		return w.path + "/" + d
	}
	qs = append(qs, family.Question{Query: ask(r, qVetAll, "pkg", pkgOf(faults[0])), Gold: family.UniqSorted(all)})
	// One question per analyzer, over all its findings: "where is the
	// unreachable code" has every unreachable line as its answer.
	byKind := map[string][]int{}
	var kinds []string
	first := map[string]vetFault{}
	count := map[string]int{}
	for _, fi := range r.Perm(len(faults)) {
		f := faults[fi]
		if _, ok := byKind[f.kind]; !ok {
			kinds = append(kinds, f.kind)
			first[f.kind] = f
		}
		byKind[f.kind] = append(byKind[f.kind], byFault[fi]...)
		count[f.kind]++
	}
	for _, k := range kinds {
		f := first[k]
		tmpl := qVetKind[k]
		if count[k] > 1 || strings.Count(out, f.file+":") > 1 {
			// Several findings of the kind: no template naming one file.
			var general []string
			for _, q := range tmpl {
				if !strings.Contains(q, "{file}") {
					general = append(general, q)
				}
			}
			tmpl = general
		}
		qs = append(qs, family.Question{Query: ask(r, tmpl, "file", path.Base(f.file), "pkg", pkgOf(f)), Gold: family.UniqSorted(byKind[k])})
	}
	return &family.Scenario{
		Name: fmt.Sprintf("%s-%d", w.dir, idx), Path: family.Pick(r, []string{"vet.txt", "go_vet.log", "vet_output.txt", "lint.log"}),
		Runner: "go vet ./...", Source: w.path + "@" + w.version, Text: out, Qs: qs,
	}, nil
}

// parseVet reads go vet's diagnostics `file.go:L:C: msg` (with the
// `# pkg` header above them when the go version prints one).
func parseVet(lines []string) []diag {
	var out []diag
	header := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "# ") {
			header = i + 1
			continue
		}
		m := reDiag.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var ln int
		fmt.Sscan(m[2], &ln)
		out = append(out, diag{line: i + 1, header: header, file: strings.TrimPrefix(m[1], "./"), at: ln})
	}
	return out
}
