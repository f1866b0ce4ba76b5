// Package family is the shared frame of the tool-output generators: a
// scenario (one real tool run and the questions over it), the check that
// every gold line exists and is not blank, the train/val split, and the
// gzipped JSONL writer in the training data's format.
//
// A generator runs a real tool in a scratch directory and returns the
// output with questions whose gold lines it knows by construction; Run
// calls it n times in parallel and writes <out>/<family>.jsonl.gz.
package family

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prunekit/pruner/internal/evalset"
	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

// HomeDir replaces the scratch directory in every output.
const HomeDir = "/home/dev/project"

// Case is one training record, in the training data files' format.
type Case = lmtrain.Case

// Question is one query over a scenario's output with its gold lines
// (1-based, as SplitLines numbers them).
type Question struct {
	Query string
	Gold  []int
}

// Scenario is one real tool run and the questions over it.
type Scenario struct {
	Name   string // scenario id inside the family
	Path   string // plausible file name of the captured output
	Runner string // the command as a user typed it, e.g. "go test -v ./..."
	Source string // owner/repo@commit the run was made in, "" for generated projects
	Text   string
	Qs     []Question
}

// Questions collects a scenario's questions.
type Questions []Question

// Add appends a question whose gold is the union of the given line sets;
// a question with no gold line is left out (Check would drop it anyway).
func (qs *Questions) Add(query string, gold ...[]int) {
	var all []int
	for _, g := range gold {
		all = append(all, g...)
	}
	if len(all) > 0 {
		*qs = append(*qs, Question{Query: query, Gold: all})
	}
}

// Generator builds and runs one scenario in the scratch directory dir.
// An error drops the scenario (the real output did not match what the
// generator constructed, or the fault did not show).
type Generator func(r *rand.Rand, idx int, dir string) (*Scenario, error)

// Options configure Run.
type Options struct {
	Out     string // output directory
	Seed    uint64
	N       int // scenarios to try
	Workers int
	// MaxQuestions per scenario (default 5).
	MaxQuestions int
	// Verbose logs why scenarios were dropped.
	Verbose bool
}

// Stats counts what Run wrote.
type Stats struct{ Scenarios, Dropped, Train, Val int }

func (s Stats) String() string {
	return fmt.Sprintf("%d scenarios (%d dropped), %d cases (%d train, %d val)",
		s.Scenarios, s.Dropped, s.Train+s.Val, s.Train, s.Val)
}

// RunFamilies runs each family of the comma-separated list in turn with its
// generator in gens (see Run) and calls report with its stats and time; it
// stops at the first name gens lacks.
func RunFamilies(list string, gens map[string]Generator, opts Options, report func(fam string, st Stats, took time.Duration)) error {
	for _, fam := range strings.Split(list, ",") {
		gen, ok := gens[fam]
		if !ok {
			return fmt.Errorf("unknown family %q", fam)
		}
		start := time.Now()
		st, err := Run(fam, gen, opts)
		if err != nil {
			return err
		}
		report(fam, st, time.Since(start).Round(time.Second))
	}
	return nil
}

// Run generates opts.N scenarios of family fam and writes
// <opts.Out>/<fam>.jsonl.gz.
func Run(fam string, gen Generator, opts Options) (Stats, error) {
	var st Stats
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return st, err
	}
	results := make([]*Scenario, opts.N)
	errs := make([]error, opts.N)
	idxc := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < max(1, opts.Workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idxc {
				results[i], errs[i] = runOne(gen, fam, opts, i)
				if errs[i] != nil && opts.Verbose {
					log.Printf("%s #%d dropped: %v", fam, i, errs[i])
				}
			}
		}()
	}
	for i := 0; i < opts.N; i++ {
		idxc <- i
	}
	close(idxc)
	wg.Wait()

	f, err := os.Create(filepath.Join(opts.Out, fam+".jsonl.gz"))
	if err != nil {
		return st, err
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	for i, sc := range results {
		if errs[i] != nil || sc == nil || len(sc.Qs) == 0 {
			st.Dropped++
			continue
		}
		st.Scenarios++
		for _, c := range sc.Cases(fam, IsVal(opts.Seed, fam, i)) {
			if c.Split == "val" {
				st.Val++
			} else {
				st.Train++
			}
			if err := enc.Encode(c); err != nil {
				return st, err
			}
		}
	}
	if err := zw.Close(); err != nil {
		return st, err
	}
	return st, f.Close()
}

// RNG is scenario idx's random source: it depends only on the seed, the
// family and idx, so a scenario regenerates alone.
func RNG(seed uint64, fam string, idx int) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", fam, idx)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// IsVal puts about 5% of the scenarios (all their questions) in split "val".
func IsVal(seed uint64, fam string, idx int) bool {
	h := fnv.New64a()
	fmt.Fprintf(h, "split/%d/%s/%d", seed, fam, idx)
	return h.Sum64()%20 == 0
}

func runOne(gen Generator, fam string, opts Options, idx int) (sc *Scenario, err error) {
	dir, err := os.MkdirTemp("", "toolgen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	defer func() {
		if p := recover(); p != nil {
			sc, err = nil, fmt.Errorf("generator panicked: %v", p)
		}
	}()
	sc, err = gen(RNG(opts.Seed, fam, idx), idx, dir)
	if err != nil {
		return nil, err
	}
	if strings.Contains(sc.Text, dir) {
		return nil, fmt.Errorf("scratch path left in output")
	}
	mq := opts.MaxQuestions
	if mq <= 0 {
		mq = 5
	}
	if err := sc.Check(mq); err != nil {
		return nil, err
	}
	return sc, nil
}

// Check drops questions whose gold lines are out of range or blank,
// duplicate queries and duplicate gold sets, keeps at most maxQ, and fails
// when none is left.
func (sc *Scenario) Check(maxQ int) error {
	lines := SplitLines(sc.Text)
	var kept []Question
	seen := map[string]bool{}
	for _, q := range sc.Qs {
		g := UniqSorted(q.Gold)
		ok := len(g) > 0 && strings.TrimSpace(q.Query) != ""
		for _, l := range g {
			if l < 1 || l > len(lines) || strings.TrimSpace(lines[l-1]) == "" {
				ok = false
			}
		}
		key := fmt.Sprint(g)
		if ok && !seen[key] && !seen[q.Query] {
			seen[key], seen[q.Query] = true, true
			kept = append(kept, Question{q.Query, g})
		}
	}
	if len(kept) > maxQ {
		kept = kept[:maxQ]
	}
	sc.Qs = kept
	if len(kept) == 0 {
		return fmt.Errorf("no valid question")
	}
	return nil
}

// Cases turns the scenario into training records of family fam.
func (sc *Scenario) Cases(fam string, val bool) []Case {
	split := "train"
	if val {
		split = "val"
	}
	n := len(SplitLines(sc.Text))
	var cs []Case
	for k, q := range sc.Qs {
		cs = append(cs, Case{Case: evalset.Case{
			ID: fmt.Sprintf("tool:%s/%s#%d", fam, sc.Name, k+1), Repo: "tool:" + fam,
			Source: sc.Source, Lang: "text", Path: sc.Path, Kind: "tool", Query: q.Query, Text: sc.Text,
			GoldLines: q.Gold, WindowStart: 1, FileLines: n,
		}, Split: split})
	}
	return cs
}

// SplitLines splits like the eval sets: text.split("\n") without the empty
// piece after a final newline.
func SplitLines(s string) []string {
	ls := strings.Split(s, "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// UniqSorted returns the distinct values of xs in increasing order.
func UniqSorted(xs []int) []int {
	m := map[int]bool{}
	var out []int
	for _, x := range xs {
		if !m[x] {
			m[x] = true
			out = append(out, x)
		}
	}
	sort.Ints(out)
	return out
}

// FindLines returns the 1-based numbers of the lines containing sub.
func FindLines(lines []string, sub string) []int {
	var out []int
	for i, l := range lines {
		if strings.Contains(l, sub) {
			out = append(out, i+1)
		}
	}
	return out
}

// Pick returns a random element of xs.
func Pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// PickWeighted returns an element of xs drawn with probability
// proportional to weight(x); elements of weight 0 or less are never drawn
// unless every weight is, when the first is returned.
func PickWeighted[T any](r *rand.Rand, xs []T, weight func(T) int) T {
	tot := 0
	for _, x := range xs {
		tot += max(0, weight(x))
	}
	if tot == 0 {
		return xs[0]
	}
	k := r.IntN(tot)
	for _, x := range xs {
		w := max(0, weight(x))
		if k < w {
			return x
		}
		k -= w
	}
	return xs[0]
}

// Clean replaces the scratch directory dir by HomeDir, then scrubs what
// else names this machine (see Scrub).
func Clean(out, dir string) string { return Scrub(strings.ReplaceAll(out, dir, HomeDir)) }

// machinePaths are paths that name the generating machine rather than a
// user's: pytest's temporary root of user root, and scratch folders that a
// tool abbreviated ("/tmp/toolgen...7543/x") so that Clean's exact
// replacement missed them.
var machinePaths = regexp.MustCompile(`/tmp/pytest-of-root/|/tmp/toolgen[^\s'"/.]*|/tmp/t(?:o(?:o(?:l(?:g(?:e)?)?)?)?)?\.\.\.`)

// Scrub rewrites the paths that name the generating machine as a user's
// machine would print them. It is idempotent.
func Scrub(s string) string {
	return machinePaths.ReplaceAllStringFunc(s, func(m string) string {
		if m == "/tmp/pytest-of-root/" {
			return "/tmp/pytest-of-dev/"
		}
		if strings.HasSuffix(m, "...") {
			return "/home/de..." // cut where the tool cut
		}
		return "/home/dev/pr" // a shortened HomeDir, as the tool shortened the scratch path
	})
}

// TruncateLines keeps at most maxLines whole lines of s.
func TruncateLines(s string, maxLines int) string {
	ls := SplitLines(s)
	if len(ls) <= maxLines {
		return s
	}
	return strings.Join(ls[:maxLines], "\n") + "\n"
}
