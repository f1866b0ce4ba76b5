package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// failure is one failing test as its runner printed it, by line number.
type failure struct {
	title     string
	header    []int // lines naming the test (numbered header, not ok / ✖ line, location)
	msg       []int // the error message and its expected/actual or diff lines
	frames    []int // stack frames in project code (test and library files)
	libFrames []int // the frames in library (non-test) files
	mutFrames []int // the frames at the mutated file:line
}

func (f failure) all() []int {
	return concat(f.header, f.msg, f.frames)
}

// runInfo is what the questions need from a parsed test run.
type runInfo struct {
	fails    []failure
	passLine int // summary line with the pass count, 0 if none
	failLine int // summary line with the fail count, 0 if none
	mutFile  string
	mut      family.Mutation
}

func concat(xs ...[]int) []int {
	var out []int
	for _, x := range xs {
		out = append(out, x...)
	}
	return family.UniqSorted(out)
}

// maxGold is the largest gold set a question keeps: an answer of more
// lines is not a pruning target but the whole output.
const maxGold = 30

var kindPhrase = map[string][]string{
	"compare":    {"a comparison", "one of the comparison operators", "a boundary check"},
	"off-by-one": {"an index", "a numeric literal", "an offset"},
	"constant":   {"a constant", "a numeric literal"},
	"logic":      {"a condition", "the && / || logic", "a boolean condition"},
	"bool":       {"a boolean flag", "a true/false default"},
	"arith":      {"some arithmetic", "a + / - expression"},
	"swap":       {"the argument order of a call", "a call's arguments"},
	"drop":       {"a line I thought was dead code", "a statement", "what looked like a redundant line"},
}

var qListFailed = []string{
	"Which tests failed?",
	"List the failing tests.",
	"what tests are broken in this run?",
	"Which test cases did not pass?",
	"Give me the names of all failing tests.",
	"What's failing here?",
	"Show me every failing test in this output.",
	"which specs fail now",
	"Which tests should I look at — what failed?",
	"Name the tests that went red.",
	"what failed in the test run",
}

var qListFailedMut = []string{
	"I changed %s in %s; which tests break now?",
	"After my edit to %[2]s (%[1]s), which tests fail?",
	"Which tests did my change to %[1]s in %[2]s break?",
	"I touched %s in %s. What does the suite report as failing?",
}

var qListFailedMutAnon = []string{
	"I changed %s in the library; which tests break now?",
	"After tweaking %s, which tests fail?",
	"which tests broke after my change to %s?",
}

var qNamed = []string{
	"Why does %q fail?",
	"What's the assertion error in '%s'?",
	"Show me the failure details for %s.",
	"'%s' is failing — what did it get vs expect?",
	"what went wrong in the test %q",
	"Explain the failure of `%s`.",
	"I see %q failing in CI; what's the error?",
	"Where does the test '%s' fail and with what message?",
	"What does the output say about %s?",
	"Give me the error and the stack for '%s'.",
	"%s fails, why?",
}

var qFirst = []string{
	"Why is the first failing test failing?",
	"What's the first failure and its error?",
	"Show me the details of the first test that failed.",
	"what is the first failing test complaining about",
	"Walk me through the first failure: which test, what error, where.",
	"Give me the first failure's message and stack.",
}

var qExpect = []string{
	"What value did the failing assertion expect, and what did it get?",
	"What was expected vs actual in the failure?",
	"expected vs actual for the failing test?",
	"What did the failing test receive instead of the expected value?",
	"Show me the expected and actual values of the failing assertion.",
	"what was the actual result in the failed check",
	"which values differ in the failed assertion?",
}

var qExpectNamed = []string{
	"What did %q expect and what did it actually get?",
	"In '%s', what's the expected vs actual value?",
	"what value did the assertion in %s receive?",
	"Show me the diff for %q.",
}

var qLib = []string{
	"Where in our library code is the error thrown?",
	"Which frame in the project's own code raised the error?",
	"show me the stack frames in our code (not node internals)",
	"What line of the library blew up?",
	"where in lib does the exception come from?",
	"Which of our source files appears in the stack trace of the error?",
}

var qMutFrame = []string{
	"Does the stack trace point at the line I changed in %s?",
	"Is %s:%d in any of the stack traces?",
	"Which failure goes through line %[2]d of %[1]s?",
}

var qPassCount = []string{
	"How many tests passed?",
	"how many tests pass in this run",
	"What's the pass count?",
	"How many specs succeeded?",
}

var qFailCount = []string{
	"How many tests failed?",
	"how many failures are there?",
	"What's the number of failing tests?",
	"count of failed tests?",
}

// runQuestions builds 2-5 questions over a parsed test run.
func runQuestions(r *rand.Rand, info runInfo) []family.Question {
	var qs []family.Question
	add := func(q string, gold []int) {
		if len(gold) > 0 && len(gold) <= maxGold {
			qs = append(qs, family.Question{Query: q, Gold: gold})
		}
	}
	if len(info.fails) == 0 {
		return nil
	}
	var heads []int
	for _, f := range info.fails {
		heads = append(heads, f.header...)
	}
	// Which tests failed: named after the mutation or not, once.
	switch r.IntN(3) {
	case 0:
		add(family.Pick(r, qListFailed), heads)
	case 1:
		ph := family.Pick(r, kindPhrase[info.mut.Kind])
		add(fmt.Sprintf(family.Pick(r, qListFailedMut), ph, info.mutFile), heads)
	default:
		ph := family.Pick(r, kindPhrase[info.mut.Kind])
		add(fmt.Sprintf(family.Pick(r, qListFailedMutAnon), ph), heads)
	}
	// One named failure (a random one) and, half the time, the first one
	// without its name.
	f := family.Pick(r, info.fails)
	add(fmt.Sprintf(family.Pick(r, qNamed), f.title), f.all())
	if r.IntN(2) == 0 {
		add(family.Pick(r, qFirst), info.fails[0].all())
	}
	if r.IntN(2) == 0 {
		if len(info.fails) == 1 {
			add(family.Pick(r, qExpect), concat(info.fails[0].msg))
		} else {
			g := family.Pick(r, info.fails)
			add(fmt.Sprintf(family.Pick(r, qExpectNamed), g.title), concat(g.header[len(g.header)-1:], g.msg))
		}
	}
	var lib, mut []int
	for _, f := range info.fails {
		if len(f.libFrames) > 0 && len(lib) == 0 {
			lib = concat(f.msg[:min(1, len(f.msg))], f.libFrames)
		}
		mut = append(mut, f.mutFrames...)
	}
	if len(lib) > 0 {
		add(family.Pick(r, qLib), lib)
	}
	if len(mut) > 0 && r.IntN(2) == 0 {
		add(fmt.Sprintf(family.Pick(r, qMutFrame), info.mutFile, info.mut.Line), family.UniqSorted(mut))
	}
	if r.IntN(5) == 0 && info.passLine > 0 {
		add(family.Pick(r, qPassCount), []int{info.passLine})
	} else if r.IntN(5) == 0 && info.failLine > 0 {
		add(family.Pick(r, qFailCount), []int{info.failLine})
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return qs
}

// frameAt says whether a stack line points at file:line (file relative to
// the project, the line may show it relative or absolute).
func frameAt(s, file string, line int) bool {
	return strings.Contains(s, file+":"+fmt.Sprint(line)+":")
}
