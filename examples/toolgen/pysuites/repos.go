package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// repo is one real Python project whose suite and sources the families use.
type repo struct {
	name   string // checkout folder under -repos
	slug   string // owner/name on GitHub
	pypath string // PYTHONPATH that makes the package importable
	pkg    string // package folder, relative to the root
	// distInfo: a version the package reads through importlib.metadata;
	// a checkout is not installed, so without a dist-info folder its
	// version test fails on the pristine tree (what `pip install -e .`
	// would have given it).
	distInfo string
	// testFor returns the test files a user would run after touching a
	// source file ("" = the whole suite); unittest says whether its tests
	// are unittest.TestCase classes that `python3 -m unittest` finds.
	testFor  func(src string) []string
	unittest bool
	weight   int
}

var repos = []repo{
	{name: "cachetools", slug: "tkem/cachetools", pypath: "src", pkg: "src/cachetools", unittest: true, weight: 4,
		testFor: func(string) []string { return nil }},
	{name: "toolz", slug: "pytoolz/toolz", pypath: ".", pkg: "toolz", distInfo: "toolz-1.0.0", weight: 3,
		testFor: func(string) []string { return nil }},
	{name: "boltons", slug: "mahmoud/boltons", pypath: ".", pkg: "boltons", weight: 3,
		testFor: func(src string) []string {
			b := strings.TrimSuffix(filepath.Base(src), ".py")
			return []string{"tests/test_" + b + ".py"}
		}},
	{name: "marshmallow", slug: "marshmallow-code/marshmallow", pypath: "src", pkg: "src/marshmallow", distInfo: "marshmallow-3.23.0", weight: 3,
		testFor: func(string) []string { return nil }},
	{name: "more-itertools", slug: "more-itertools/more-itertools", pypath: ".", pkg: "more_itertools", unittest: true, weight: 1,
		testFor: func(src string) []string {
			return []string{"tests/test_" + strings.TrimSuffix(filepath.Base(src), ".py") + ".py"}
		}},
}

// srcFiles lists the package's non-test source files that have a test
// file to run, relative to the checkout root.
func (rp repo) srcFiles(root string) []string {
	var out []string
	filepath.WalkDir(filepath.Join(root, rp.pkg), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "tests" || d.Name() == "__pycache__") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".py") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		ok := true
		for _, t := range rp.testFor(rel) {
			if _, err := os.Stat(filepath.Join(root, t)); err != nil {
				ok = false
			}
		}
		if ok {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func pickRepo(r *rand.Rand, pool []repo) repo {
	return family.PickWeighted(r, pool, func(rp repo) int { return rp.weight })
}

// reposDir is the folder of pristine checkouts (-repos).
var reposDir string

// checkout copies the pristine checkout of rp into dir (the scenario's
// scratch directory, which the outputs call /home/dev/project).
func checkout(rp repo, dir string) error {
	src := filepath.Join(reposDir, rp.name)
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("no checkout of %s under %s", rp.name, reposDir)
	}
	if out, err := exec.Command("cp", "-a", src+"/.", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("cp: %v: %s", err, out)
	}
	if rp.distInfo != "" {
		name, ver, _ := strings.Cut(rp.distInfo, "-")
		di := filepath.Join(dir, rp.pypath, rp.distInfo+".dist-info")
		os.MkdirAll(di, 0o755)
		os.WriteFile(filepath.Join(di, "METADATA"), []byte("Metadata-Version: 2.1\nName: "+name+"\nVersion: "+ver+"\n"), 0o644)
	}
	return nil
}

// commitOf reads the commit a checkout was made from (written by setup.sh).
func commitOf(rp repo) string {
	b, _ := os.ReadFile(filepath.Join(reposDir, rp.name+".commit"))
	return strings.TrimSpace(string(b))
}

func source(rp repo) string {
	if c := commitOf(rp); c != "" {
		return rp.slug + "@" + c
	}
	return rp.slug
}

// python is Debian's interpreter, whose packages (pytest, pyflakes, mypy)
// setup.sh installs; a pyenv python3 earlier on PATH has none of them.
const python = "/usr/bin/python3"

// runTool runs argv in dir with the repo's PYTHONPATH and returns stdout
// and stderr interleaved (one pipe, as a terminal shows them) and the exit
// code.
func runTool(dir string, rp repo, timeout time.Duration, argv ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + dir,
		"LANG=C.UTF-8",
		"TERM=dumb",
		"PYTHONPATH=" + rp.pypath,
		"PYTHONDONTWRITEBYTECODE=1",
		"COLUMNS=80",
		"MYPY_CACHE_DIR=/dev/null",
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", -1, fmt.Errorf("timed out")
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return "", -1, err
	}
	// pytest's tmp_path lives under /tmp/pytest-of-<user>: this machine's
	// user becomes the plausible user "dev".
	out := strings.ReplaceAll(family.Clean(buf.String(), dir), "/tmp/pytest-of-root/", "/tmp/pytest-of-dev/")
	if strings.Contains(out, "/tmp/toolgen") || strings.Contains(out, "/root/") {
		// pytest shortens long reprs ('/tmp/toolgen...6016/x'), which Clean
		// cannot match: such a run would leak the scratch path.
		return "", -1, fmt.Errorf("scratch path left in output")
	}
	return out, code, nil
}

// mutateOnce picks a random single-line mutation of a random source file
// of rp in dir, applies it and returns it with the file's path.
func mutateOnce(r *rand.Rand, rp repo, dir string, files []string, kinds map[string]bool) (string, family.Mutation, string, error) {
	for try := 0; try < 20; try++ {
		f := family.Pick(r, files)
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", family.Mutation{}, "", err
		}
		var cands []family.Mutation
		for _, m := range family.Candidates(string(b), family.LangPython) {
			if kinds == nil || kinds[m.Kind] {
				cands = append(cands, m)
			}
		}
		if len(cands) == 0 {
			continue
		}
		m := family.Pick(r, cands)
		if err := os.WriteFile(filepath.Join(dir, f), []byte(m.Apply(string(b))), 0o644); err != nil {
			return "", m, "", err
		}
		return f, m, string(b), nil
	}
	return "", family.Mutation{}, "", fmt.Errorf("no mutation site")
}

// kindWords describes a mutation the way a developer remembers it.
var kindWords = map[string][]string{
	"compare":    {"the comparison", "a comparison operator", "the bounds check", "the condition"},
	"off-by-one": {"an index", "a constant", "the number", "a boundary value"},
	"constant":   {"a constant", "the number", "a magic number"},
	"logic":      {"the boolean condition", "the and/or in a condition", "the condition"},
	"bool":       {"a flag default", "a True/False value", "the boolean"},
	"arith":      {"the arithmetic", "a plus/minus", "the offset computation"},
	"swap":       {"the argument order", "the order of two arguments", "a call's arguments"},
	"drop":       {"a line", "an assignment", "a statement"},
}

func describe(r *rand.Rand, m family.Mutation) string { return family.Pick(r, kindWords[m.Kind]) }
