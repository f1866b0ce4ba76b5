package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// The fixtures under testdata are real outputs this generator captured
// (cleaned; the mocha one keeps the tree's head and the whole failure
// section), so the parsers are tested on what the tools print.

func fixture(t *testing.T, name string) (string, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b), family.SplitLines(string(b))
}

// texts returns the trimmed text of lines ns.
func texts(lines []string, ns []int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, strings.TrimSpace(lines[n-1]))
	}
	return out
}

func TestParseMocha(t *testing.T) {
	out, lines := fixture(t, "mocha_spec.txt")
	info := parseMocha(out, "lib/parse.js", 27)
	if len(info.fails) != 3 {
		t.Fatalf("got %d failures, want 3", len(info.fails))
	}
	f := info.fails[0]
	if got := texts(lines, f.header); strings.Join(got, "|") != "1) braces|should support brace ranges:" {
		t.Errorf("header %q", got)
	}
	if f.title != "should support brace ranges" {
		t.Errorf("title %q", f.title)
	}
	if got := texts(lines, f.msg); len(got) != 1 || got[0] != "TypeError: args.sort is not a function" {
		t.Errorf("msg %q", got)
	}
	// Six project frames (five in lib, one in the test), none internal.
	if len(f.frames) != 6 || len(f.libFrames) != 5 {
		t.Errorf("frames %q lib %d", texts(lines, f.frames), len(f.libFrames))
	}
	if got := texts(lines, f.mutFrames); len(got) != 1 || !strings.Contains(got[0], "lib/parse.js:27:8") {
		t.Errorf("mutated frame %q", got)
	}
	if !strings.Contains(lines[info.passLine-1], "1974 passing") || !strings.Contains(lines[info.failLine-1], "3 failing") {
		t.Errorf("summary lines %d %d", info.passLine, info.failLine)
	}
}

func TestParseNodeSpec(t *testing.T) {
	out, lines := fixture(t, "node_spec.txt")
	info := parseNodeSpec(out, "lib/parse.js", 1)
	if len(info.fails) != 1 {
		t.Fatalf("got %d failures, want 1", len(info.fails))
	}
	f := info.fails[0]
	got := texts(lines, f.all())
	want := []string{
		"test at test/options.noglobstar.js:7:3",
		"✖ should disable extglob support when options.noglobstar is true",
		"AssertionError [ERR_ASSERTION]: The expression evaluated to a falsy value:",
		"assert(!isMatch('a/b/c', '**', { noglobstar: true }))",
		"at TestContext.<anonymous> (/home/dev/project/test/options.noglobstar.js:9:5)",
		"actual: false,",
		"expected: true,",
	}
	if len(got) != len(want) {
		t.Fatalf("gold %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d: %q, want prefix %q", i, got[i], want[i])
		}
	}
	if lines[info.failLine-1] != "ℹ fail 1" {
		t.Errorf("fail line %q", lines[info.failLine-1])
	}
}

func TestParseNodeTap(t *testing.T) {
	out, lines := fixture(t, "node_tap.txt")
	info := parseNodeTap(out, "lib/utils.js", 45)
	if len(info.fails) != 4 {
		t.Fatalf("got %d failures, want 4 (suites that only failed by a subtest are not tests)", len(info.fails))
	}
	f := info.fails[0]
	got := texts(lines, f.all())
	if got[0] != "not ok 3 - should use escaped characters as literals" || !strings.HasPrefix(got[1], "location:") ||
		got[2] != "error: 'output.startsWith is not a function'" {
		t.Errorf("gold %q", got)
	}
	if len(f.libFrames) != 5 || len(f.mutFrames) != 1 {
		t.Errorf("lib frames %d, mutated %q", len(f.libFrames), texts(lines, f.mutFrames))
	}
}

func TestParseTape(t *testing.T) {
	out, lines := fixture(t, "tape.txt")
	info := parseTape(out, "index.js", 1)
	if len(info.fails) != 1 {
		t.Fatalf("got %d failures", len(info.fails))
	}
	f := info.fails[0]
	got := texts(lines, f.all())
	want := []string{"# boolean default to null", "not ok 4 should be strictly equal", "operator: equal", "expected: true",
		"actual:   null", "at: Test.<anonymous> (/home/dev/project/test/default_bool.js:32:7)",
		"at Test.<anonymous> (/home/dev/project/test/default_bool.js:32:7)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("gold\n%q\nwant\n%q", got, want)
	}
	if !strings.HasPrefix(lines[info.failLine-1], "# fail") {
		t.Errorf("fail line %q", lines[info.failLine-1])
	}
}

func TestParseTsc(t *testing.T) {
	out, lines := fixture(t, "tsc_pretty.txt")
	diags, found := parseTsc(out)
	if len(diags) != 2 || !strings.HasPrefix(lines[found-1], "Found 2 errors") {
		t.Fatalf("diags %v found %d", diags, found)
	}
	d := diags[0]
	if d.file != "src/addSeconds/index.ts" || d.line != 40 || d.code != "TS2552" {
		t.Errorf("diag %+v", d)
	}
	// Header, code frame and squiggle, related location with its frame
	// and note: 7 lines, no blank.
	if got := texts(lines, d.lines); len(got) != 7 || got[6] != "'options' is declared here." {
		t.Errorf("lines %q", got)
	}
	out, lines = fixture(t, "tsc_plain.txt")
	diags, _ = parseTsc(out)
	if len(diags) != 1 || len(diags[0].lines) != 2 || !strings.HasPrefix(lines[diags[0].lines[1]-1], "  'ResultDate' could") {
		t.Errorf("plain diags %+v", diags)
	}
}

func TestInjectOneKeepsLineCount(t *testing.T) {
	src := []string{"export function f(a: number, b: number): number {", "  const total = addAll(a, b);", "  return total.valueOf();", "}"}
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range tscKinds {
		ln, after, ok := injectOne(r, src, k)
		if !ok {
			t.Errorf("%s: no site", k)
			continue
		}
		if after == src[ln-1] || strings.Contains(after, "\n") {
			t.Errorf("%s: line %d unchanged or split: %q", k, ln, after)
		}
	}
}

func TestQuestionsGoldValid(t *testing.T) {
	out, _ := fixture(t, "mocha_spec.txt")
	info := parseMocha(out, "lib/parse.js", 27)
	info.mut = family.Mutation{Line: 27, Kind: "swap"}
	for seed := uint64(0); seed < 20; seed++ {
		sc := &family.Scenario{Text: out, Qs: runQuestions(rand.New(rand.NewPCG(seed, 1)), info)}
		if err := sc.Check(5); err != nil || len(sc.Qs) < 2 {
			t.Fatalf("seed %d: %v (%d questions)", seed, err, len(sc.Qs))
		}
	}
}

// TestTscRealRun type-checks one date-fns function with an injected
// fault when typescript and the checkout are installed (setup.sh).
func TestTscRealRun(t *testing.T) {
	tools, repos := os.Getenv("JSTOOLS"), os.Getenv("JSREPOS")
	if tools == "" || repos == "" {
		t.Skip("set JSTOOLS and JSREPOS (see setup.sh) to run the real tools")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	e := &env{repos: repos, tools: tools}
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	sc, err := e.genTsc(rand.New(rand.NewPCG(1, 1)), 0, dir)
	if err != nil {
		t.Skipf("scenario dropped: %v", err)
	}
	if err := sc.Check(5); err != nil {
		t.Fatal(err)
	}
}
