package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// ptBlock is one failure section of a pytest report: the "____ name ____"
// header and the lines up to the next header or "====" rule.
type ptBlock struct {
	name       string
	header     int   // 1-based
	elines     []int // "E   ..." lines
	arrows     []int // "> ..." lines (the failing line of each long frame)
	locs       []int // "path.py:N: ..." lines of project files
	code       []int // the code line under a short-format project location
	mutFrame   []int // location (and its > / code line) at the mutated file:line
	mutFrameE  []int // E lines right under the mutated frame
	isErrorHdr bool
}

// ptReport is what the parser reads from one pytest run.
type ptReport struct {
	blocks   []ptBlock
	summary  map[string]int // node id -> "FAILED id - msg" line
	progress map[string]int // node id -> "id FAILED [ n%]" line (-v)
	final    int            // "N failed, M passed in Xs" line
	order    []string       // node ids in summary order
}

var (
	rePtHeader   = regexp.MustCompile(`^_{2,} (.+?) _{2,}$`)
	rePtRule     = regexp.MustCompile(`^={3,}`)
	rePtLoc      = regexp.MustCompile(`^([^\s:<>]+\.py):(\d+): (.*)$`)
	rePtSummary  = regexp.MustCompile(`^(FAILED|ERROR) (\S+)`)
	rePtProgress = regexp.MustCompile(`^(\S+::\S+) (FAILED|ERROR)\s+\[`)
	rePtFinal    = regexp.MustCompile(`^=*\s*(\d+ (failed|passed|error|errors|skipped)\b.*) in [0-9.]+s`)
)

// parsePytest reads a pytest report. mutFile/mutLine locate the injected
// fault so the frames at it can be told apart.
func parsePytest(lines []string, mutFile string, mutLine int) ptReport {
	rep := ptReport{summary: map[string]int{}, progress: map[string]int{}}
	mutKey := fmt.Sprintf("%s:%d:", mutFile, mutLine)
	var cur *ptBlock
	flush := func() {
		if cur != nil {
			rep.blocks = append(rep.blocks, *cur)
			cur = nil
		}
	}
	for i, l := range lines {
		n := i + 1
		if m := rePtFinal.FindStringSubmatch(l); m != nil {
			rep.final = n
		}
		if m := rePtProgress.FindStringSubmatch(l); m != nil {
			rep.progress[m[1]] = n
		}
		if rePtRule.MatchString(l) {
			flush()
			continue
		}
		if m := rePtSummary.FindStringSubmatch(l); m != nil && cur == nil {
			if _, ok := rep.summary[m[2]]; !ok {
				rep.order = append(rep.order, m[2])
			}
			rep.summary[m[2]] = n
			continue
		}
		if m := rePtHeader.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "_ _") {
			flush()
			cur = &ptBlock{name: m[1], header: n, isErrorHdr: strings.HasPrefix(m[1], "ERROR ")}
			continue
		}
		if cur == nil {
			continue
		}
		switch {
		case strings.HasPrefix(l, "E   ") || l == "E":
			if strings.TrimSpace(l[1:]) != "" {
				cur.elines = append(cur.elines, n)
				if len(cur.mutFrame) > 0 && len(cur.mutFrameE) < 4 && lastIn(cur.mutFrame) >= n-8 {
					cur.mutFrameE = append(cur.mutFrameE, n)
				}
			}
		case strings.HasPrefix(l, ">"):
			cur.arrows = append(cur.arrows, n)
		}
		m := rePtLoc.FindStringSubmatch(l)
		if m == nil || strings.HasPrefix(m[1], "/") {
			continue
		}
		cur.locs = append(cur.locs, n)
		frame := []int{n}
		// Short format: the code line follows the location.
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") && strings.TrimSpace(lines[i+1]) != "" {
			cur.code = append(cur.code, n+1)
			frame = append(frame, n+1)
		} else {
			// Long format: the frame's failing line is the last ">" above.
			for j := i - 1; j >= 0 && j > cur.header-1; j-- {
				if strings.HasPrefix(lines[j], ">") {
					frame = append(frame, j+1)
					break
				}
				if strings.HasPrefix(lines[j], "_ _") || rePtLoc.MatchString(lines[j]) {
					break
				}
			}
		}
		if strings.HasPrefix(l, mutKey) {
			cur.mutFrame = append(cur.mutFrame, frame...)
		}
	}
	flush()
	return rep
}

func lastIn(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// goldOf is a failure block's answer to "why does it fail": the header,
// the > lines, the first E lines, the project locations and their code.
func (b ptBlock) goldOf() []int {
	g := []int{b.header}
	g = append(g, b.arrows...)
	g = append(g, firstN(b.elines, 8)...)
	g = append(g, b.locs...)
	g = append(g, b.code...)
	return family.UniqSorted(g)
}

func firstN(xs []int, n int) []int {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

// nodeName maps a pytest node id to the header name of its block:
// tests/test_x.py::Cls::test_y[p] -> Cls.test_y[p].
func nodeName(id string) string {
	_, rest, ok := strings.Cut(id, "::")
	if !ok {
		return id
	}
	return strings.ReplaceAll(rest, "::", ".")
}

var pytestFlagSets = [][]string{
	{}, {"-q"}, {"-x"}, {"--tb=short"}, {"-v"}, {"-x", "-q"}, {"-q", "--tb=short"}, {"-x", "--tb=short"},
	{"-v", "--tb=short"}, {"--tb=long", "-q"}, {"-q", "--tb=line"}, {"-rf"},
}

var qWhichFailed = []string{
	"which tests failed?", "list the failing tests", "what broke in this test run?", "which tests are red after my change?",
	"show me the failures from the pytest run", "what tests do I need to fix?", "which test cases failed in the %s run?",
	"what failed in the %s suite?", "which tests broke after I changed %s?", "give me the names of the failing tests",
	"which pytest cases fail now?", "what does pytest report as failed?",
}

var qWhyTest = []string{
	"why does %s fail?", "what's the assertion error in %s?", "explain the failure of %s", "what went wrong in %s?",
	"show me the traceback for %s", "what did %s expect and what did it get?", "why is %s red?",
	"how does %s fail?", "what error does %s hit?", "where does %s fail?",
}

var qMutFrame = []string{
	"I changed %s in %s; where does the traceback pass through my edit?",
	"which frame in %[2]s is involved in the failure?", "show the stack frame in %[2]s that the failure goes through",
	"where in %[2]s does the failing code run?", "which line of %[2]s shows up in the traceback?",
	"does my edit to %[1]s in %[2]s appear in the traceback? where?", "which library frame (not the test) is in the failure?",
	"show me the traceback frame in our package code", "where in the package source is the error raised?",
	"which line of the library is at fault according to the traceback?",
}

var qFirstAssert = []string{
	"what assertion fails first?", "what value did the first failing assertion expect?", "show me the first assertion error",
	"what's the first error in the output?", "what's the actual vs expected in the first failure?",
	"why does the first failing test fail?", "what is the first failure about?", "what does the first E line say?",
	"what does the first failure complain about?", "what's the first failing assertion and its values?",
}

var qCounts = []string{
	"how many tests failed?", "how many tests passed?", "what's the final tally of the run?", "how many failures in total?",
	"give me the pass/fail counts", "how many tests were skipped?", "what's the summary line of the run?",
	"did most tests pass? how many failed?", "how long did the suite take?", "what are the totals at the end?",
}

// genPytest runs a repo's suite under pytest with one injected fault.
func genPytest(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	rp := pickRepo(r, repos)
	if err := checkout(rp, dir); err != nil {
		return nil, err
	}
	files := rp.srcFiles(dir)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no source files", rp.name)
	}
	flags := family.Pick(r, pytestFlagSets)
	for try := 0; try < 6; try++ {
		f, m, orig, err := mutateOnce(r, rp, dir, files, nil)
		if err != nil {
			return nil, err
		}
		args := append([]string{}, flags...)
		args = append(args, rp.testFor(f)...)
		out, code, err := runTool(dir, rp, 120*time.Second, append([]string{python, "-m", "pytest"}, args...)...)
		if err != nil {
			return nil, err
		}
		if code == 0 {
			restore(dir, f, orig)
			continue
		}
		if code != 1 {
			return nil, fmt.Errorf("pytest exit %d", code)
		}
		lines := family.SplitLines(out)
		if len(lines) > 3000 {
			return nil, fmt.Errorf("output %d lines", len(lines))
		}
		runner := "pytest " + strings.Join(args, " ")
		if rp.pypath != "." {
			runner = "PYTHONPATH=" + rp.pypath + " " + runner
		}
		sc := &family.Scenario{
			Name: fmt.Sprintf("%s-%04d", rp.name, idx), Path: family.Pick(r, []string{"pytest.log", "test-output.txt", "pytest-out.txt", "ci.log"}),
			Runner: strings.TrimSpace(runner), Source: source(rp), Text: out,
		}
		sc.Qs = pytestQuestions(r, lines, rp, f, m)
		if len(sc.Qs) == 0 {
			return nil, fmt.Errorf("no question fits the output")
		}
		return sc, nil
	}
	return nil, fmt.Errorf("suite still passes after 6 mutations")
}

func restore(dir, f, orig string) {
	writeFile(filepath.Join(dir, f), orig)
}

func pytestQuestions(r *rand.Rand, lines []string, rp repo, f string, m family.Mutation) []family.Question {
	rep := parsePytest(lines, f, m.Line)
	var qs []family.Question
	if len(rep.blocks) == 0 && len(rep.order) == 0 {
		return nil
	}
	short := strings.TrimSuffix(filepath.Base(f), ".py")
	// Which failed: summary lines and -v progress lines.
	if len(rep.order) > 0 && len(rep.order) <= 15 {
		var g []int
		for _, id := range rep.order {
			g = append(g, rep.summary[id])
			if p, ok := rep.progress[id]; ok {
				g = append(g, p)
			}
		}
		q := family.Pick(r, qWhichFailed)
		if strings.Contains(q, "%s") {
			what := rp.name
			if strings.Contains(q, "changed") {
				what = family.Pick(r, []string{short, f, describe(r, m) + " in " + filepath.Base(f)})
			}
			q = fmt.Sprintf(q, what)
		}
		qs = append(qs, family.Question{Query: q, Gold: g})
	}
	// Why one named test fails: its block plus its summary line.
	var real []ptBlock
	for _, b := range rep.blocks {
		if len(b.elines) > 0 || len(b.arrows) > 0 {
			real = append(real, b)
		}
	}
	if len(real) > 0 {
		b := family.Pick(r, real)
		g := b.goldOf()
		for _, id := range rep.order {
			if nodeName(id) == b.name {
				g = append(g, rep.summary[id])
			}
		}
		if len(g) <= 25 {
			name := b.name
			if r.IntN(2) == 0 {
				if _, after, ok := strings.Cut(name, "."); ok && !strings.HasPrefix(name, "ERROR ") {
					name = after
				}
			}
			qs = append(qs, family.Question{Query: fmt.Sprintf(family.Pick(r, qWhyTest), name), Gold: g})
		}
		first := real[0]
		g = family.UniqSorted(append(append([]int{first.header}, first.arrows...), firstN(first.elines, 8)...))
		if len(g) <= 15 {
			qs = append(qs, family.Question{Query: family.Pick(r, qFirstAssert), Gold: g})
		}
	}
	// The frames at the mutated line, over all blocks (capped).
	var mg []int
	for _, b := range rep.blocks {
		if len(b.mutFrame) > 0 && len(mg) < 12 {
			mg = append(mg, b.mutFrame...)
			mg = append(mg, b.mutFrameE...)
		}
	}
	if len(mg) > 0 {
		q := family.Pick(r, qMutFrame)
		if strings.Contains(q, "%") {
			q = fmt.Sprintf(q, describe(r, m), family.Pick(r, []string{f, filepath.Base(f), short}))
		}
		qs = append(qs, family.Question{Query: q, Gold: mg})
	}
	if rep.final > 0 && r.IntN(3) == 0 {
		qs = append(qs, family.Question{Query: family.Pick(r, qCounts), Gold: []int{rep.final}})
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return qs
}
