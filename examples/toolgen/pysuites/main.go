// Command pysuites generates tool-output training cases by running the
// real test suites and checkers of real Python projects (more-itertools,
// cachetools, toolz, boltons, marshmallow) with one injected fault, and
// labelling the answering lines by construction.
//
// Families (one gzipped JSONL file each, under -out):
//
//   - python-pytest: Debian's pytest as users run it (plain, -q, -x, -v,
//     --tb=short/long/line, on the whole suite or on the test file of the
//     touched module) after a single-line mutation of a package source file
//     (flipped comparison, off-by-one, &&/||, True/False, +/-, swapped
//     arguments, dropped line). Gold: the FAILED summary (and -v progress)
//     lines, a failure section's header, > lines, E lines and project
//     frame locations, the frame at the mutated file:line, the final tally.
//   - python-unittest: `python3 -m unittest` (-v or not, discover or a
//     module) on the TestCase-based suites (cachetools, more-itertools).
//     Gold: FAIL:/ERROR: headers (and -v result lines), the project frames
//     of the traceback (File line and its code line), the exception lines.
//   - python-pyflakes: pyflakes on the package with an injected unused
//     import, undefined name, redefinition or unused local. Gold: the
//     diagnostic line(s) at the injected file:line.
//   - python-mypy: mypy on marshmallow (fully typed) with an injected
//     argument or return of the wrong type. Gold: the error line at the
//     injected file:line and mypy's note lines under it.
//   - git-diff, git-status: a git work tree of one project with one to
//     three mutations (sometimes an untracked or deleted file), then
//     `git diff` (plain, --stat, -U5) or `git status` (long, -s). Gold:
//     the hunk header and -/+ lines of the asked mutation, or status lines.
//
// A scenario whose fault does not show (the suite still passes after six
// mutations, the checker does not report the injected line) is dropped.
// The scratch directory is replaced by /home/dev/project in every output.
//
// Runs are slow on a loaded machine (each scenario runs a real suite, up
// to six times when mutations go unnoticed): on two shared cores the
// committed data took 10-45 minutes per family, hence the -n per family
// below rather than one -n for all.
//
// Setup (Debian packages, pristine checkouts from the bare mirrors):
//
//	sh examples/toolgen/pysuites/setup.sh /tmp/pysuites-repos
//	go build -o /tmp/pysuites ./examples/toolgen/pysuites
//	nice -n 10 /tmp/pysuites -repos /tmp/pysuites-repos -families python-pytest -n 120
//	nice -n 10 /tmp/pysuites -repos /tmp/pysuites-repos -families python-unittest -n 70
//	nice -n 10 /tmp/pysuites -repos /tmp/pysuites-repos -families python-pyflakes -n 45
//	nice -n 10 /tmp/pysuites -repos /tmp/pysuites-repos -families python-mypy -n 18
//	nice -n 10 /tmp/pysuites -repos /tmp/pysuites-repos -families git-diff,git-status -n 200
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

var families = map[string]family.Generator{
	"python-pytest":   genPytest,
	"python-unittest": genUnittest,
	"python-pyflakes": genPyflakes,
	"python-mypy":     genMypy,
	"git-diff":        genGitDiff,
	"git-status":      genGitStatus,
}

var familyOrder = []string{"python-pytest", "python-unittest", "python-pyflakes", "python-mypy", "git-diff", "git-status"}

func main() {
	out := flag.String("out", "examples/train/suitedata", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	n := flag.Int("n", 200, "scenarios to try per family")
	fams := flag.String("families", strings.Join(familyOrder, ","), "comma-separated families")
	workers := flag.Int("workers", 1, "parallel scenarios")
	flag.StringVar(&reposDir, "repos", "/tmp/pysuites-repos", "folder of pristine checkouts (setup.sh makes it)")
	verbose := flag.Bool("v", false, "log dropped scenarios")
	flag.Parse()
	err := family.RunFamilies(*fams, families, family.Options{Out: *out, Seed: *seed, N: *n, Workers: *workers, Verbose: *verbose},
		func(fam string, st family.Stats, took time.Duration) { fmt.Printf("%s: %v in %v\n", fam, st, took) })
	if err != nil {
		log.Fatal(err)
	}
}

func writeFile(p, s string) {
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		log.Printf("write %s: %v", p, err)
	}
}
