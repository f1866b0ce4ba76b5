package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// The fixtures under testdata are real outputs captured by this command
// (pytest 7.2.1, Python 3.11.2 unittest, mypy 1.0.1, git 2.39) with the
// scratch directory already replaced by /home/dev/project.
func fixture(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return family.SplitLines(string(b))
}

func TestParsePytestShortFrames(t *testing.T) {
	// pytest -x on toolz with the fault at toolz/sandbox/parallel.py:81.
	lines := fixture(t, "pytest_toolz.txt")
	rep := parsePytest(lines, "toolz/sandbox/parallel.py", 81)
	if len(rep.blocks) != 1 {
		t.Fatalf("blocks = %d, want 1", len(rep.blocks))
	}
	b := rep.blocks[0]
	if b.name != "test_fold" || b.header != 11 {
		t.Errorf("header = %q at %d", b.name, b.header)
	}
	for what, pair := range map[string][2][]int{
		"elines": {b.elines, {16}}, "locs": {b.locs, {12, 14}}, "code": {b.code, {13, 15}},
		"mutFrame": {b.mutFrame, {14, 15}}, "mutFrameE": {b.mutFrameE, {16}},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s = %v, want %v", what, pair[0], pair[1])
		}
	}
	if got := rep.summary["toolz/sandbox/tests/test_parallel.py::test_fold"]; got != 18 {
		t.Errorf("summary line = %d, want 18", got)
	}
	if rep.final != 20 {
		t.Errorf("final = %d, want 20", rep.final)
	}
}

func TestParsePytestLongFrames(t *testing.T) {
	lines := fixture(t, "pytest_cachetools_long.txt")
	rep := parsePytest(lines, "src/cachetools/__init__.py", 1)
	if len(rep.blocks) != 13 || len(rep.order) != 13 {
		t.Fatalf("blocks = %d, summary = %d, want 13 each", len(rep.blocks), len(rep.order))
	}
	b := rep.blocks[0]
	if b.name != "TLRUCacheTest.test_clear" || b.header != 6 {
		t.Errorf("first header %q at %d", b.name, b.header)
	}
	if g := b.goldOf(); !reflect.DeepEqual(g, []int{6, 21, 22, 24}) {
		t.Errorf("gold of first block = %v, want [6 21 22 24]", g)
	}
	for _, id := range rep.order {
		found := false
		for _, b := range rep.blocks {
			found = found || nodeName(id) == b.name
		}
		if !found {
			t.Errorf("summary %s has no block", id)
		}
	}
}

func TestParseUnittest(t *testing.T) {
	lines := fixture(t, "unittest_cachetools.txt")
	rep := parseUnittest(lines, "src/cachetools/_cached.py", 109)
	if len(rep.blocks) != 3 {
		t.Fatalf("blocks = %d, want 3", len(rep.blocks))
	}
	b := rep.blocks[0]
	want := utBlock{kind: "ERROR", name: "test_decorator_info", id: "tests.test_cached.CacheWrapperTest.test_decorator_info",
		header: 287, result: []int{26}, frames: []int{290, 291, 292, 293, 294, 295}, exc: []int{296}, mutFrame: []int{293, 294, 295}}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("block =\n%+v\nwant\n%+v", b, want)
	}
	if rep.ran != 323 || rep.final != 325 {
		t.Errorf("ran, final = %d, %d; want 323, 325", rep.ran, rep.final)
	}
}

func TestDiffIndex(t *testing.T) {
	lines := fixture(t, "git_diff.txt")
	edits := []gitEdit{
		{path: "more_itertools/more.py", op: "modify", mut: family.Mutation{Before: "            iterators[idx] = iterators[-1]", After: "            iterators[idx] = iterators[-2]"}},
		{path: "more_itertools/more.py", op: "modify", mut: family.Mutation{Before: "    __class_getitem__ = classmethod(types.GenericAlias)", After: "    pass"}},
		{path: "LICENSE", op: "delete"},
	}
	files, gold := diffIndex(lines, edits)
	if !reflect.DeepEqual(gold[0], []int{35, 37, 38}) || !reflect.DeepEqual(gold[1], []int{30, 32, 33}) {
		t.Errorf("edit gold = %v", gold)
	}
	if !reflect.DeepEqual(files["LICENSE"], []int{1, 2}) || !reflect.DeepEqual(files["more_itertools/more.py"], []int{26}) {
		t.Errorf("file lines = %v", files)
	}
}

func TestStatusGold(t *testing.T) {
	lines := fixture(t, "git_status.txt")
	edits := []gitEdit{
		{path: "src/marshmallow/orderedset.py", op: "modify", staged: true},
		{path: "docs/marshmallow.utils.rst", op: "delete"},
		{path: "src/marshmallow/_debug.py", op: "add", staged: true},
		{path: "tests/test_regression.py", op: "add", staged: true},
	}
	got, err := statusGold(lines, false, edits)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"staged": {4, 5, 6}, "unstaged": {11}, "deleted": {11}, "new": {4, 6}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("status gold = %v, want %v", got, want)
	}
	// A construction the output contradicts is refused.
	if _, err := statusGold(lines, false, edits[:2]); err == nil {
		t.Error("mismatched construction accepted")
	}
}

func TestNewLinesSkipsBaselineAndSummary(t *testing.T) {
	base := "a.py:1:1: 'os' imported but unused\nFound 1 error in 1 file\n"
	out := "a.py:1:1: 'os' imported but unused\na.py:7:5: undefined name 'fo'\nFound 2 errors in 1 file\n"
	if g := newLines(out, base); !reflect.DeepEqual(g, []int{2}) {
		t.Errorf("newLines = %v, want [2]", g)
	}
}

func TestPickInjectKeepsLineCount(t *testing.T) {
	src := "import os\n\n\ndef f(x):\n    total = x + 1\n    return total\n"
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []string{"unused-import", "typo-use", "typo-assign", "wrong-return"} {
		inj, ok := pickInject(r, src, []string{k})
		if !ok {
			t.Errorf("%s: no site", k)
			continue
		}
		if inj.line < 1 || inj.after == inj.before {
			t.Errorf("%s: bad injection %+v", k, inj)
		}
	}
}

// TestQuestionsValid builds the questions of the captured pytest and
// unittest runs and checks every gold line exists and is not blank.
func TestQuestionsValid(t *testing.T) {
	rp := repos[0]
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		m := family.Mutation{Line: 109, Kind: "drop"}
		sc := &family.Scenario{Text: joinLines(fixture(t, "unittest_cachetools.txt")), Qs: unittestQuestions(r, fixture(t, "unittest_cachetools.txt"), rp, "src/cachetools/_cached.py", m)}
		if err := sc.Check(5); err != nil || len(sc.Qs) < 2 {
			t.Errorf("unittest seed %d: %v (%d questions)", seed, err, len(sc.Qs))
		}
		m = family.Mutation{Line: 81, Kind: "off-by-one"}
		sc = &family.Scenario{Text: joinLines(fixture(t, "pytest_toolz.txt")), Qs: pytestQuestions(r, fixture(t, "pytest_toolz.txt"), rp, "toolz/sandbox/parallel.py", m)}
		if err := sc.Check(5); err != nil || len(sc.Qs) < 2 {
			t.Errorf("pytest seed %d: %v (%d questions)", seed, err, len(sc.Qs))
		}
	}
}

func joinLines(ls []string) string {
	s := ""
	for _, l := range ls {
		s += l + "\n"
	}
	return s
}

// TestPytestRunsWhenInstalled runs Debian's pytest on a tiny failing
// file, so a change of its report format shows up here.
func TestPytestRunsWhenInstalled(t *testing.T) {
	if err := exec.Command(python, "-c", "import pytest").Run(); err != nil {
		t.Skip("Debian python3-pytest not installed (setup.sh installs it)")
	}
	dir := t.TempDir()
	writeFile(dir+"/lib.py", "def inc(x):\n    return x + 2\n")
	writeFile(dir+"/test_lib.py", "from lib import inc\n\n\ndef test_inc():\n    assert inc(1) == 2\n")
	out, code, err := runTool(dir, repo{pypath: "."}, 60e9, python, "-m", "pytest", "-p", "no:cacheprovider", "--tb=short")
	if err != nil || code != 1 {
		t.Fatalf("pytest: code %d, %v\n%s", code, err, out)
	}
	lines := family.SplitLines(out)
	rep := parsePytest(lines, "lib.py", 2)
	if len(rep.blocks) != 1 || len(rep.order) != 1 || len(rep.blocks[0].elines) == 0 {
		t.Fatalf("parsed %+v from\n%s", rep, out)
	}
	if g := rep.blocks[0].goldOf(); len(g) < 4 {
		t.Errorf("gold %v too small in\n%s", g, out)
	}
}
