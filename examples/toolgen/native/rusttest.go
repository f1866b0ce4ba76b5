package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

var (
	reCargoTestLine = regexp.MustCompile(`^test (\S+) \.\.\. FAILED$`)
	reCargoStdout   = regexp.MustCompile(`^---- (\S+) stdout ----$`)
	reCargoPanic    = regexp.MustCompile(`^thread '([^']+)'( \(\d+\))? panicked at ([^:]+):(\d+):(\d+):$`)
	reCargoFrameAt  = regexp.MustCompile(`^\s+at \./(src/[^:]+):(\d+):\d+$`)
)

// cargoFailure is one failing test of `cargo test` output.
type cargoFailure struct {
	name      string
	testLine  int // "test x ... FAILED"
	head      int // "---- x stdout ----"
	panic     int // "thread 'x' panicked at file:line:col:"
	panicFile string
	panicLine int
	msg       []int // assertion message, left/right
	frames    []int // backtrace frames in the crate: name line and its "at ./src/..." line
	mutFrames []int
	listEntry int // the entry under the final "failures:" list
}

func parseCargoTest(lines []string, mutFile string, mutLine int) []*cargoFailure {
	byName := map[string]*cargoFailure{}
	var order []*cargoFailure
	get := func(n string) *cargoFailure {
		if f, ok := byName[n]; ok {
			return f
		}
		f := &cargoFailure{name: n}
		byName[n] = f
		order = append(order, f)
		return f
	}
	var cur *cargoFailure
	inMsg, inBT, inList := false, false, false
	for i, l := range lines {
		n := i + 1
		if m := reCargoTestLine.FindStringSubmatch(l); m != nil {
			get(m[1]).testLine = n
			continue
		}
		if m := reCargoStdout.FindStringSubmatch(l); m != nil {
			cur = get(m[1])
			cur.head = n
			inMsg, inBT = false, false
			continue
		}
		if l == "failures:" {
			// The second "failures:" heading starts the list of names.
			inList = cur != nil
			cur = nil
			continue
		}
		if inList {
			if t := strings.TrimSpace(l); t != "" && strings.HasPrefix(l, "    ") {
				if f, ok := byName[t]; ok {
					f.listEntry = n
				}
				continue
			}
			if strings.TrimSpace(l) != "" {
				inList = false
			}
			continue
		}
		if cur == nil {
			continue
		}
		if m := reCargoPanic.FindStringSubmatch(l); m != nil {
			cur.panic, cur.panicFile = n, m[3]
			fmt.Sscan(m[4], &cur.panicLine)
			inMsg = true
			continue
		}
		if strings.HasPrefix(l, "stack backtrace:") {
			inMsg, inBT = false, true
			continue
		}
		if strings.HasPrefix(l, "note: ") {
			inMsg, inBT = false, false
			continue
		}
		if inMsg && strings.TrimSpace(l) != "" {
			cur.msg = append(cur.msg, n)
		}
		if inBT {
			if m := reCargoFrameAt.FindStringSubmatch(l); m != nil && i > 0 {
				cur.frames = append(cur.frames, n-1, n)
				if m[1] == mutFile && m[2] == fmt.Sprint(mutLine) {
					cur.mutFrames = append(cur.mutFrames, n-1, n)
				}
			}
		}
	}
	return order
}

func genCargoTest(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	c := crateRegexSyntax
	if err := c.prepare("cargo test --lib --no-run"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	bt := family.Pick(r, []string{"0", "0", "1"})
	cmdline := family.Pick(r, []string{"cargo test --lib", "cargo test --lib", "cargo test --offline --lib", "cargo test --lib -- --test-threads=1"})
	runs := 0
	for tries := 0; tries < 12 && runs < 3; tries++ {
		f := family.Pick(r, c.sources)
		b, _ := os.ReadFile(filepath.Join(c.dir, f))
		src := string(b)
		lines := strings.Split(src, "\n")
		limit := len(lines)
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "#[cfg(test)]") {
				limit = i
				break
			}
		}
		var cands []family.Mutation
		for _, m := range family.Candidates(src, family.LangC) {
			if m.Line < limit && strings.HasPrefix(lines[m.Line-1], "        ") && !strings.Contains(lines[m.Line-1], "assert") {
				cands = append(cands, m)
			}
		}
		if len(cands) == 0 {
			continue
		}
		m := family.Pick(r, cands)
		os.WriteFile(filepath.Join(c.dir, f), []byte(m.Apply(src)), 0o644)
		runs++
		out, code, err := runCmd(c.dir, 4*time.Minute, []string{"CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never", "RUST_BACKTRACE=" + bt}, cmdline)
		os.WriteFile(filepath.Join(c.dir, f), b, 0o644)
		if err != nil {
			continue
		}
		if code == 0 || strings.Contains(out, "error[E") || strings.Contains(out, "error: could not compile") {
			// Survived the tests, or did not compile: try another.
			continue
		}
		out = cleanPaths(out, c.dir)
		return labelCargoTest(r, idx, out, cmdline, f, m)
	}
	return nil, fmt.Errorf("no mutation failed a test (%d runs)", runs)
}

func labelCargoTest(r *rand.Rand, idx int, out, cmdline, file string, m family.Mutation) (*family.Scenario, error) {
	lines := family.SplitLines(out)
	if len(lines) > 3000 {
		return nil, fmt.Errorf("output too long")
	}
	fails := parseCargoTest(lines, file, m.Line)
	if len(fails) == 0 {
		return nil, fmt.Errorf("exit code set but no failing test parsed")
	}
	if len(fails) > 20 {
		return nil, fmt.Errorf("%d failures: too broad", len(fails))
	}
	for _, f := range fails {
		if f.testLine == 0 || f.head == 0 || f.panic == 0 || f.listEntry == 0 {
			return nil, fmt.Errorf("failure %s not fully parsed", f.name)
		}
	}
	var qs family.Questions
	add := qs.Add
	var names []int
	for _, f := range fails {
		names = append(names, f.testLine, f.listEntry)
	}
	add(tmpl(r, []string{
		"Which tests failed?", "Which tests broke after my change?", "List the failing tests.", "what's failing now",
		"Which unit tests don't pass anymore?", "Name the tests that fail.", "Which test functions are red?", "What failed in cargo test?",
		"After my edit which tests regressed?", "Which tests should I look at?",
	}), names)
	f := fails[0]
	fg := append(append([]int{f.head, f.panic, f.testLine, f.listEntry}, f.msg...), f.frames...)
	short := f.name[strings.LastIndex(f.name, "::")+1:]
	short = strings.TrimPrefix(short, ":")
	kv := []string{"{test}", f.name, "{short}", short, "{file}", file, "{base}", filepath.Base(file)}
	add(tmpl(r, []string{
		"Why does {test} fail?", "What's the panic in {short}?", "Show me the failure of {short}.", "What did {short} expect and what did it get?",
		"Where does {test} panic?", "{short} is failing — what's the assertion?", "What are left and right in {short}?", "explain the {short} failure",
		"What's the panic message for {test}?", "Why is {short} red?",
	}, kv...), fg)
	add(tmpl(r, []string{
		"Why does the first failing test fail?", "What assertion failed?", "What's the expected vs actual value?", "Where is the panic coming from?",
		"What does the failure output say?", "Show the panic and its location.", "Why are the tests failing?", "What values differ in the failing assert?",
		"what blew up", "give me the panic message and where it happened",
	}), fg)
	var inMut []int
	for _, x := range fails {
		if x.panicFile == file && x.panicLine == m.Line {
			inMut = append(inMut, x.panic)
		}
		inMut = append(inMut, x.mutFrames...)
	}
	if len(inMut) > 0 {
		add(tmpl(r, []string{"Does anything point at {file}?", "Which panics or frames are in {base}?", "Where in the library code (not the tests) does it panic?",
			"Is {base} in any panic location or backtrace?", "Which failure points into the code I changed in {base}?"}, kv...), inMut)
	}
	var sum []int
	for i, l := range lines {
		if strings.HasPrefix(l, "test result: ") {
			sum = append(sum, i+1)
		}
	}
	if r.IntN(4) == 0 {
		add(tmpl(r, []string{"How many tests passed and how many failed?", "What's the test summary?", "How many failures?", "how many tests ran"}), sum)
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return &family.Scenario{
		Name: fmt.Sprintf("regex-syntax-%s%d-%s-%s-%d", seedTag, idx, m.Kind, strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(file, "src/"), ".rs"), "/", "_"), m.Line),
		Path: "cargo-test.log", Runner: cmdline, Source: repoRegex.source(), Text: out, Qs: qs,
	}, nil
}
