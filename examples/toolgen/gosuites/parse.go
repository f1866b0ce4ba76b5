package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// failure is one `--- FAIL:` of a go test run: the header line and the
// lines that explain it (the t.Error messages, testify's blocks).
type failure struct {
	name   string
	header int   // 1-based line of `--- FAIL: name`
	msgs   []int // 1-based lines of its messages
	check  bool  // a gopkg.in/check.v1 block (yaml.v3's suite)
}

// frame is one goroutine-trace frame: the function line and the
// file:line line under it.
type frame struct {
	fn, at int    // 1-based lines
	file   string // path as printed
	line   int
}

// pkgLine is one package result line: `ok  \tpkg\t0.1s`, `FAIL\tpkg\t...`,
// `?   \tpkg\t[no test files]`.
type pkgLine struct {
	line         int
	status, pkg  string
	secs         float64
	cached       bool
	noTests      bool
	buildFailure bool
}

// diag is one compiler or vet diagnostic `./file.go:L:C: msg`.
type diag struct {
	line   int // output line
	header int // the `# pkg` line above it
	file   string
	at     int
}

// testRun is what parseTestText finds in go test's text output.
type testRun struct {
	fails  []failure
	skips  []failure
	passes map[string]int // test name -> `--- PASS` line
	panic  []int          // `panic:` lines (and the repeated one after [recovered])
	frames []frame
	pkgs   []pkgLine
	diags  []diag
}

var (
	reStatus  = regexp.MustCompile(`^(\s*)--- (FAIL|PASS|SKIP): (\S+) \(([0-9.]+)s\)`)
	reRun     = regexp.MustCompile(`^=== (RUN|CONT|PAUSE|NAME)\s+(\S+)`)
	rePkg     = regexp.MustCompile(`^(ok|FAIL|\?)\s+(\S+)\s+(.*)$`)
	reSecs    = regexp.MustCompile(`^([0-9.]+)s`)
	reFrameAt = regexp.MustCompile(`^\t(\S+\.go):(\d+)`)
	reDiag    = regexp.MustCompile(`^(\.{0,2}/?[^\s:]+\.go):(\d+)(:\d+)?: `)
	reMsg     = regexp.MustCompile(`^\s+\S+\.go:\d+: `)
	reCheck   = regexp.MustCompile(`^(FAIL|PANIC|MISS): \S+\.go:\d+: (\S+)$`)
	reCheckAt = regexp.MustCompile(`^\S+\.go:\d+:$`)
)

// checkBlock reads one gocheck report block starting at line i (0-based,
// the FAIL:/PANIC: line): the assertion's location, its source line and
// the "... " value lines, or a panic's message and the project frames.
func checkBlock(lines []string, i int) failure {
	m := reCheck.FindStringSubmatch(lines[i])
	f := failure{name: m[2], header: i + 1, check: true}
	frames := 0
	for j := i + 1; j < len(lines); j++ {
		l := lines[j]
		if strings.HasPrefix(l, "-----") || strings.HasPrefix(l, "OOPS:") || strings.HasPrefix(l, "--- ") || reCheck.MatchString(l) {
			break
		}
		switch {
		case reCheckAt.MatchString(l), strings.HasPrefix(l, "... "):
			f.msgs = append(f.msgs, j+1)
		case strings.HasPrefix(l, "    ") && j > 0 && (reCheckAt.MatchString(lines[j-1]) || strings.HasPrefix(lines[j-1], "    ") && len(f.msgs) > 0 && f.msgs[len(f.msgs)-1] == j):
			f.msgs = append(f.msgs, j+1) // the asserting source line(s)
		case m[1] == "PANIC" && strings.HasPrefix(l, "/home/dev/project/") && frames < 6:
			f.msgs = append(f.msgs, j+1) // file:line, then "  in func"
			if j+1 < len(lines) && strings.HasPrefix(lines[j+1], "  in ") {
				f.msgs = append(f.msgs, j+2)
			}
			frames++
		}
	}
	return f
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// parseTestText reads go test output (plain or -v). verbose selects how
// message lines are attributed: after the header (plain) or to the
// running test before it (-v streams t.Log output as it happens).
func parseTestText(lines []string, verbose bool) *testRun {
	tr := &testRun{passes: map[string]int{}}
	cur := ""                      // -v: the test whose output is streaming
	streamed := map[string][]int{} // -v: message lines per test
	lastMsgOwner := ""
	header := 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		n := i + 1
		if m := reRun.FindStringSubmatch(l); m != nil {
			cur = m[2]
			continue
		}
		if reCheck.MatchString(l) && i > 0 && strings.HasPrefix(lines[i-1], "-----") {
			tr.fails = append(tr.fails, checkBlock(lines, i))
			continue
		}
		if m := reStatus.FindStringSubmatch(l); m != nil {
			f := failure{name: m[3], header: n}
			if !verbose || m[2] == "SKIP" {
				// Plain mode (and skips in both): the explanation follows,
				// indented deeper, up to the next status line of its level.
				ind := len(m[1])
				for j := i + 1; j < len(lines); j++ {
					lj := lines[j]
					if strings.TrimSpace(lj) == "" || indentOf(lj) <= ind || reStatus.MatchString(lj) {
						break
					}
					f.msgs = append(f.msgs, j+1)
				}
			}
			switch m[2] {
			case "FAIL":
				tr.fails = append(tr.fails, f)
			case "SKIP":
				tr.skips = append(tr.skips, f)
			case "PASS":
				tr.passes[m[3]] = n
			}
			continue
		}
		if verbose && cur != "" && (reMsg.MatchString(l) || lastMsgOwner == cur && strings.HasPrefix(l, "        ") && i > 0 && (reMsg.MatchString(lines[i-1]) || indentOf(lines[i-1]) >= 8)) {
			streamed[cur] = append(streamed[cur], n)
			lastMsgOwner = cur
			continue
		}
		lastMsgOwner = ""
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "\tpanic: ") || strings.HasPrefix(l, "fatal error: ") {
			tr.panic = append(tr.panic, n)
			continue
		}
		if m := reFrameAt.FindStringSubmatch(l); m != nil && i > 0 && !strings.HasPrefix(lines[i-1], "\t") {
			ln := 0
			for _, c := range m[2] {
				ln = ln*10 + int(c-'0')
			}
			tr.frames = append(tr.frames, frame{fn: n - 1, at: n, file: m[1], line: ln})
			continue
		}
		if strings.HasPrefix(l, "# ") {
			header = n
			continue
		}
		if m := reDiag.FindStringSubmatch(l); m != nil && header > 0 {
			ln := 0
			for _, c := range m[2] {
				ln = ln*10 + int(c-'0')
			}
			tr.diags = append(tr.diags, diag{line: n, header: header, file: strings.TrimPrefix(m[1], "./"), at: ln})
			continue
		}
		if m := rePkg.FindStringSubmatch(l); m != nil && strings.Contains(m[2], ".") {
			p := pkgLine{line: n, status: m[1], pkg: m[2]}
			rest := m[3]
			p.cached = strings.Contains(rest, "(cached)")
			p.noTests = strings.Contains(rest, "[no test files]")
			p.buildFailure = strings.Contains(rest, "[build failed]") || strings.Contains(rest, "[setup failed]")
			if s := reSecs.FindStringSubmatch(rest); s != nil {
				p.secs, _ = strconv.ParseFloat(s[1], 64)
			}
			tr.pkgs = append(tr.pkgs, p)
		}
	}
	if verbose {
		for k := range tr.fails {
			if !tr.fails[k].check {
				tr.fails[k].msgs = streamed[tr.fails[k].name]
			}
		}
	}
	return tr
}

// subtreeFails returns the failures of test name and its subtests.
func (tr *testRun) subtreeFails(name string) []failure {
	var out []failure
	for _, f := range tr.fails {
		if f.name == name || strings.HasPrefix(f.name, name+"/") {
			out = append(out, f)
		}
	}
	return out
}

// topFails returns the failed top-level tests.
func (tr *testRun) topFails() []failure {
	var out []failure
	for _, f := range tr.fails {
		if !strings.Contains(f.name, "/") {
			out = append(out, f)
		}
	}
	return out
}

// jsonEvent is one line of go test -json.
type jsonEvent struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     *string
}

// jsonToText rebuilds the text stream of a go test -json run and maps each
// text line to the JSON line that printed it (1-based both).
func jsonToText(jlines []string) (text []string, at []int, events []jsonEvent) {
	var partial strings.Builder
	partialAt := 0
	events = make([]jsonEvent, len(jlines))
	for i, jl := range jlines {
		var ev jsonEvent
		if json.Unmarshal([]byte(jl), &ev) != nil {
			// A non-JSON line (go's own stderr): it shows as is.
			text = append(text, jl)
			at = append(at, i+1)
			continue
		}
		events[i] = ev
		if ev.Output == nil {
			continue
		}
		s := *ev.Output
		for s != "" {
			if partial.Len() == 0 {
				partialAt = i + 1
			}
			k := strings.IndexByte(s, '\n')
			if k < 0 {
				partial.WriteString(s)
				break
			}
			partial.WriteString(s[:k])
			text = append(text, partial.String())
			at = append(at, partialAt)
			partial.Reset()
			s = s[k+1:]
		}
	}
	if partial.Len() > 0 {
		text = append(text, partial.String())
		at = append(at, partialAt)
	}
	return text, at, events
}
