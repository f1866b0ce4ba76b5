package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// bigModules get a sub-package run rather than ./... most of the time: a
// mutation in their root package reruns every dependent package.
var bigModules = map[string]bool{"gin": true, "echo": true, "zap": true, "toml": true}

func genGoTest(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	var tr *testRun
	var lines []string
	mu, args, err := runMutants(r, anyPkg(r), func(r *rand.Rand, w *work, p pkgInfo, file string) []string {
		switch {
		case !bigModules[w.dir] || r.IntN(5) == 0:
			return []string{"test", "./..."}
		case p.rel == ".":
			return []string{"test", "."}
		default:
			return []string{"test", p.rel + "/..."}
		}
	}, func(mu *mutant) error {
		lines = family.SplitLines(mu.out)
		tr = parseTestText(lines, false)
		if len(tr.fails)+len(tr.diags)+len(tr.panic) == 0 {
			return fmt.Errorf("no failure parsed (rc %d)", mu.rc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	qs := scenarioQs(r, lines, tr, mu, pkgImport(mu.w, mu.pkg), false)
	return scenario(mu, idx, "go test "+cmdline(args[1:]), qs, family.Pick(r, []string{"go_test.txt", "test_output.txt", "go-test.log", "test.log"})), nil
}

func scenario(mu *mutant, idx int, runner string, qs []family.Question, path string) *family.Scenario {
	return &family.Scenario{
		Name:   fmt.Sprintf("%s-%d", mu.w.dir, idx),
		Path:   path,
		Runner: runner,
		Source: mu.w.path + "@" + mu.w.version,
		Text:   mu.out,
		Qs:     qs,
	}
}

var reTestFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)

// testNames lists the Test functions of the package in dir.
func testNames(root, rel string) []string {
	fs, _ := filepath.Glob(filepath.Join(root, rel, "*_test.go"))
	var out []string
	for _, f := range fs {
		b, _ := os.ReadFile(f)
		for _, m := range reTestFunc.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// narrow reruns a failing package run restricted by -run to its failing
// top-level tests and a few passing ones, as a developer does to focus;
// it is used when the full output is too long, and sometimes by choice.
func narrow(r *rand.Rand, mu *mutant, tr *testRun, flagsFirst []string) error {
	top := tr.topFails()
	if len(top) == 0 || len(top) > 6 {
		return fmt.Errorf("cannot narrow %d failing tests", len(top))
	}
	names := map[string]bool{}
	for _, f := range top {
		names[f.name] = true
	}
	all := testNames(mu.w.root, mu.pkg.rel)
	for k := 0; k < 1+r.IntN(3) && len(all) > 0; k++ {
		names[family.Pick(r, all)] = true
	}
	var ns []string
	for n := range names {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	r.Shuffle(len(ns), func(i, j int) { ns[i], ns[j] = ns[j], ns[i] })
	pat := strings.Join(ns, "|")
	if len(ns) == 1 {
		pat = "^" + ns[0] + "$"
	}
	args := append(append([]string{"test"}, flagsFirst...), "-run", pat, mu.pkg.rel)
	out, rc, err := goCmd(mu.w.root, args...)
	if err != nil {
		return err
	}
	if rc == 0 {
		return fmt.Errorf("narrowed run passed")
	}
	mu.out, mu.rc, mu.args = scrub(out, mu.w.root), rc, args
	return nil
}

func vFlags(r *rand.Rand, json bool) []string {
	f := []string{"-v"}
	if json {
		f = []string{"-json"}
	}
	if r.IntN(3) == 0 {
		f = append(f, "-count=1")
	}
	if !json && r.IntN(6) == 0 {
		f = append([]string{"-count=1"}, "-v")
	}
	return f
}

func genGoTestV(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	var tr *testRun
	var lines []string
	fl := vFlags(r, false)
	mu, args, err := runMutants(r, anyPkg(r), func(r *rand.Rand, w *work, p pkgInfo, file string) []string {
		return append(append([]string{"test"}, fl...), p.rel)
	}, func(mu *mutant) error {
		lines = family.SplitLines(mu.out)
		tr = parseTestText(lines, true)
		if len(tr.fails)+len(tr.diags)+len(tr.panic) == 0 {
			return fmt.Errorf("no failure parsed (rc %d)", mu.rc)
		}
		if len(tr.diags) == 0 && (len(lines) > 1500 || r.IntN(4) == 0) {
			if err := narrow(r, mu, tr, fl); err != nil {
				return err
			}
			lines = family.SplitLines(mu.out)
			tr = parseTestText(lines, true)
			if len(tr.fails)+len(tr.panic) == 0 {
				return fmt.Errorf("no failure parsed after -run")
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	qs := scenarioQs(r, lines, tr, mu, pkgImport(mu.w, mu.pkg), true)
	return scenario(mu, idx, "go "+cmdline(args), qs, family.Pick(r, []string{"go_test_v.txt", "test_output.txt", "go-test-verbose.log", "test.log"})), nil
}

func genGoTestJSON(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	var tr *testRun
	var text []string
	var at []int
	var evs []jsonEvent
	fl := vFlags(r, true)
	parse := func(mu *mutant) {
		text, at, evs = jsonToText(family.SplitLines(mu.out))
		tr = parseTestText(text, true)
	}
	mu, args, err := runMutants(r, anyPkg(r), func(r *rand.Rand, w *work, p pkgInfo, file string) []string {
		return append(append([]string{"test"}, fl...), p.rel)
	}, func(mu *mutant) error {
		parse(mu)
		if len(tr.fails)+len(tr.diags)+len(tr.panic) == 0 {
			return fmt.Errorf("no failure parsed (rc %d)", mu.rc)
		}
		if len(tr.diags) == 0 && (len(family.SplitLines(mu.out)) > 1500 || r.IntN(3) == 0) {
			if err := narrow(r, mu, tr, fl); err != nil {
				return err
			}
			parse(mu)
			if len(tr.fails)+len(tr.panic) == 0 {
				return fmt.Errorf("no failure parsed after -run")
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tqs := scenarioQs(r, text, tr, mu, pkgImport(mu.w, mu.pkg), true)
	// Map the text gold to the JSON lines that printed it, and add the
	// "fail" action of each failing test or package named by a gold line.
	failAt := map[string]int{}
	for i, ev := range evs {
		if ev.Action == "fail" {
			failAt[ev.Test] = i + 1
		}
	}
	heads := map[int]string{}
	for _, f := range tr.fails {
		heads[f.header] = f.name
	}
	pkgFail := map[int]bool{}
	for _, p := range tr.pkgs {
		if p.status == "FAIL" {
			pkgFail[p.line] = true
		}
	}
	var qs []family.Question
	for _, q := range tqs {
		var g []int
		for _, l := range q.Gold {
			g = append(g, at[l-1])
			if n, ok := heads[l]; ok && failAt[n] > 0 {
				g = append(g, failAt[n])
			}
			if pkgFail[l] && failAt[""] > 0 {
				g = append(g, failAt[""])
			}
		}
		qs = append(qs, family.Question{Query: q.Query, Gold: family.UniqSorted(g)})
	}
	return scenario(mu, idx, "go "+cmdline(args), qs, family.Pick(r, []string{"go_test.json", "test-events.json", "test_output.jsonl", "go-test.json"})), nil
}
