package main

import (
	"fmt"
	"math/rand/v2"
	"path"
	"sort"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// fill replaces {k} by v for each k, v pair.
func fill(s string, kv ...string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		s = strings.ReplaceAll(s, "{"+kv[i]+"}", kv[i+1])
	}
	return s
}

func ask(r *rand.Rand, tmpl []string, kv ...string) string { return fill(family.Pick(r, tmpl), kv...) }

var (
	qWhichFailed = []string{
		"Which tests failed?",
		"which tests are failing now?",
		"List the failing tests.",
		"What tests broke in this run?",
		"Which test cases did not pass?",
		"give me the names of the tests that failed",
		"Which tests fail after my change?",
		"what's red in this go test run?",
		"Which tests in {pkg} failed?",
		"List every failing test (and subtest) in {pkg}.",
		"Did anything in {pkg} fail? Which tests?",
		"which subtests fail?",
	}
	qWhyNamed = []string{
		"Why does {test} fail?",
		"What is the failure message of {test}?",
		"{test} is failing — what did it report?",
		"What did {test} expect and what did it get?",
		"show me the assertion output for {test}",
		"Why is {test} red?",
		"What went wrong in {test}?",
		"what error does {test} print?",
		"Explain the failure of {test}.",
		"Which check in {test} failed, and with what values?",
		"What does the failure output of {test} say?",
	}
	qWhyAnon = []string{
		"Why do the tests fail?",
		"What assertion failed after my change?",
		"What values did the failing assertions expect and get?",
		"which test broke after my change to the {kind} in {file}, and how?",
		"I edited {file}; what do the failing tests report?",
		"What are the failure messages?",
		"show me what the failing tests complain about",
		"What did the broken test expect vs. what it actually got?",
		"Summarise the test failures with their messages.",
		"Why is the suite red?",
		"What went wrong in the test run?",
	}
	qPanicWhere = []string{
		"Where is the panic coming from in our code?",
		"Which line of our code panicked?",
		"show me the stack frames in the project that led to the panic",
		"What panicked and where in {file}?",
		"Where in the library code does the crash happen?",
		"The tests crash — which function and line of the module is at fault?",
		"Find the frame in our code that raised the panic.",
		"what's the panic message and the first project frame?",
		"Which of our functions are on the panicking goroutine's stack?",
		"Trace the panic to our source: file and line?",
		"Where does the runtime error originate in {pkg}?",
	}
	qPanicMine = []string{
		"Is the panic coming from the line I changed in {file}?",
		"I edited {file} line {line}; does the crash go through it?",
		"Does the stack trace point at {file}:{line}?",
		"which frame of the trace is my change in {file}?",
		"Did my edit at {file}:{line} cause this panic? Show the frame.",
		"Find {file} in the panic trace.",
		"where does {file} appear in the goroutine trace?",
		"Is {file}:{line} on the panicking stack?",
		"show the panic and the frame in {file}",
		"Which frame is in {file}, the file I touched?",
	}
	qPanicWhat = []string{
		"What panicked?",
		"What is the panic message, and which test was running?",
		"Which test crashed with a panic, and why?",
		"what runtime error do the tests hit?",
		"Which test triggered the panic?",
		"The test binary crashed: what was the panic?",
		"why did {pkg} crash?",
		"What's the panic value?",
		"which test blew up, and with what panic?",
		"Did a test panic? Which one and with what message?",
	}
	qBuild = []string{
		"Why does the build fail?",
		"What compile error do I get?",
		"why won't the tests compile?",
		"What is the compiler complaining about?",
		"Which file and line fail to compile?",
		"The test run says build failed — what's the error?",
		"What broke the build of {pkg}?",
		"show me the compile errors in {file}",
		"Which errors does go report for {pkg}?",
		"what did I break in {file} that stops it compiling?",
		"Why is {pkg} marked [build failed]?",
	}
	qBuildMine = []string{
		"Which errors are in {file}?",
		"what does the compiler say about {file}?",
		"Show only the compile errors for {file}.",
		"Which lines of {file} fail to compile?",
		"errors in {file}?",
		"Did my edit to {file} break the build? Where exactly?",
		"Which diagnostics point into {file}?",
		"List the compile errors reported in {file}.",
		"what's wrong in {file} according to go?",
		"Where in {file} are the type errors?",
	}
	qFailedPkgs = []string{
		"Which packages failed?",
		"Which packages have failing tests?",
		"what packages are marked FAIL?",
		"List the packages that did not pass.",
		"Which go packages failed in this run?",
		"show the FAIL lines for packages",
		"which package is broken?",
		"Which import paths failed?",
		"Name the package(s) whose tests failed.",
		"In which package is the failure?",
	}
	qSlowest = []string{
		"Which package took the longest to test?",
		"What's the slowest package in this run?",
		"which package's tests ran longest?",
		"Which package has the longest test time?",
		"Where did the test run spend the most time?",
		"slowest package?",
		"Which package took the most seconds?",
		"Which package's test binary ran longest?",
		"what package dominates the test time?",
		"Which package is slowest to test?",
	}
	qCached = []string{
		"Which packages' results came from the cache?",
		"Which packages were not re-run (cached)?",
		"which test results are cached?",
		"What packages show (cached)?",
		"Which packages passed from cache?",
		"List the packages go test did not rerun.",
		"Which results were reused from a previous run?",
		"Which packages does go report as cached?",
		"what got served from the test cache?",
		"Show the cached ok lines.",
	}
	qNoTests = []string{
		"Which packages have no test files?",
		"Which packages are untested?",
		"what packages does go test skip for lack of tests?",
		"List packages without tests.",
		"Which packages report [no test files]?",
		"which packages have zero tests?",
		"Show the packages that have no _test.go files.",
		"Which packages were not tested at all?",
		"packages with no tests?",
		"What packages lack test files?",
	}
	qSkipped = []string{
		"Which tests were skipped, and why?",
		"What tests got skipped?",
		"List the skipped tests with their skip reason.",
		"why are some tests skipped?",
		"Which tests did not run (SKIP)?",
		"Show the skipped tests.",
		"Which subtests were skipped?",
		"Are any tests skipped? Which ones?",
		"what was skipped in this run and for what reason?",
		"Which tests report SKIP?",
	}
	qDuration = []string{
		"How long did {test} take?",
		"What was the run time of {test}?",
		"Did {test} pass, and how long did it take?",
		"how many seconds did {test} run?",
		"Show the result line of {test}.",
		"What's the status of {test}?",
		"Did {test} pass?",
		"Timing of {test}?",
		"{test}: pass or fail, and duration?",
		"What result did {test} get?",
	}
)

// capGold keeps at most n lines of a gold set, always the first ones (the
// header and the start of the explanation).
func capGold(g []int, n int) []int {
	g = family.UniqSorted(g)
	if len(g) > n {
		return g[:n]
	}
	return g
}

// failGold is the header and message lines of one failure.
func failGold(f failure) []int { return append([]int{f.header}, f.msgs...) }

// panicGold returns the panic lines and the project frames of the
// panicking goroutine (those in the module's own non-test files first).
func panicGold(tr *testRun, lines []string, mutFile string, mutLine int) (msg, frames []int, mutHit bool) {
	if len(tr.panic) == 0 {
		return
	}
	p0 := tr.panic[0]
	msg = append(msg, p0)
	for _, p := range tr.panic[1:] {
		if p <= p0+1 && strings.HasPrefix(lines[p-1], "\t") {
			msg = append(msg, p) // the repeated message after [recovered]
		}
	}
	// The panicking goroutine's block ends at the first blank line after
	// its "goroutine N [running]:" header.
	start, end := 0, len(lines)
	for i := p0; i < len(lines); i++ {
		if start == 0 && strings.HasPrefix(lines[i], "goroutine ") {
			start = i + 1
			continue
		}
		if start > 0 && strings.TrimSpace(lines[i]) == "" {
			end = i + 1
			break
		}
	}
	for _, fr := range tr.frames {
		if fr.at <= start || fr.at > end {
			continue
		}
		if !strings.HasPrefix(fr.file, family.HomeDir+"/") {
			continue
		}
		hit := fr.file == family.HomeDir+"/"+mutFile && fr.line == mutLine
		mutHit = mutHit || hit
		// The innermost project frames answer "where"; deeper callers
		// (test helpers, the test itself) only while few.
		if len(frames) < 10 || hit {
			frames = append(frames, fr.fn, fr.at)
		}
	}
	return
}

// scenarioQs builds the questions over a plain or -v text run. m is the
// mutation; pkg the import path tested (for wording).
func scenarioQs(r *rand.Rand, lines []string, tr *testRun, mu *mutant, pkgName string, verbose bool) []family.Question {
	var qs []family.Question
	file := mu.file
	kv := []string{"pkg", pkgName, "file", path.Base(file), "kind", kindWord(mu.m.Kind)}
	seen := map[string]bool{}
	add := func(q string, g []int) {
		g = family.UniqSorted(g)
		// A second question with the same answer adds nothing (Check
		// would drop it anyway).
		if k := fmt.Sprint(g); len(g) > 0 && !seen[k] {
			seen[k] = true
			qs = append(qs, family.Question{Query: q, Gold: g})
		}
	}
	// Build failure: the diagnostics under their # header.
	if len(tr.diags) > 0 {
		var g []int
		for _, d := range tr.diags {
			g = append(g, d.header, d.line)
		}
		add(ask(r, qBuild, kv...), capGold(g, 20))
		// The diagnostics in the file I edited, by line.
		var mine []int
		for _, d := range tr.diags {
			if d.file == mu.file {
				mine = append(mine, d.line)
			}
		}
		if len(mine) > 0 && len(mine) < len(tr.diags) {
			add(ask(r, qBuildMine, kv...), mine)
		}
	}
	var headers []int
	for _, f := range tr.fails {
		headers = append(headers, f.header)
	}
	if len(headers) > 0 && len(headers) <= 25 {
		add(ask(r, qWhichFailed, kv...), headers)
	}
	// Panic.
	pmsg, pframes, hit := panicGold(tr, lines, mu.file, mu.m.Line)
	if len(pmsg) > 0 {
		g := append(append([]int{}, pmsg...), pframes...)
		add(ask(r, qPanicWhere, kv...), g)
		if hit && r.IntN(2) == 0 {
			// The frame at the mutated line, asked from the edit's side.
			for k := 1; k < len(pframes); k += 2 {
				if strings.HasSuffix(lines[pframes[k]-1], fmt.Sprintf("/%s:%d", mu.file, mu.m.Line)) || strings.Contains(lines[pframes[k]-1], fmt.Sprintf("/%s:%d ", mu.file, mu.m.Line)) {
					add(ask(r, qPanicMine, "file", path.Base(mu.file), "line", fmt.Sprint(mu.m.Line)), append(append([]int{}, pmsg...), pframes[k-1], pframes[k]))
					break
				}
			}
		}
		g = append([]int{}, pmsg...)
		// The test that was running: the last failure header before the panic.
		for _, f := range tr.fails {
			if f.header < pmsg[0] {
				g = append(g, f.header)
			}
		}
		if len(g) > len(pmsg) {
			g = append(pmsg[:len(pmsg):len(pmsg)], g[len(g)-1])
		}
		add(ask(r, qPanicWhat, kv...), g)
	}
	// Failure messages: one named test, and the anonymous "why" over all.
	var withMsg []failure
	for _, f := range tr.topFails() {
		sub := tr.subtreeFails(f.name)
		n := 0
		for _, s := range sub {
			n += 1 + len(s.msgs)
		}
		if n > 1 && n <= 24 {
			withMsg = append(withMsg, f)
		}
	}
	if len(withMsg) > 0 {
		f := family.Pick(r, withMsg)
		var g []int
		for _, s := range tr.subtreeFails(f.name) {
			g = append(g, failGold(s)...)
		}
		add(ask(r, qWhyNamed, append(kv, "test", f.name)...), g)
		var all []int
		for _, s := range tr.fails {
			all = append(all, failGold(s)...)
		}
		if len(all) <= 24 && len(pmsg) == 0 {
			add(ask(r, qWhyAnon, kv...), all)
		}
	}
	// Package lines.
	var failed, cached, notests []int
	var slow *pkgLine
	tie := false
	for k, p := range tr.pkgs {
		switch {
		case p.status == "FAIL":
			failed = append(failed, p.line)
		case p.cached:
			cached = append(cached, p.line)
		case p.noTests:
			notests = append(notests, p.line)
		}
		if p.status == "ok" && !p.cached && p.secs > 0 {
			if slow == nil || p.secs > slow.secs {
				slow, tie = &tr.pkgs[k], false
			} else if p.secs == slow.secs {
				tie = true
			}
		}
	}
	if len(failed) > 0 && (len(tr.pkgs) > 2 || r.IntN(3) == 0) {
		add(ask(r, qFailedPkgs, kv...), failed)
	}
	if len(tr.pkgs) > 2 && r.IntN(3) == 0 {
		switch {
		case slow != nil && !tie && r.IntN(2) == 0:
			add(ask(r, qSlowest, kv...), []int{slow.line})
		case len(cached) > 0 && r.IntN(2) == 0:
			add(ask(r, qCached, kv...), cached)
		case len(notests) > 0:
			add(ask(r, qNoTests, kv...), notests)
		}
	}
	if verbose && r.IntN(3) == 0 {
		var sk []int
		for _, s := range tr.skips {
			sk = append(sk, failGold(s)...)
		}
		if len(sk) > 0 && len(sk) <= 20 {
			add(ask(r, qSkipped, kv...), sk)
		} else if len(tr.passes) > 0 {
			names := make([]string, 0, len(tr.passes))
			for n := range tr.passes {
				names = append(names, n)
			}
			sort.Strings(names)
			nm := family.Pick(r, names)
			add(ask(r, qDuration, "test", nm), []int{tr.passes[nm]})
		}
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return qs
}

func kindWord(k string) string {
	switch k {
	case "compare":
		return "comparison"
	case "off-by-one", "constant":
		return "constant"
	case "logic":
		return "condition"
	case "bool":
		return "boolean"
	case "arith":
		return "arithmetic"
	case "swap":
		return "argument order"
	case "drop":
		return "code"
	}
	return "code"
}

// pkgImport names the package tested, for questions.
func pkgImport(w *work, p pkgInfo) string {
	if p.rel == "." {
		return w.path
	}
	return w.path + "/" + strings.TrimPrefix(p.rel, "./")
}
