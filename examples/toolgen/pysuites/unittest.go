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

// utBlock is one FAIL:/ERROR: section of a unittest report.
type utBlock struct {
	kind, name, id string // "FAIL", "test_x", "tests.test_y.Cls.test_x"
	header         int
	result         []int // -v result line(s) of the test
	frames         []int // project File lines with their code and caret lines
	exc            []int // exception lines after the traceback
	mutFrame       []int
}

type utReport struct {
	blocks []utBlock
	ran    int // "Ran N tests in Xs"
	final  int // "FAILED (failures=N)"
}

var (
	reUtHeader = regexp.MustCompile(`^(FAIL|ERROR): (\S+) \((.+)\)$`)
	reUtFile   = regexp.MustCompile(`^  File "([^"]+)", line (\d+), in `)
	reUtCaret  = regexp.MustCompile(`^\s+[~^]+\s*$`)
)

// parseUnittest reads a unittest report; the project is under family.HomeDir
// (the output has been cleaned).
func parseUnittest(lines []string, mutFile string, mutLine int) utReport {
	var rep utReport
	mutKey := fmt.Sprintf(`File "%s/%s", line %d,`, family.HomeDir, mutFile, mutLine)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "Ran ") && strings.Contains(l, " test") {
			rep.ran = i + 1
		}
		if strings.HasPrefix(l, "FAILED (") {
			rep.final = i + 1
		}
		m := reUtHeader.FindStringSubmatch(l)
		if m == nil || i == 0 || !strings.HasPrefix(lines[i-1], "=====") {
			continue
		}
		b := utBlock{kind: m[1], name: m[2], id: m[3], header: i + 1}
		// The -v result line(s), printed before the report.
		prefix := m[2] + " (" + m[3] + ")"
		for j := 0; j < i; j++ {
			if lines[j] == prefix+" ... "+m[1] {
				b.result = append(b.result, j+1)
			} else if lines[j] == prefix && j+1 < i && strings.HasSuffix(lines[j+1], " ... "+m[1]) {
				b.result = append(b.result, j+1, j+2)
			}
		}
		// The traceback(s) up to the next block or the closing rule.
		var lastExc []int
		seenTB := false // a docstring line may sit between header and traceback
		j := i + 1
		for ; j < len(lines); j++ {
			t := lines[j]
			if strings.HasPrefix(t, "=====") || strings.HasPrefix(t, "-----") && j > i+1 {
				break
			}
			if fm := reUtFile.FindStringSubmatch(t); fm != nil {
				lastExc = nil
				if !strings.HasPrefix(fm[1], family.HomeDir+"/") {
					continue
				}
				fr := []int{j + 1}
				if j+1 < len(lines) && strings.HasPrefix(lines[j+1], "    ") && !reUtFile.MatchString(lines[j+1]) {
					fr = append(fr, j+2)
					if j+2 < len(lines) && reUtCaret.MatchString(lines[j+2]) {
						fr = append(fr, j+3)
					}
				}
				b.frames = append(b.frames, fr...)
				if strings.HasPrefix(strings.TrimSpace(t), strings.TrimSpace(mutKey)) {
					b.mutFrame = append(b.mutFrame, fr...)
				}
				continue
			}
			// The exception text is what follows the last frame; a new
			// traceback (a chained exception) starts over.
			if t == "Traceback (most recent call last):" || strings.HasPrefix(t, "During handling") || strings.HasPrefix(t, "The above exception") {
				lastExc = nil
				seenTB = true
				continue
			}
			if !seenTB && !strings.HasPrefix(t, "Failed example:") {
				continue
			}
			seenTB = true
			if strings.TrimSpace(t) == "" || strings.HasPrefix(t, " ") && len(lastExc) == 0 {
				continue
			}
			if len(lastExc) < 8 {
				lastExc = append(lastExc, j+1)
			}
		}
		b.exc = lastExc
		rep.blocks = append(rep.blocks, b)
		i = j - 1
	}
	return rep
}

var unittestCmds = [][]string{
	{"-m", "unittest"}, {"-m", "unittest", "-v"}, {"-m", "unittest", "discover", "-v"}, {"-m", "unittest", "discover"},
	{"-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v"}, {"-m", "unittest", "-v", "-b"},
}

var qUtWhich = []string{
	"which tests failed?", "which unittest cases fail?", "list the FAIL and ERROR entries", "what broke in this run?",
	"which test methods need fixing?", "which tests error out or fail?", "what failed after I touched %s?",
	"which tests in the %s suite fail?", "show me the failing tests", "name the failing test cases",
}

var qUtWhy = []string{
	"why does %s fail?", "what's the traceback for %s?", "what exception does %s raise?", "explain the failure in %s",
	"what went wrong with %s?", "show the error for %s", "what assertion fails in %s?", "why is %s reported as a failure?",
	"which of our frames are in the traceback of %s?", "what's the error message of %s?",
}

var qUtCounts = []string{
	"how many tests ran and how many failed?", "what's the final result line?", "how many failures and errors?",
	"what are the totals of the run?", "how many tests were run?", "did anything get skipped? what's the tally?",
	"how long did the test run take?", "give me the failure count",
}

// genUnittest runs a TestCase-based suite under python -m unittest with
// one injected fault.
func genUnittest(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	var pool []repo
	for _, rp := range repos {
		if rp.unittest {
			pool = append(pool, rp)
		}
	}
	rp := pickRepo(r, pool)
	if err := checkout(rp, dir); err != nil {
		return nil, err
	}
	files := rp.srcFiles(dir)
	cmd := append([]string{}, family.Pick(r, unittestCmds)...)
	for try := 0; try < 6; try++ {
		f, m, orig, err := mutateOnce(r, rp, dir, files, nil)
		if err != nil {
			return nil, err
		}
		args := cmd
		if tf := rp.testFor(f); len(tf) > 0 {
			// A module run: `python3 -m unittest [-v] tests.test_more`
			// or the file path form.
			mod := strings.TrimSuffix(strings.ReplaceAll(tf[0], "/", "."), ".py")
			if r.IntN(3) == 0 {
				mod = tf[0]
			}
			args = []string{"-m", "unittest"}
			if r.IntN(3) > 0 {
				args = append(args, "-v")
			}
			args = append(args, mod)
		}
		out, code, err := runTool(dir, rp, 120*time.Second, append([]string{python}, args...)...)
		if err != nil {
			return nil, err
		}
		if code == 0 {
			restore(dir, f, orig)
			continue
		}
		lines := family.SplitLines(out)
		if len(lines) > 3000 {
			return nil, fmt.Errorf("output %d lines", len(lines))
		}
		runner := "python3 " + strings.Join(args, " ")
		if rp.pypath != "." {
			runner = "PYTHONPATH=" + rp.pypath + " " + runner
		}
		sc := &family.Scenario{
			Name: fmt.Sprintf("%s-%04d", rp.name, idx), Path: family.Pick(r, []string{"unittest.log", "test-output.txt", "tests.log", "ci.log"}),
			Runner: runner, Source: source(rp), Text: out,
		}
		sc.Qs = unittestQuestions(r, lines, rp, f, m)
		if len(sc.Qs) == 0 {
			return nil, fmt.Errorf("no question fits the output")
		}
		return sc, nil
	}
	return nil, fmt.Errorf("suite still passes after 6 mutations")
}

func unittestQuestions(r *rand.Rand, lines []string, rp repo, f string, m family.Mutation) []family.Question {
	rep := parseUnittest(lines, f, m.Line)
	if len(rep.blocks) == 0 {
		return nil
	}
	var qs []family.Question
	short := strings.TrimSuffix(filepath.Base(f), ".py")
	if len(rep.blocks) <= 12 {
		var g []int
		for _, b := range rep.blocks {
			g = append(g, b.header)
			g = append(g, b.result...)
		}
		q := family.Pick(r, qUtWhich)
		if strings.Contains(q, "touched") {
			q = fmt.Sprintf(q, family.Pick(r, []string{f, short, describe(r, m) + " in " + filepath.Base(f)}))
		} else if strings.Contains(q, "%s") {
			q = fmt.Sprintf(q, rp.name)
		}
		qs = append(qs, family.Question{Query: q, Gold: g})
	}
	b := family.Pick(r, rep.blocks)
	g := append(append(append([]int{b.header}, b.result...), b.frames...), b.exc...)
	if len(g) <= 25 && len(b.exc) > 0 {
		name := b.name
		if r.IntN(2) == 0 {
			parts := strings.Split(b.id, ".")
			if len(parts) >= 2 {
				name = parts[len(parts)-2] + "." + b.name
			}
		}
		qs = append(qs, family.Question{Query: fmt.Sprintf(family.Pick(r, qUtWhy), name), Gold: g})
	}
	first := rep.blocks[0]
	if len(first.exc) > 0 {
		qs = append(qs, family.Question{Query: family.Pick(r, qFirstAssert), Gold: append([]int{first.header}, first.exc...)})
	}
	var mg []int
	for _, b := range rep.blocks {
		if len(b.mutFrame) > 0 && len(mg) < 12 {
			mg = append(mg, b.mutFrame...)
		}
	}
	if len(mg) > 0 {
		q := family.Pick(r, qMutFrame)
		if strings.Contains(q, "%") {
			q = fmt.Sprintf(q, describe(r, m), family.Pick(r, []string{f, filepath.Base(f), short}))
		}
		qs = append(qs, family.Question{Query: q, Gold: mg})
	}
	if rep.final > 0 && rep.ran > 0 && r.IntN(3) == 0 {
		qs = append(qs, family.Question{Query: family.Pick(r, qUtCounts), Gold: []int{rep.ran, rep.final}})
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return qs
}
