package main

import (
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// The fixtures under testdata are real outputs captured by this generator
// (scrubbed); the tests check the labels derived from them.

func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return family.SplitLines(string(b))
}

func names(fs []failure) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.name)
	}
	return out
}

func TestPlainPanicFrames(t *testing.T) {
	lines := readLines(t, "plain_panic.txt")
	tr := parseTestText(lines, false)
	if got := names(tr.fails); !reflect.DeepEqual(got, []string{"TestCORSMethodMiddlewareSubrouter"}) {
		t.Fatalf("fails = %v", got)
	}
	msg, frames, hit := panicGold(tr, lines, "regexp.go", 386)
	if !reflect.DeepEqual(msg, []int{2}) {
		t.Errorf("panic lines = %v", msg)
	}
	if !hit || frames[0] != 11 || frames[1] != 12 {
		t.Errorf("frames = %v hit=%v; want the mutated regexp.go:386 frame (lines 11-12) first", frames, hit)
	}
	for _, l := range frames {
		if strings.Contains(lines[l-1], "/usr/local/go/") {
			t.Errorf("stdlib frame in gold: %q", lines[l-1])
		}
	}
	if len(tr.pkgs) != 1 || tr.pkgs[0].status != "FAIL" || tr.pkgs[0].line != 31 {
		t.Errorf("pkgs = %+v", tr.pkgs)
	}
}

func TestPlainTestifyBlock(t *testing.T) {
	lines := readLines(t, "plain_testify.txt")
	tr := parseTestText(lines, false)
	if got := names(tr.fails); !reflect.DeepEqual(got, []string{"TestWriter", "TestWriter/message_split_across_multiple_writes"}) {
		t.Fatalf("fails = %v", got)
	}
	sub := tr.fails[1]
	// The testify block: location, Error, expected, actual, ... Test.
	var text []string
	for _, l := range sub.msgs {
		text = append(text, strings.TrimSpace(lines[l-1]))
	}
	joined := strings.Join(text, "\n")
	for _, want := range []string{"writer_test.go:155:", "Error Trace:", "expected:", "actual  :"} {
		if !strings.Contains(joined, want) {
			t.Errorf("testify block misses %q:\n%s", want, joined)
		}
	}
}

func TestPlainTestifyThenPanic(t *testing.T) {
	lines := readLines(t, "plain_testify_panic.txt")
	tr := parseTestText(lines, false)
	if len(tr.fails) != 1 || len(tr.fails[0].msgs) < 3 || len(tr.panic) == 0 {
		t.Fatalf("fails=%+v panic=%v", tr.fails, tr.panic)
	}
	// The test itself is the only project frame of this panic.
	_, frames, _ := panicGold(tr, lines, "binding/form_mapping.go", 1)
	if len(frames) != 2 || !strings.Contains(lines[frames[1]-1], "multipart_form_mapping_test.go:36") {
		t.Errorf("frames = %v", frames)
	}
}

func TestPlainBuildErrors(t *testing.T) {
	lines := readLines(t, "plain_build.txt")
	tr := parseTestText(lines, false)
	if len(tr.diags) != 8 || tr.diags[0].header != 1 || tr.diags[0].file != "version7.go" || tr.diags[0].at != 66 {
		t.Fatalf("diags = %+v", tr.diags)
	}
	if len(tr.pkgs) != 1 || !tr.pkgs[0].buildFailure {
		t.Errorf("pkgs = %+v", tr.pkgs)
	}
}

func TestVerboseAttribution(t *testing.T) {
	lines := readLines(t, "verbose.txt")
	tr := parseTestText(lines, true)
	if got := names(tr.fails); !reflect.DeepEqual(got, []string{"TestCORSMethodMiddleware", "TestCORSMethodMiddleware/does_not_set_without_OPTIONS_matcher"}) {
		t.Fatalf("fails = %v", got)
	}
	// -v streams the message before the --- FAIL line; it belongs to the
	// subtest that was running.
	var msgs []int
	for _, f := range tr.subtreeFails("TestCORSMethodMiddleware") {
		msgs = append(msgs, f.msgs...)
	}
	if len(msgs) != 1 || !strings.Contains(lines[msgs[0]-1], "middleware_test.go:518") {
		t.Errorf("msgs = %v", msgs)
	}
	if len(tr.passes) < 50 {
		t.Errorf("only %d passes parsed", len(tr.passes))
	}
}

func TestJSONGocheck(t *testing.T) {
	jl := readLines(t, "json_gocheck.jsonl")
	text, at, evs := jsonToText(jl)
	tr := parseTestText(text, true)
	var check *failure
	for k := range tr.fails {
		if tr.fails[k].check {
			check = &tr.fails[k]
		}
	}
	if check == nil || check.name != "S.TestSortedOutput" {
		t.Fatalf("fails = %+v", tr.fails)
	}
	if at[check.header-1] != 6 {
		t.Errorf("check header maps to JSON line %d, want 6", at[check.header-1])
	}
	var gold []string
	for _, l := range check.msgs {
		gold = append(gold, text[l-1])
	}
	if len(gold) < 3 || !strings.HasPrefix(gold[len(gold)-1], "... Error:") {
		t.Errorf("gocheck block = %q", gold)
	}
	fails := 0
	for _, ev := range evs {
		if ev.Action == "fail" {
			fails++
		}
	}
	if fails != 2 {
		t.Errorf("%d fail events, want 2 (the test and the package)", fails)
	}
}

func TestQuestionsGoldNonBlank(t *testing.T) {
	for _, fx := range []string{"plain_panic.txt", "plain_testify.txt", "plain_testify_panic.txt", "plain_build.txt", "verbose.txt"} {
		lines := readLines(t, fx)
		verbose := fx == "verbose.txt"
		tr := parseTestText(lines, verbose)
		mu := &mutant{w: &work{module: module{path: "example.com/m"}}, file: "x.go", m: family.Mutation{Line: 3, Kind: "compare"}}
		for seed := uint64(0); seed < 20; seed++ {
			qs := scenarioQs(rand.New(rand.NewPCG(seed, 1)), lines, tr, mu, "example.com/m", verbose)
			if len(qs) == 0 {
				t.Fatalf("%s: no question", fx)
			}
			sc := &family.Scenario{Text: strings.Join(lines, "\n") + "\n", Qs: qs}
			n := len(qs)
			if err := sc.Check(10); err != nil || len(sc.Qs) != n {
				t.Errorf("%s seed %d: %d of %d questions survive Check (%v)", fx, seed, len(sc.Qs), n, err)
			}
		}
	}
}

func TestScrub(t *testing.T) {
	*workRoot = "/tmp/gosuites-work-123"
	root := *workRoot + "/chi"
	scrub("", root) // reads the go env once
	got := scrub(root+"/mux.go:12 +0x1d\n"+modCache+"/github.com/x@v1/y.go:3\n", root)
	if strings.Contains(got, "/tmp/gosuites-work") || !strings.Contains(got, family.HomeDir+"/mux.go:12") {
		t.Errorf("scrub = %q", got)
	}
	if modCache != "" && !strings.Contains(got, "/home/dev/go/pkg/mod/github.com/x@v1/y.go:3") {
		t.Errorf("module cache not scrubbed: %q", got)
	}
}

// TestManifest checks that the catalog, setup.sh and MANIFEST.tsv agree
// and that no module is on the evaluation sets' exclusion list.
func TestManifest(t *testing.T) {
	man, err := os.ReadFile("MANIFEST.tsv")
	if err != nil {
		t.Fatal(err)
	}
	setup, err := os.ReadFile("setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(man), "\n") {
		if f := strings.Split(l, "\t"); len(f) == 4 && !strings.HasPrefix(l, "#") {
			rows[f[0]] = f[1]
		}
	}
	for _, m := range catalog {
		if !strings.HasPrefix(rows[m.path], m.version+" ") {
			t.Errorf("MANIFEST.tsv: %s has %q, catalog %s", m.path, rows[m.path], m.version)
		}
		if !strings.Contains(string(setup), m.dir+"\t"+m.path+"@"+m.version+"\n") {
			t.Errorf("setup.sh does not fetch %s@%s into %s", m.path, m.version, m.dir)
		}
	}
	if len(rows) != len(catalog) {
		t.Errorf("MANIFEST.tsv has %d modules, catalog %d", len(rows), len(catalog))
	}
	ex, err := os.ReadFile("../../../../shared/evalsets/EXCLUDE.md")
	if err != nil {
		t.Skip("EXCLUDE.md not found next to the repository:", err)
	}
	for _, l := range strings.Split(string(ex), "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(l), "- ")
		if !ok || strings.Contains(name, " ") {
			continue
		}
		for p := range rows {
			if strings.Contains(strings.ToLower(p), "/"+strings.ToLower(name)) || strings.HasSuffix(strings.ToLower(p), "/"+strings.ToLower(name)) {
				t.Errorf("%s is excluded (%s)", p, name)
			}
		}
	}
}

func TestVetMessages(t *testing.T) {
	for _, l := range []string{
		"version6.go:43:2: unreachable code",
		"path.go:28:2: self-assignment of n",
		"route.go:190:65: fmt.Errorf format %d reads arg #2, but call has 1 arg",
		"mux.go:603:2: result of fmt.Sprint call not used",
		"context.go:12:2: struct field tag `json: \"a\"` not compatible with reflect.StructTag.Get: bad syntax for struct tag value",
	} {
		if !reVetMsg.MatchString(l) {
			t.Errorf("not recognised as a constructed finding: %q", l)
		}
	}
	if reVetMsg.MatchString("./yamlprivateh.go:39:2: output_raw_buffer_size redeclared in this block") {
		t.Error("a type error passes as a vet finding")
	}
}
