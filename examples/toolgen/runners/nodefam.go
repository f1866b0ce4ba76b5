package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// jsTest is one test written into a test file.
type jsTest struct {
	name   string
	file   string // relative path of the test file
	line   int    // 1-based line of the test() / it() call
	fail   bool
	kind   string // "assert", "typeerror", "enoent", "timeout", "throw"
	fnName string
	gold   []int
}

var caseDescs = []string{"handles", "works for", "returns the right value for", "computes", "covers", "checks"}

func genNode(r *rand.Rand, idx int, dir string) (*scenario, error) {
	d := pickDomain(r)
	nm := newNamer(r)
	spec := r.IntN(3) == 0 // spec reporter, else TAP
	nfiles := 1 + r.IntN(3)
	var tests []*jsTest
	lib := map[string][]string{} // lib file -> lines
	type mod struct {
		libRel  string
		testRel string
		exports []string
		body    []string // test body lines (after header)
	}
	var mods []*mod
	var extraKinds []string
	for _, k := range []string{"typeerror", "enoent", "timeout", "throw"} {
		if r.IntN(3) == 0 {
			extraKinds = append(extraKinds, k)
		}
	}
	for i := 0; i < nfiles; i++ {
		base := nm.fresh(func() string { return family.Pick(r, d.nouns) })
		m := &mod{libRel: "lib/" + base + ".js", testRel: "test/" + base + ".test.js"}
		mods = append(mods, m)
		var ll []string
		ll = append(ll, "'use strict';", "", "const fs = require('node:fs');", "const path = require('node:path');", "")
		// pure functions
		nfn := 1 + r.IntN(3)
		var specs []fnSpec
		for j := 0; j < nfn; j++ {
			specs = append(specs, catalog[r.IntN(len(catalog))])
		}
		var body []string
		for _, fs := range specs {
			fn := nm.fresh(func() string { return camel(false, fs.base, capitalize(family.Pick(r, d.nouns))) })
			bug := r.IntN(5) < 3
			b := 0
			if bug {
				b = 1
			}
			ll = append(ll, fmt.Sprintf("function %s(%s) {", fn, fs.params))
			ll = append(ll, strings.Split(fs.js[b], "\n")...)
			ll = append(ll, "}", "")
			m.exports = append(m.exports, fn)
			body = append(body, "", fmt.Sprintf("describe('%s', () => {", fn))
			ncase := 2 + r.IntN(6)
			seen := map[string]bool{}
			for c := 0; c < ncase; c++ {
				a := fs.gen(r)
				args, _ := fs.args(a)
				if seen[args] {
					continue
				}
				seen[args] = true
				want, got := fs.eval(false, a), fs.eval(bug, a)
				name := fmt.Sprintf("%s %s(%s)", family.Pick(r, caseDescs), fn, args)
				t := &jsTest{name: name, file: m.testRel, fail: want != got, kind: "assert", fnName: fn}
				tests = append(tests, t)
				body = append(body, fmt.Sprintf("  it('%s', () => {", name), fmt.Sprintf("    assert.strictEqual(%s(%s), %d);", fn, args, want), "  });")
				t.line = -len(body) + 2 // placeholder: offset from end, fixed below
			}
			body = append(body, "});")
		}
		// extra failure kinds go into the first module
		if i == 0 {
			for _, k := range extraKinds {
				n, f := family.Pick(r, d.nouns), family.Pick(r, d.fields)
				switch k {
				case "typeerror":
					fn := nm.fresh(func() string { return camel(false, "describe", capitalize(n)) })
					ll = append(ll, fmt.Sprintf("function %s(record) {", fn), fmt.Sprintf("  const label = record.meta.%s.trim();", f), fmt.Sprintf("  return `${record.id}: ${label}`;"), "}", "")
					m.exports = append(m.exports, fn)
					name := fmt.Sprintf("%s formats a %s without metadata", fn, n)
					body = append(body, "", fmt.Sprintf("test('%s', () => {", name), fmt.Sprintf("  assert.strictEqual(%s({ id: 7 }), '7: unknown');", fn), "});")
					tests = append(tests, &jsTest{name: name, file: m.testRel, fail: true, kind: k, fnName: fn, line: -len(body) + 2})
				case "enoent":
					fn := nm.fresh(func() string { return camel(false, "load", capitalize(n), "Fixture") })
					ll = append(ll, fmt.Sprintf("function %s(name) {", fn), "  const file = path.join(__dirname, '..', 'test', 'fixtures', name);", "  return JSON.parse(fs.readFileSync(file, 'utf8'));", "}", "")
					m.exports = append(m.exports, fn)
					name := fmt.Sprintf("loads the %s fixture", n)
					body = append(body, "", fmt.Sprintf("test('%s', () => {", name), fmt.Sprintf("  const data = %s('%s-%s.json');", fn, n, f), "  assert.ok(Array.isArray(data));", "});")
					tests = append(tests, &jsTest{name: name, file: m.testRel, fail: true, kind: k, fnName: fn, line: -len(body) + 3})
				case "timeout":
					fn := nm.fresh(func() string { return camel(false, "wait", "For", capitalize(n)) })
					ll = append(ll, fmt.Sprintf("function %s(ms) {", fn), "  return new Promise((resolve) => setTimeout(() => resolve(true), ms));", "}", "")
					m.exports = append(m.exports, fn)
					to := family.Pick(r, []int{20, 50, 100})
					name := fmt.Sprintf("%s settles quickly", fn)
					body = append(body, "", fmt.Sprintf("test('%s', { timeout: %d }, async () => {", name, to), fmt.Sprintf("  assert.strictEqual(await %s(%d), true);", fn, to*4), "});")
					tests = append(tests, &jsTest{name: name, file: m.testRel, fail: true, kind: k, fnName: fn, line: -len(body) + 2})
				case "throw":
					fn := nm.fresh(func() string { return camel(false, "parse", capitalize(n), "Id") })
					ll = append(ll, fmt.Sprintf("function %s(raw) {", fn), "  const m = /^[a-z]+-(\\d{3})$/.exec(raw);", "  if (!m) {", fmt.Sprintf("    throw new Error(`invalid %s id: \"${raw}\"`);", n), "  }", "  return Number(m[1]);", "}", "")
					m.exports = append(m.exports, fn)
					name := fmt.Sprintf("parses long %s ids", n)
					body = append(body, "", fmt.Sprintf("test('%s', () => {", name), fmt.Sprintf("  assert.strictEqual(%s('%s-12345'), 12345);", fn, n[:min(3, len(n))]), "});")
					tests = append(tests, &jsTest{name: name, file: m.testRel, fail: true, kind: k, fnName: fn, line: -len(body) + 2})
				}
			}
		}
		ll = append(ll, fmt.Sprintf("module.exports = { %s };", strings.Join(m.exports, ", ")))
		lib[m.libRel] = ll
		header := []string{"'use strict';", "", "const { test, describe, it } = require('node:test');", "const assert = require('node:assert');", fmt.Sprintf("const { %s } = require('../%s');", strings.Join(m.exports, ", "), strings.TrimSuffix(m.libRel, ".js"))}
		m.body = append(header, body...)
		// fix up test lines: placeholders are negative offsets from the body end at insertion time
		for _, t := range tests {
			if t.file == m.testRel && t.line <= 0 {
				// t.line = -(len(body) at insertion) + k  => index in body = len - 1 - (k-1)... recompute
			}
		}
	}
	// recompute test lines by searching the written test files for the test's title
	for _, m := range mods {
		for i, l := range m.body {
			for _, t := range tests {
				if t.file == m.testRel && (strings.Contains(l, "it('"+t.name+"'") || strings.Contains(l, "test('"+t.name+"'")) {
					t.line = i + 1
				}
			}
		}
		if err := writeFile(dir, m.testRel, strings.Join(m.body, "\n")+"\n"); err != nil {
			return nil, err
		}
		if err := writeFile(dir, m.libRel, strings.Join(lib[m.libRel], "\n")+"\n"); err != nil {
			return nil, err
		}
	}
	_ = writeFile(dir, "package.json", fmt.Sprintf("{\n  \"name\": \"%s\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"scripts\": { \"test\": \"node --test\" }\n}\n", d.project))
	nfail := 0
	for _, t := range tests {
		if t.fail {
			nfail++
		}
	}
	args := []string{"--test", "--test-reporter=tap"}
	if spec {
		args = []string{"--test", "--test-reporter=spec"}
	}
	out := runCmd(dir, []string{"NO_COLOR=1", "FORCE_COLOR=0"}, "node", args...)
	text := family.Clean(out, dir)
	ls := family.SplitLines(text)
	// check the fail count
	failRe := regexp.MustCompile(`^(?:# |ℹ )fail (\d+)$`)
	okCount := false
	for _, l := range ls {
		if m := failRe.FindStringSubmatch(l); m != nil {
			okCount = m[1] == fmt.Sprint(nfail)
		}
	}
	if !okCount {
		return nil, fmt.Errorf("fail count mismatch (want %d)", nfail)
	}
	for _, t := range tests {
		if !t.fail {
			continue
		}
		loc := fmt.Sprintf("%s:%d:", t.file, t.line)
		if spec {
			t.gold = specBlock(ls, loc)
		} else {
			t.gold = tapBlock(ls, loc)
		}
		if len(t.gold) == 0 {
			return nil, fmt.Errorf("no block for %s", loc)
		}
	}
	if len(ls) > 900 {
		return nil, fmt.Errorf("output too long")
	}
	var qs []question
	all := func(sel func(t *jsTest) bool) []int {
		var g []int
		for _, t := range tests {
			if t.fail && sel(t) {
				g = append(g, t.gold...)
			}
		}
		return g
	}
	if nfail > 0 && nfail <= 6 {
		qs = append(qs, question{family.Pick(r, []string{"Summarise every red case in this run with its message.", "Each failing spec here: name and diagnostic, please.", "Enumerate the not-ok entries together with their error output.", "Point me at all failures in this run and what they printed."}), all(func(*jsTest) bool { return true })})
	}
	for _, m := range mods {
		g := all(func(t *jsTest) bool { return t.file == m.testRel })
		if len(g) > 0 {
			qs = append(qs, question{fill(family.Pick(r, []string{"Show the broken cases from {f} along with the assertion output.", "What goes red in {f}?"}), "f", m.testRel), g})
		}
	}
	byFn := map[string][]*jsTest{}
	for _, t := range tests {
		if t.fail {
			byFn[t.fnName] = append(byFn[t.fnName], t)
		}
	}
	for _, fn := range sortedKeys(byFn) {
		ts := byFn[fn]
		fs := ts[0]
		var g []int
		for _, t := range ts {
			g = append(g, t.gold...)
		}
		switch fs.kind {
		case "assert":
			var spec fnSpec
			_ = spec
			qs = append(qs, question{ask(r, []string{"What values does {fn} return in the failing tests, versus what was expected?", "Why do the {fn} tests fail?"}, []string{"The function that {d} gives wrong answers in some tests — for which inputs, and what did it return instead?"}, "fn", fn, "d", descOf(fn)), g})
		case "typeerror":
			qs = append(qs, question{ask(r, []string{"{fn} throws instead of returning a label. What is the error and where in the library is it raised?"}, []string{"One test crashes reading a property of undefined. Which test, and at which line of the library?", "Which test fails with a TypeError, and what property was being read?"}, "fn", fn), g})
		case "enoent":
			qs = append(qs, question{ask(r, []string{"Why does the {fn} test fail?"}, []string{"A case breaks with ENOENT — name it and the fixture location it wanted.", "Which spec trips over an absent data file on disk, and what filename did it look for?"}, "fn", fn), g})
		case "timeout":
			qs = append(qs, question{ask(r, []string{"Why does the {fn} test fail?"}, []string{"Did any test time out? Which one, and what was its limit?", "Which async test never finishes in time?"}, "fn", fn), g})
		case "throw":
			qs = append(qs, question{ask(r, []string{"What does {fn} throw in the failing test, and from which line?"}, []string{"A parser rejects an id in one of the tests — which test, what message, and where is it thrown?", "Which test fails because the library throws an error about an invalid id?"}, "fn", fn), g})
		}
	}
	path := "node-test.tap.txt"
	if spec {
		path = "node-test.spec.txt"
	}
	return &scenario{name: fmt.Sprintf("%s-%04d", d.project, idx), path: path, text: text, qs: chooseQs(r, qs, 30)}, nil
}

// descOf maps a generated function name back to its catalog description.
func descOf(fn string) string {
	for _, c := range catalog {
		if strings.HasPrefix(fn, c.base) {
			return c.desc
		}
	}
	return "compute its result"
}

func writeFile(dir, rel, content string) error {
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// tapBlock finds the TAP block of the test whose location contains loc and
// returns its answer lines: the "not ok" line, the error message, expected
// and actual, and the stack frames in project code.
func tapBlock(ls []string, loc string) []int {
	at := -1
	for i, l := range ls {
		if strings.Contains(l, "location: '") && strings.Contains(l, "/"+loc) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	start := -1
	for i := at; i >= 0 && i > at-6; i-- {
		if strings.Contains(ls[i], "not ok ") {
			start = i
			break
		}
	}
	if start < 0 {
		return nil
	}
	g := []int{start + 1}
	ind := len(ls[at]) - len(strings.TrimLeft(ls[at], " "))
	key := func(l string) string {
		if len(l)-len(strings.TrimLeft(l, " ")) != ind {
			return ""
		}
		t := strings.TrimSpace(l)
		if i := strings.Index(t, ":"); i > 0 {
			return t[:i]
		}
		return t
	}
	testFrame := false
	for i := at + 1; i < len(ls); i++ {
		k := key(ls[i])
		if k == "..." {
			break
		}
		switch k {
		case "error", "expected", "actual":
			g = append(g, i+1)
			for j := i + 1; j < len(ls) && key(ls[j]) == "" && strings.TrimSpace(ls[j]) != "..."; j++ {
				if strings.TrimSpace(ls[j]) != "" && j-i <= 12 {
					g = append(g, j+1)
				}
			}
		case "stack":
			for j := i + 1; j < len(ls) && key(ls[j]) == ""; j++ {
				l := ls[j]
				if strings.Contains(l, homeDir+"/lib/") {
					g = append(g, j+1)
				} else if strings.Contains(l, homeDir+"/test/") && !testFrame {
					testFrame = true
					g = append(g, j+1)
				}
			}
		}
	}
	return g
}

// specBlock finds the spec reporter's failure block "test at <loc>" and
// returns the ✖ line, message lines, project stack frames and actual/expected.
func specBlock(ls []string, loc string) []int {
	at := -1
	for i, l := range ls {
		if strings.HasPrefix(l, "test at ") && strings.Contains(l, loc) {
			at = i
		}
	}
	if at < 0 || at+1 >= len(ls) || !strings.HasPrefix(ls[at+1], "✖ ") {
		return nil
	}
	g := []int{at + 2}
	inStack, testFrame, nmsg := false, false, 0
	for i := at + 2; i < len(ls); i++ {
		l := ls[i]
		t := strings.TrimSpace(l)
		if strings.HasPrefix(l, "test at ") || strings.HasPrefix(l, "✖ ") || strings.HasPrefix(l, "ℹ ") {
			break
		}
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "at ") {
			inStack = true
			if strings.Contains(l, homeDir+"/lib/") {
				g = append(g, i+1)
			} else if strings.Contains(l, homeDir+"/test/") && !testFrame {
				testFrame = true
				g = append(g, i+1)
			}
			continue
		}
		if !inStack {
			if nmsg < 12 {
				g = append(g, i+1)
			}
			nmsg++
			continue
		}
		if strings.HasPrefix(t, "actual:") || strings.HasPrefix(t, "expected:") || strings.HasPrefix(t, "path:") {
			g = append(g, i+1)
		}
	}
	return g
}
