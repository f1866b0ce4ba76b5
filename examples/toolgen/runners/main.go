// Command runners generates tool-output training cases for the pruner's
// line-scoring model by running real tools over small scratch projects that
// carry injected faults.
//
// Families (one gzipped JSONL file each, under -out):
//
//   - go-build-vet: Go modules of several packages with injected compile
//     errors (unused imports and variables, mismatched types, wrong argument
//     counts, missing returns, undefined names, ...) and vet findings
//     (copylocks, printf, unreachable code, struct tags, lostcancel, time
//     layouts, ...), run through the real `go build ./...`, `go vet ./...`,
//     and `go vet -json ./...`.
//   - node-test: CommonJS modules with node:test suites run by
//     `node --test` (TAP or spec reporter) with injected bugs: assertion
//     mismatches, thrown TypeErrors, missing fixtures (ENOENT), timeouts.
//   - python-job-log: Python programs using the logging module to simulate
//     long-running jobs (sync, backup, ETL, crawler, queue worker,
//     migration) with retries, warnings, skipped records, a logged but
//     survived exception and, in most runs, a fatal chained exception.
//
// Labels are constructed, not guessed: the generator knows every fault it
// injected, the file and line of every injected snippet, the location of
// every test it wrote and whether that test must fail (each function under
// test also exists in the generator, correct and buggy, so the failing
// cases are computed), and the exact text of every log message it made the
// program print. Gold lines are the output lines that report those faults
// (compiler and vet diagnostics at the injected file:line and their
// continuation lines; the FAIL / not ok line of a failing test with its
// message, expected/actual and the stack frames in project code; the log
// lines of a retry or skip; the abort line and the exception lines of a
// traceback with the project frame that raised the cause). A scenario whose
// real output does not match its construction (a predicted diagnostic or
// failure is absent, or an unpredicted one appears) is dropped. The scratch
// directory is replaced by /home/dev/project in the output; nothing else is
// changed.
//
// Usage (from the repository root; about 10-15 minutes on two cores):
//
//	go run ./examples/toolgen/runners -out examples/train/tooldata -seed 1 -families go-build-vet,python-job-log
//	go run ./examples/toolgen/runners -out examples/train/tooldata -seed 1 -families node-test -n 520
//
// (node-test drops about 40% of its scenarios, mostly because the real fail
// count differs from the predicted one, hence the larger -n.)
//
// Flags: -families (comma-separated subset), -n (scenarios per family,
// default 300), -workers (default 2). Every scenario's RNG derives from
// -seed, the family and the scenario index; about 5% of scenarios (all their
// questions) are assigned to split "val".
package main

import (
	"cmp"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// Case is one training record, in the training data files' format.
type Case = family.Case

// question is one query over a scenario's output with its gold lines.
type question struct {
	query string
	gold  []int
}

// scenario is one real tool run and the questions over it.
type scenario struct {
	name string // scenario id inside the family
	path string // plausible file name of the captured output
	text string
	qs   []question
}

// generator builds and runs one scenario in the scratch directory dir.
type generator func(r *rand.Rand, idx int, dir string) (*scenario, error)

var families = map[string]generator{
	"go-build-vet":   genGo,
	"node-test":      genNode,
	"python-job-log": genJobLog,
}

const homeDir = "/home/dev/project"

func main() {
	out := flag.String("out", "examples/train/tooldata", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	fams := flag.String("families", "go-build-vet,node-test,python-job-log", "comma-separated families")
	n := flag.Int("n", 300, "scenarios per family")
	workers := flag.Int("workers", 2, "parallel workers")
	flag.Parse()
	for _, f := range strings.Split(*fams, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		start := time.Now()
		st, err := runFamily(f, *out, *seed, *n, *workers)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("%s: %s in %s", f, st, time.Since(start).Round(time.Second))
	}
}

// runFamily generates n scenarios of one family with the generators'
// shared frame and writes <out>/<family>.jsonl.gz.
func runFamily(fam, out string, seed uint64, n, workers int) (family.Stats, error) {
	gen, ok := families[fam]
	if !ok {
		return family.Stats{}, fmt.Errorf("unknown family %q", fam)
	}
	return family.Run(fam, func(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
		sc, err := gen(r, idx, dir)
		if err != nil {
			return nil, err
		}
		fs := &family.Scenario{Name: sc.name, Path: sc.path, Text: sc.text}
		for _, q := range sc.qs {
			fs.Qs = append(fs.Qs, family.Question{Query: q.query, Gold: q.gold})
		}
		return fs, nil
	}, family.Options{Out: out, Seed: seed, N: n, Workers: workers, Verbose: os.Getenv("TOOLGEN_VERBOSE") != ""})
}

// fill replaces {key} placeholders.
func fill(tmpl string, kv ...string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		tmpl = strings.ReplaceAll(tmpl, "{"+kv[i]+"}", kv[i+1])
	}
	return tmpl
}

// ask picks a named or a descriptive paraphrase (about half each when both exist).
func ask(r *rand.Rand, named, descr []string, kv ...string) string {
	if len(descr) > 0 && (len(named) == 0 || r.IntN(2) == 0) {
		return fill(family.Pick(r, descr), kv...)
	}
	return fill(family.Pick(r, named), kv...)
}

// capitalize the first letter.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// camel joins words in lowerCamelCase; exported when exp.
func camel(exp bool, words ...string) string {
	var b strings.Builder
	for i, w := range words {
		if i == 0 && !exp {
			b.WriteString(w)
		} else {
			b.WriteString(capitalize(w))
		}
	}
	return b.String()
}

// namer hands out identifiers unique within a scope.
type namer struct {
	r    *rand.Rand
	used map[string]bool
}

func newNamer(r *rand.Rand) *namer { return &namer{r: r, used: map[string]bool{}} }

// fresh returns f() or f() with a numeric suffix until unused.
func (n *namer) fresh(f func() string) string {
	for i := 0; i < 20; i++ {
		s := f()
		if !n.used[s] {
			n.used[s] = true
			return s
		}
	}
	s := f()
	for i := 2; ; i++ {
		c := fmt.Sprintf("%s%d", s, i)
		if !n.used[c] {
			n.used[c] = true
			return c
		}
	}
}

// shuffleQs shuffles candidate questions.
func shuffleQs(r *rand.Rand, qs []question) []question {
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return qs
}

// chooseQs keeps between 2 and 5 of the candidates with a sensible gold size.
func chooseQs(r *rand.Rand, qs []question, maxGold int) []question {
	var ok []question
	for _, q := range qs {
		if len(q.gold) > 0 && len(q.gold) <= maxGold {
			ok = append(ok, q)
		}
	}
	ok = shuffleQs(r, ok)
	k := 2 + r.IntN(4)
	if len(ok) > k {
		ok = ok[:k]
	}
	return ok
}

// sortedKeys returns m's keys in sorted order so that iteration consumes the
// RNG deterministically.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
