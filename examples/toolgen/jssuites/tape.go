package main

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

const minimist = "substack+minimist"

var (
	reTapeNotOk = regexp.MustCompile(`^not ok \d+ (.*)$`)
	reTapeTest  = regexp.MustCompile(`^# (.*)$`)
	reTapePass  = regexp.MustCompile(`^# pass\s+\d+`)
	reTapeFail  = regexp.MustCompile(`^# fail\s+\d+`)
	reTapeAt    = regexp.MustCompile(`(test/[^:)]+\.js):\d+:\d+`)
)

// parseTape reads tape's TAP: a test is a "# name" comment followed by its
// assertions; a failing assertion is "not ok N msg" and a YAML block
// (operator, expected, actual, at, stack). The failures of one test are
// merged: questions name tests, not assertions.
func parseTape(out, mutFile string, mutLine int) runInfo {
	lines := family.SplitLines(out)
	info := runInfo{mutFile: mutFile}
	byName := map[string]*failure{}
	framesBy := map[string][]int{}
	var order []string
	testLine, testName := 0, ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case reTapePass.MatchString(l):
			info.passLine = i + 1
			continue
		case reTapeFail.MatchString(l):
			info.failLine = i + 1
			continue
		}
		if m := reTapeTest.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "# tests") {
			testLine, testName = i+1, m[1]
			continue
		}
		m := reTapeNotOk.FindStringSubmatch(l)
		if m == nil || testLine == 0 {
			continue
		}
		f := byName[testName]
		if f == nil {
			f = &failure{title: testName, header: []int{testLine}}
			byName[testName] = f
			order = append(order, testName)
		}
		f.header = append(f.header, i+1)
		key := ""
		j := i + 1
		if j < len(lines) && strings.TrimSpace(lines[j]) == "---" {
			for j++; j < len(lines); j++ {
				y := lines[j]
				t := strings.TrimSpace(y)
				if t == "..." {
					break
				}
				if km := reYamlKey.FindStringSubmatch(y); km != nil && len(km[1]) == 4 {
					key = km[2]
					switch key {
					case "operator", "expected", "actual":
						f.msg = append(f.msg, j+1)
					case "at":
						framesBy[testName] = append(framesBy[testName], j+1)
					}
					continue
				}
				switch key {
				case "expected", "actual":
					f.msg = append(f.msg, j+1)
				case "stack":
					if projectFrame(t) {
						framesBy[testName] = append(framesBy[testName], j+1)
					} else if !isFrame(t) && t != "" && t != "Error: "+m[1] {
						// The error line of a thrown exception; an assertion's
						// "Error: <its message>" repeats the not ok line.
						f.msg = append(f.msg, j+1)
					}
				}
			}
		}
		i = j
	}
	for _, n := range order {
		f := byName[n]
		classify(f, lines, family.UniqSorted(framesBy[n]), mutFile, mutLine)
		info.fails = append(info.fails, *f)
	}
	return info
}

func (e *env) genTape(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	if err := e.copyRepo(minimist, dir); err != nil {
		return nil, err
	}
	var probe string
	file, m, err := mutate(r, dir, []string{"index.js"}, 8, func(file string, m family.Mutation) (bool, error) {
		out, rc, err := e.run(dir, "tape test/*.js")
		probe = out
		return rc != 0 && err == nil && strings.Contains(out, "not ok"), err
	})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, l := range family.SplitLines(probe) {
		if strings.Contains(l, "    at: ") {
			if mm := reTapeAt.FindStringSubmatch(l); mm != nil {
				seen[mm[1]] = true
			}
		}
	}
	var failFiles []string
	for f := range seen {
		failFiles = append(failFiles, f)
	}
	sort.Strings(failFiles)
	var cmd string
	switch k := r.IntN(4); {
	case k == 0 || len(failFiles) == 0:
		cmd = "npx tape test/*.js"
	case k == 1:
		cmd = "node " + family.Pick(r, failFiles)
	default:
		files := []string{family.Pick(r, failFiles)}
		all := testFiles(dir)
		for j := r.IntN(3); j > 0; j-- {
			files = append(files, family.Pick(r, all))
		}
		files = uniq(files)
		cmd = "npx tape " + strings.Join(files, " ")
	}
	out, _, err := e.run(dir, strings.TrimPrefix(cmd, "npx "))
	if err != nil {
		return nil, err
	}
	if err := checkOut(out); err != nil {
		return nil, err
	}
	info := parseTape(out, file, m.Line)
	info.mut = m
	if len(info.fails) == 0 {
		return nil, fmt.Errorf("no failure in the shown run (%s)", cmd)
	}
	qs := runQuestions(r, info)
	return &family.Scenario{Name: fmt.Sprintf("minimist-%d", idx), Path: "tape_output.txt", Runner: cmd,
		Source: source(minimist), Text: out, Qs: qs}, nil
}
