// Command vcs generates tool-output training cases for the line-scoring
// model by running real tools (git, ls, du, find, grep) on scratch
// repositories and trees built from the commit-mined training data, and
// labelling the answering lines by construction.
//
// Families (one gzipped JSONL file each, under -out):
//
//   - git-log-blame: for one training repository, a few paths whose records
//     are whole files (not windows of a longer file) are replayed
//     as a real git history in a temp dir: each path's first pre-image is
//     added, then each later pre-image is committed with the message of the
//     record before it (record i's message describes the change from its
//     pre-image to the next one), with synthetic authors, emails, dates and
//     time zones from a seeded RNG, an occasional CHANGELOG entry in the same
//     commit and an occasional rename. Then the real `git log` (default,
//     --stat, --oneline --stat, --name-status, custom formats, -p, --follow),
//     `git show --stat` and `git blame` (default, -w, -L) run on it. Gold
//     lines are located from what was committed: the header, author, date and
//     subject lines of the commits a question selects (by author, by a word
//     of the subject, by lines changed in a file from --numstat, by the
//     identifiers their `git show -U0` diff touches (only for `git log -p`,
//     whose output shows them), the first add, the
//     rename), the file's --stat / --name-status line, and for blame the
//     lines whose hash is the selected commit.
//   - file-listing: a directory tree with the paths of one training
//     repository (file contents are the real texts, cut or repeated to a
//     seeded size), plus README/LICENSE, tiny re-export or package-marker
//     files and build artefacts (.pyc caches, .class, .o, bundles), with
//     seeded mtimes. Then the real `ls -la`, `ls -lR`, `ls -lS`, `du -a`,
//     `du -h --max-depth=N`, `find -size`, `find -printf`. Gold lines are the
//     lines of the files/directories a question selects from the sizes and
//     kinds that were written (largest in a directory, above a size, tiny
//     files, caches/artefacts, test files about a topic, biggest
//     subdirectories plus the total).
//   - grep: a tree of one training repository's latest file versions
//     (committed, for git grep); the real `grep -rn`, `grep -rn -C2`,
//     `grep -rnw --include`, `git grep -n` for an identifier or an error
//     message word. Gold lines are the match lines satisfying a condition
//     checked on the line: a definition of the identifier (per-language
//     patterns), an import, an assignment, a call passing a given argument,
//     a hit in test files, the line holding the error message.
//
// Questions: 2–5 per output, from many templates; about half describe the
// answer without the identifiers/paths in the answer lines. A question is
// dropped whenever its gold set cannot be located or is empty, blank or
// larger than 25 lines. The scratch directory's absolute path is replaced by
// /home/dev/project; the outputs are otherwise unchanged. About 5% of the
// scenarios (by a hash of seed and scenario id; every output of a scenario
// goes the same way) are split "val".
//
// Run from the repository root (two workers take a few minutes):
//
//	go run ./examples/toolgen/vcs -data ../shared/traindata -out examples/train/tooldata -seed 1
//
// Flags -families (comma list) and -n (outputs per family) select less.
package main

import (
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

// repoData is one training repository: its records grouped by path, in
// file order (commit time).
type repoData struct {
	name, lang string
	paths      []string // in first-seen order
	byPath     map[string][]lmtrain.Case
	n          int
}

func loadRepos(dir string) ([]*repoData, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*repoData
	for _, f := range files {
		cs, err := lmtrain.LoadFile(f)
		if err != nil {
			return nil, err
		}
		byRepo := map[string]*repoData{}
		var order []string
		for _, c := range cs {
			r := byRepo[c.Repo]
			if r == nil {
				r = &repoData{name: c.Repo, lang: c.Lang, byPath: map[string][]lmtrain.Case{}}
				byRepo[c.Repo] = r
				order = append(order, c.Repo)
			}
			if _, ok := r.byPath[c.Path]; !ok {
				r.paths = append(r.paths, c.Path)
			}
			r.byPath[c.Path] = append(r.byPath[c.Path], c)
			r.n++
		}
		for _, name := range order {
			out = append(out, byRepo[name])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no training data in %s", dir)
	}
	return out, nil
}

// family generates the outputs of one scenario; it may return several
// outputs built from one scratch tree.
type family struct {
	name string
	gen  func(rng *rand.Rand, repo *repoData, id string, scratch string) ([]*output, error)
}

var families = []family{
	{"git-log-blame", genGit},
	{"file-listing", genListing},
	{"grep", genGrep},
}

// generate runs n scenarios of fam and returns their cases.
func generate(fam family, repos []*repoData, n int, seed uint64, workers int, tmp string) ([]outCase, error) {
	type job struct {
		idx  int
		repo *repoData
	}
	// Repos are drawn with weight sqrt-ish of their size so small ones
	// still appear.
	pr := rand.New(rand.NewPCG(seed, hash64(fam.name)))
	var weights []float64
	total := 0.0
	for _, r := range repos {
		w := float64(r.n)
		if w > 300 {
			w = 300
		}
		weights = append(weights, w)
		total += w
	}
	jobs := make([]job, n)
	for i := range jobs {
		x := pr.Float64() * total
		k := 0
		for k < len(repos)-1 && x >= weights[k] {
			x -= weights[k]
			k++
		}
		jobs[i] = job{i, repos[k]}
	}
	results := make([][]outCase, n)
	var mu sync.Mutex
	var firstErr error
	ch := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				rng := rand.New(rand.NewPCG(seed, hash64(fmt.Sprint(fam.name, j.idx))))
				id := fmt.Sprintf("%s-%04d", strings.ReplaceAll(j.repo.name[strings.LastIndex(j.repo.name, "/")+1:], "_", "-"), j.idx)
				scratch, err := os.MkdirTemp(tmp, "toolgen-")
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					continue
				}
				outs, err := fam.gen(rng, j.repo, id, scratch)
				os.RemoveAll(scratch)
				if err != nil {
					log.Printf("%s %s: skipped: %v", fam.name, id, err)
					continue
				}
				var cs []outCase
				for _, o := range outs {
					if len(o.qs) < 2 || len(o.lines) < 20 || strings.Contains(o.text, scratch) {
						continue
					}
					if len(o.qs) > 5 {
						o.qs = o.qs[:5]
					}
					cs = append(cs, o.cases(fam.name, seed, id)...)
				}
				results[j.idx] = cs
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	var all []outCase
	for _, r := range results {
		all = append(all, r...)
	}
	return all, nil
}

func writeCases(path string, cs []outCase) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	gz, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	enc := json.NewEncoder(gz)
	enc.SetEscapeHTML(false)
	for _, c := range cs {
		if err := enc.Encode(c); err != nil {
			f.Close()
			return err
		}
	}
	if err := gz.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func main() {
	data := flag.String("data", "../shared/traindata", "training data directory (*.jsonl.gz)")
	out := flag.String("out", "examples/train/tooldata", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	fams := flag.String("families", "git-log-blame,file-listing,grep", "families to generate")
	n := flag.Int("n", 0, "outputs (scenarios) per family; 0 = the family's default")
	workers := flag.Int("workers", 2, "parallel scenarios")
	flag.Parse()
	repos, err := loadRepos(*data)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	want := map[string]bool{}
	for _, f := range strings.Split(*fams, ",") {
		want[strings.TrimSpace(f)] = true
	}
	defaults := map[string]int{"git-log-blame": 170, "file-listing": 300, "grep": 300}
	for _, fam := range families {
		if !want[fam.name] {
			continue
		}
		start := time.Now()
		cnt := *n
		if cnt <= 0 {
			cnt = defaults[fam.name]
		}
		cs, err := generate(fam, repos, cnt, *seed, *workers, "")
		if err != nil {
			log.Fatal(err)
		}
		path := filepath.Join(*out, fam.name+".jsonl.gz")
		if err := writeCases(path, cs); err != nil {
			log.Fatal(err)
		}
		val := 0
		for _, c := range cs {
			if c.Split == "val" {
				val++
			}
		}
		st, _ := os.Stat(path)
		log.Printf("%s: %d cases (%d val) -> %s (%d bytes) in %s", fam.name, len(cs), val, path, st.Size(), time.Since(start).Round(time.Second))
	}
}
