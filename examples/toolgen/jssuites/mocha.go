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

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

const picomatch = "micromatch+picomatch"

// picoLib are the library files a mutation may hit (constants.js is a
// table of strings: mutations there rarely fail a test in a readable way).
var picoLib = []string{"lib/picomatch.js", "lib/parse.js", "lib/scan.js", "lib/utils.js"}

var (
	reMochaBlock = regexp.MustCompile(`^  (\d+)\) (.*)$`)
	reMochaPass  = regexp.MustCompile(`^  \d+ passing`)
	reMochaFail  = regexp.MustCompile(`^  \d+ failing`)
	reTestFile   = regexp.MustCompile(`\((test/[^):]+\.js):\d+:\d+\)`)
)

// isFrame says whether a trimmed line is a stack frame.
func isFrame(t string) bool { return strings.HasPrefix(t, "at ") }

// projectFrame says whether a stack frame is in the project's own code
// (not node internals, not node_modules).
func projectFrame(t string) bool {
	return isFrame(t) && strings.Contains(t, ".js:") && !strings.Contains(t, "node:") &&
		!strings.Contains(t, "node_modules") && !strings.Contains(t, "mocha-compat.js")
}

// classify fills a failure's frame lists from its frame line numbers.
func classify(f *failure, lines []string, frames []int, mutFile string, mutLine int) {
	for _, i := range frames {
		t := strings.TrimSpace(lines[i-1])
		f.frames = append(f.frames, i)
		if !strings.Contains(t, "test/") {
			f.libFrames = append(f.libFrames, i)
		}
		if mutFile != "" && frameAt(t, mutFile, mutLine) {
			f.mutFrames = append(f.mutFrames, i)
		}
	}
}

// parseMocha reads the failure section of mocha's spec or dot reporter:
// numbered blocks, each a header (the suite path and test title, ending in
// ':'), the error message and diff, and the stack.
func parseMocha(out, mutFile string, mutLine int) runInfo {
	lines := family.SplitLines(out)
	var info runInfo
	info.mutFile = mutFile
	start := -1
	for i, l := range lines {
		if reMochaPass.MatchString(l) {
			info.passLine = i + 1
		}
		if reMochaFail.MatchString(l) {
			info.failLine = i + 1
			start = i + 1
			break
		}
	}
	if start < 0 {
		return info
	}
	var cur *failure
	var frames []int
	inHeader := false
	flush := func() {
		if cur != nil {
			classify(cur, lines, frames, mutFile, mutLine)
			info.fails = append(info.fails, *cur)
		}
		cur, frames = nil, nil
	}
	for i := start; i < len(lines); i++ {
		l := lines[i]
		n := i + 1
		if reMochaBlock.MatchString(l) {
			flush()
			cur = &failure{}
			inHeader = true
		}
		if cur == nil {
			continue
		}
		t := strings.TrimSpace(l)
		switch {
		case inHeader:
			cur.header = append(cur.header, n)
			if strings.HasSuffix(t, ":") {
				inHeader = false
				cur.title = strings.TrimSuffix(t, ":")
				if m := reMochaBlock.FindStringSubmatch(l); m != nil {
					cur.title = strings.TrimSuffix(m[2], ":")
				}
			}
		case t == "":
		case isFrame(t):
			if projectFrame(t) {
				frames = append(frames, n)
			}
		default:
			cur.msg = append(cur.msg, n)
		}
	}
	flush()
	return info
}

// mochaFailFiles lists the test files named in the failures' frames.
func mochaFailFiles(out string) []string {
	seen := map[string]bool{}
	for _, m := range reTestFile.FindAllStringSubmatch(out, -1) {
		seen[m[1]] = true
	}
	var fs []string
	for f := range seen {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	return fs
}

func testFiles(dir string) []string {
	ms, _ := filepath.Glob(filepath.Join(dir, "test", "*.js"))
	var out []string
	for _, m := range ms {
		out = append(out, "test/"+filepath.Base(m))
	}
	return out
}

func (e *env) genMocha(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	// A quarter of the scenarios run ejs's suites (slower: its cli tests
	// spawn node), the rest picomatch's.
	proj, libs, mocha, name, probeArgs := picomatch, picoLib, "mocha", "picomatch", ""
	if idx%4 == 3 {
		base, err := e.ejsBuild()
		if err != nil {
			return nil, err
		}
		if err := e.copyTree(base, dir); err != nil {
			return nil, err
		}
		// The probe leaves out cli.js, whose tests spawn node per case.
		proj, libs, mocha, name, probeArgs = ejs, ejsLib, "mocha -u tdd", "ejs", " test/ejs.js test/utils.js"
	} else if err := e.copyRepo(picomatch, dir); err != nil {
		return nil, err
	}
	var probe string
	file, m, err := mutate(r, dir, libs, 6, func(file string, m family.Mutation) (bool, error) {
		out, rc, err := e.run(dir, mocha+" --reporter dot"+probeArgs)
		probe = out
		return rc != 0 && err == nil && strings.Contains(out, "failing"), err
	})
	if err != nil {
		return nil, err
	}
	failFiles := mochaFailFiles(probe)
	// ejs's runs name the files (never cli.js: its spawned processes
	// time out on a busy machine, failures the mutation did not cause).
	suite, all := "", testFiles(dir)
	if proj == ejs {
		all = []string{"test/ejs.js", "test/utils.js", "test/parseargs.js"}
		suite = " " + strings.Join(all[:1+r.IntN(3)], " ")
	}
	var cmd string
	switch k := r.IntN(6); {
	case k == 0:
		cmd = "npx " + mocha + suite
	case k == 1:
		cmd = "npx " + mocha + " --reporter dot" + suite
	case k == 2:
		cmd = "npx " + mocha + " --bail" + suite
	case len(failFiles) > 0:
		files := []string{family.Pick(r, failFiles)}
		for j := r.IntN(3); j > 0; j-- {
			files = append(files, family.Pick(r, all))
		}
		files = uniq(files)
		cmd = "npx " + mocha + " " + strings.Join(files, " ")
		if r.IntN(3) == 0 {
			cmd = "npx " + mocha + " --reporter dot " + strings.Join(files, " ")
		}
	default:
		cmd = "npx " + mocha + suite
	}
	out, _, err := e.run(dir, strings.TrimPrefix(cmd, "npx "))
	if err != nil {
		return nil, err
	}
	if err := checkOut(out); err != nil {
		return nil, err
	}
	info := parseMocha(out, file, m.Line)
	info.mut = m
	if len(info.fails) == 0 {
		return nil, fmt.Errorf("no failure in the shown run (%s)", cmd)
	}
	qs := runQuestions(r, info)
	return &family.Scenario{Name: fmt.Sprintf("%s-%d", name, idx), Path: "mocha_output.txt", Runner: cmd,
		Source: source(proj), Text: out, Qs: qs}, nil
}

const ejs = "mde+ejs"

// ejsLib are ejs's CommonJS build files, which its tests require.
var ejsLib = []string{"lib/cjs/ejs.js", "lib/cjs/utils.js"}

var (
	ejsOnce sync.Once
	ejsBase string
	ejsErr  error
)

// ejsBuild builds ejs's CommonJS files once, as its jakefile's compile
// task does (tsc, then the rewrites that make require('ejs') the ejs
// object), and returns the built checkout every ejs scenario copies.
func (e *env) ejsBuild() (string, error) {
	ejsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolgen-ejs-")
		if err != nil {
			ejsErr = err
			return
		}
		ejsBase = dir
		if ejsErr = e.copyRepo(ejs, dir); ejsErr != nil {
			return
		}
		if out, rc, err := e.run(dir, "tsc"); err != nil || rc != 0 {
			ejsErr = fmt.Errorf("ejs build: %v %s", err, out)
			return
		}
		rd := func(f string) string { b, _ := os.ReadFile(filepath.Join(dir, "lib/cjs", f)); return string(b) }
		src := rd("ejs.js")
		for _, mod := range []string{"fs", "path", "url"} {
			src = strings.Replace(src, `require("node:`+mod+`")`, `require("`+mod+`")`, 1)
			src = strings.ReplaceAll(src, "node_"+mod+"_1", mod+"_1")
		}
		src = strings.Replace(src, "var DECLARATION_KEYWORD = 'let';", "var DECLARATION_KEYWORD = 'var';", 1)
		files := map[string]string{"ejs.js": src, "utils.js": rd("utils.js"), "parseargs.js": rd("parseargs.js")}
		for f, s := range files {
			obj := strings.TrimSuffix(f, ".js")
			s = regexp.MustCompile(`(?m)^exports\.default = `+obj+`;\s*$`).ReplaceAllString(s, "module.exports = "+obj+";")
			if ejsErr = os.WriteFile(filepath.Join(dir, "lib/cjs", f), []byte(s), 0o644); ejsErr != nil {
				return
			}
		}
		ejsErr = os.WriteFile(filepath.Join(dir, "lib/cjs/package.json"), []byte(`{"type":"commonjs"}`), 0o644)
	})
	return ejsBase, ejsErr
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// shimSrc maps mocha's BDD globals onto node:test, so that a mocha-style
// suite runs under `node --test --require ./mocha-compat.js`.
const shimSrc = `// Run mocha-style suites under node --test: describe/it from node:test.
const t = require('node:test');
Object.assign(globalThis, {
  describe: t.describe,
  it: t.it,
  before: t.before,
  after: t.after,
  beforeEach: t.beforeEach,
  afterEach: t.afterEach,
});
`

var (
	cleanOnce  sync.Once
	cleanFiles []string // picomatch test files that pass unmutated under the shim
)

// nodeCleanFiles lists the test files that pass under node --test with the
// shim before any mutation, so every failure in a scenario is the
// mutation's.
func (e *env) nodeCleanFiles(r *rand.Rand) []string {
	cleanOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolgen-base-")
		if err != nil {
			return
		}
		defer os.RemoveAll(dir)
		if e.copyRepo(picomatch, dir) != nil || os.WriteFile(filepath.Join(dir, "mocha-compat.js"), []byte(shimSrc), 0o644) != nil {
			return
		}
		// One run over all files (node runs them in parallel); a file
		// with a failing test shows in a location line.
		all := testFiles(dir)
		out, _, err := e.run(dir, "node --test --test-reporter=tap --require ./mocha-compat.js "+strings.Join(all, " "))
		if err != nil {
			// On a loaded machine the whole suite can outrun the timeout;
			// the unmutated suite passes under the shim (checked when this
			// generator was written, 0 "not ok"), so take every file.
			cleanFiles = all
			return
		}
		bad := map[string]bool{}
		lines := family.SplitLines(out)
		for i, l := range lines {
			m := reTapNotOk.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			// A file that fails to load is a failing test named by its path.
			if strings.HasPrefix(m[2], "/") && strings.HasSuffix(m[2], ".js") {
				bad["test/"+filepath.Base(m[2])] = true
			}
			for _, y := range lines[i+1 : min(i+6, len(lines))] {
				if m := reLocation.FindStringSubmatch(y); m != nil {
					bad[m[1]] = true
				}
			}
		}
		for _, f := range all {
			if !bad[f] {
				cleanFiles = append(cleanFiles, f)
			}
		}
	})
	return cleanFiles
}

var (
	reSpecFailing = regexp.MustCompile(`^✖ failing tests:`)
	reSpecAt      = regexp.MustCompile(`^test at (test/\S+):\d+:\d+$`)
	reSpecTitle   = regexp.MustCompile(`^✖ (.*) \([0-9.]+m?s\)$`)
	reSpecPass    = regexp.MustCompile(`^ℹ pass \d+`)
	reSpecFail    = regexp.MustCompile(`^ℹ fail \d+`)
	reTapNotOk    = regexp.MustCompile(`^(\s*)not ok \d+ - (.*)$`)
	reTapPass     = regexp.MustCompile(`^# pass \d+`)
	reTapFail     = regexp.MustCompile(`^# fail \d+`)
	reLocation    = regexp.MustCompile(`location: '/home/dev/project/(test/[^:']+):`)
	reYamlKey     = regexp.MustCompile(`^(\s*)([A-Za-z_]+):(.*)$`)
)

// parseNodeSpec reads node's spec reporter: the "✖ failing tests:"
// section has, per failing test, a "test at file:line:col" line, the ✖
// title line, the error and diff, the stack and the error's properties.
func parseNodeSpec(out, mutFile string, mutLine int) runInfo {
	lines := family.SplitLines(out)
	info := runInfo{mutFile: mutFile}
	start := -1
	for i, l := range lines {
		switch {
		case reSpecPass.MatchString(l):
			info.passLine = i + 1
		case reSpecFail.MatchString(l):
			info.failLine = i + 1
		case reSpecFailing.MatchString(l) && start < 0:
			start = i + 1
		}
	}
	if start < 0 {
		return info
	}
	var cur *failure
	var frames []int
	inProps, keepCont := false, false
	flush := func() {
		if cur != nil {
			classify(cur, lines, frames, mutFile, mutLine)
			info.fails = append(info.fails, *cur)
		}
		cur, frames = nil, nil
	}
	for i := start; i < len(lines); i++ {
		l := lines[i]
		n := i + 1
		t := strings.TrimSpace(l)
		if reSpecAt.MatchString(l) {
			flush()
			cur = &failure{header: []int{n}}
			inProps, keepCont = false, false
			continue
		}
		if cur == nil {
			continue
		}
		if m := reSpecTitle.FindStringSubmatch(l); m != nil && len(cur.header) == 1 {
			cur.header = append(cur.header, n)
			cur.title = m[1]
			continue
		}
		switch {
		case t == "":
		case isFrame(t):
			if projectFrame(t) {
				frames = append(frames, n)
			}
			if strings.HasSuffix(t, "{") {
				inProps = true
			}
		case inProps:
			// The error's properties: actual and expected answer the
			// question, the code and operator do not.
			if m := reYamlKey.FindStringSubmatch(l); m != nil {
				keepCont = m[2] == "actual" || m[2] == "expected"
			}
			if keepCont && t != "}" {
				cur.msg = append(cur.msg, n)
			}
		default:
			cur.msg = append(cur.msg, n)
		}
	}
	flush()
	return info
}

// parseNodeTap reads node's TAP reporter: a failing test is a "not ok"
// line with a YAML block (location, error, expected, actual, stack).
// Suites that fail only because a subtest did are skipped.
func parseNodeTap(out, mutFile string, mutLine int) runInfo {
	lines := family.SplitLines(out)
	info := runInfo{mutFile: mutFile}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if reTapPass.MatchString(l) {
			info.passLine = i + 1
		}
		if reTapFail.MatchString(l) {
			info.failLine = i + 1
		}
		m := reTapNotOk.FindStringSubmatch(l)
		if m == nil || i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "---" {
			continue
		}
		f := failure{title: m[2], header: []int{i + 1}}
		var frames []int
		keyIndent, key := -1, ""
		subtests := false
		j := i + 2
		for ; j < len(lines); j++ {
			y := lines[j]
			t := strings.TrimSpace(y)
			if t == "..." {
				break
			}
			ind := len(y) - len(strings.TrimLeft(y, " "))
			if km := reYamlKey.FindStringSubmatch(y); km != nil && (keyIndent < 0 || ind <= keyIndent) {
				keyIndent, key = ind, km[2]
				switch key {
				case "location":
					f.header = append(f.header, j+1)
				case "error", "expected", "actual":
					f.msg = append(f.msg, j+1)
				case "failureType":
					subtests = strings.Contains(t, "subtestsFailed")
				}
				continue
			}
			switch key {
			case "error", "expected", "actual":
				if t != "" {
					f.msg = append(f.msg, j+1)
				}
			case "stack":
				if projectFrame("at " + t) {
					frames = append(frames, j+1)
				}
			}
		}
		i = j
		if subtests {
			continue
		}
		classify(&f, lines, frames, mutFile, mutLine)
		info.fails = append(info.fails, f)
	}
	return info
}

func (e *env) genNodeTest(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	clean := e.nodeCleanFiles(r)
	if len(clean) == 0 {
		return nil, fmt.Errorf("no test file passes under the shim")
	}
	if err := e.copyRepo(picomatch, dir); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "mocha-compat.js"), []byte(shimSrc), 0o644); err != nil {
		return nil, err
	}
	// Probe with mocha (fast, names the failing files), then show a
	// node --test run over a failing file and a few passing ones.
	var probe string
	file, m, err := mutate(r, dir, picoLib, 6, func(file string, m family.Mutation) (bool, error) {
		out, rc, err := e.run(dir, "mocha --reporter dot")
		probe = out
		return rc != 0 && err == nil && len(mochaFailFiles(out)) > 0, err
	})
	if err != nil {
		return nil, err
	}
	var failing []string
	isClean := map[string]bool{}
	for _, f := range clean {
		isClean[f] = true
	}
	for _, f := range mochaFailFiles(probe) {
		if isClean[f] {
			failing = append(failing, f)
		}
	}
	if len(failing) == 0 {
		return nil, fmt.Errorf("failing files do not run under the shim")
	}
	files := []string{family.Pick(r, failing)}
	for j := r.IntN(3); j > 0; j-- {
		files = append(files, family.Pick(r, clean))
	}
	files = uniq(files)
	sort.Strings(files)
	tap := r.IntN(2) == 0
	rep := "spec"
	if tap {
		rep = "tap"
	}
	flags := []string{"--test", "--require ./mocha-compat.js", "--test-reporter=" + rep}
	if r.IntN(2) == 0 {
		flags[1], flags[2] = flags[2], flags[1]
	}
	cmd := "node " + strings.Join(flags, " ") + " " + strings.Join(files, " ")
	out, _, err := e.run(dir, cmd)
	if err != nil {
		return nil, err
	}
	if err := checkOut(out); err != nil {
		return nil, err
	}
	var info runInfo
	if tap {
		info = parseNodeTap(out, file, m.Line)
	} else {
		info = parseNodeSpec(out, file, m.Line)
	}
	info.mut = m
	if len(info.fails) == 0 {
		return nil, fmt.Errorf("no failure in the shown run (%s)", cmd)
	}
	qs := runQuestions(r, info)
	return &family.Scenario{Name: fmt.Sprintf("picomatch-%d", idx), Path: "node_test_output.txt", Runner: cmd,
		Source: source(picomatch), Text: out, Qs: qs}, nil
}
