// Command native generates tool-output training cases for the pruner's
// line model from compilers and test runners of compiled languages, run
// over real repositories with injected faults:
//
//   - c-gcc-make: libuv built by a hand-written Makefile (gcc -Wall
//     -Wextra) after one or two source files got a compile fault
//     (misspelled identifier or member, missing semicolon, wrong argument
//     count, unused variable, incompatible pointer, implicit declaration,
//     return value mismatch, or a mutation-engine edit the compiler
//     rejects), as an incremental `make` / `make -k`.
//   - java-javac: javac over jsoup's main sources with an injected compile
//     error.
//   - java-junit: jsoup's JUnit 5 tests under the console launcher after a
//     mutation of a main source.
//   - rust-cargo-test: `cargo test` in regex-syntax after a mutation.
//   - rust-cargo-build: `cargo build` of anyhow / regex-syntax with an
//     injected compile error.
//
// Gold lines are known by construction: the generator knows the file and
// line it changed and keeps a scenario only when the tool reports it there.
//
// Usage (after setup.sh; checkouts under -repos are made from the bare
// mirrors when missing):
//
//	go run ./examples/toolgen/native -out examples/train/suitedata -families c-gcc-make -n 200 -workers 1
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

var families = map[string]family.Generator{
	"c-gcc-make":       genCGcc,
	"java-javac":       genJavac,
	"java-junit":       genJunit,
	"rust-cargo-build": genCargoBuild,
	"rust-cargo-test":  genCargoTest,
}

var errBudget = errors.New("time budget spent")

// seedTag prefixes scenario indices in names when -seed is not 1.
var seedTag string

func main() {
	out := flag.String("out", "examples/train/suitedata", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	fams := flag.String("families", "c-gcc-make", "comma-separated families")
	n := flag.Int("n", 150, "scenarios per family")
	workers := flag.Int("workers", 1, "parallel workers")
	repos := flag.String("repos", reposDir, "folder of checkouts (libuv, jsoup, regex, anyhow); missing ones are extracted from -mirrors")
	mirrors := flag.String("mirrors", mirrorDir, "folder of bare mirrors <owner>+<name>")
	verbose := flag.Bool("v", false, "log dropped scenarios")
	budget := flag.Duration("budget", 0, "stop starting scenarios after this much time per family (0: no limit); the rest are dropped and counted")
	flag.Parse()
	reposDir, mirrorDir = *repos, *mirrors
	if *seed != 1 {
		// Scenario names carry the seed, so files of several seeds
		// concatenate without clashing ids.
		seedTag = fmt.Sprintf("s%d-", *seed)
	}
	for _, f := range strings.Split(*fams, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		gen, ok := families[f]
		if !ok {
			log.Fatalf("unknown family %q", f)
		}
		start := time.Now()
		var skipped atomic.Int64
		if *budget > 0 {
			// family.Run writes its file only at the end: past the budget
			// the remaining scenarios return at once, so a slow machine
			// still ends with a file.
			inner := gen
			gen = func(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
				if time.Since(start) > *budget {
					skipped.Add(1)
					return nil, errBudget
				}
				return inner(r, idx, dir)
			}
		}
		st, err := family.Run(f, gen, family.Options{Out: *out, Seed: *seed, N: *n, Workers: *workers, Verbose: *verbose})
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("%s: %s in %s (%d of the dropped not run: budget)", f, st, time.Since(start).Round(time.Second), skipped.Load())
	}
}
