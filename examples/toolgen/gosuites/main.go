// Command gosuites generates tool-output training cases from the real test
// suites of real Go modules with one injected fault each.
//
// Each scenario copies a pinned module (see MANIFEST.tsv; the sources come
// from the Go module proxy, _test.go files included), applies one
// single-line mutation (family.Candidates) to a non-test .go file, runs a
// real command over it and labels the output by construction:
//
//   - go-test: `go test ./...` (or `go test ./sub/...`, `go test .`);
//   - go-test-v: `go test -v` of one package, sometimes `-run` / `-count=1`;
//   - go-test-json: `go test -json` of one package;
//   - go-vet-real: `go vet ./...` with a vet-detectable fault (printf verb,
//     unreachable code, self-assignment, struct tag, unused result) put
//     into a real source file.
//
// Gold lines are parsed from the real output, knowing what was mutated:
// the `--- FAIL:` header of each failing test and its message lines
// (t.Error text, testify's expected/actual block), the panic message and
// the goroutine-trace frames in the module's own files (the mutated
// file:line among them), the compiler or vet diagnostics under their
// `# pkg` header when the mutation breaks the build, and for the
// occasional question about a passing aspect the package or test lines
// that answer it. A mutation the suite does not notice is replaced by
// another (at most -tries per scenario); a scenario whose output has no
// failure, times out or exceeds 3000 lines is dropped.
//
// Paths are scrubbed: the work copy becomes /home/dev/project, the module
// cache /home/dev/go/pkg/mod, the home directory /home/dev.
//
// Usage (after setup.sh has put the modules under -repos):
//
//	sh examples/toolgen/gosuites/setup.sh /tmp/gosuites-repos
//	nice -n 10 go run ./examples/toolgen/gosuites -repos /tmp/gosuites-repos \
//	    -out examples/train/suitedata -seed 1 -n 40 -workers 1 -families go-test
//
// A scenario takes 10-40 s (one to -tries runs of a real suite), so the
// committed files were made with small -n on a loaded two-core machine.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// module is one pinned module of the catalog; dir is its folder under -repos.
type module struct {
	path, version, dir string
	weight             int
}

// catalog: the modules whose unmutated suites pass offline in about a
// minute (bbolt was dropped: its suite runs for minutes; golang-lru/v2:
// its expirable example is timing-dependent and fails under load).
var catalog = []module{
	{"github.com/go-chi/chi/v5", "v5.5.0", "chi", 3},
	{"github.com/gorilla/mux", "v1.8.1", "mux", 3},
	{"gopkg.in/yaml.v3", "v3.0.1", "yaml", 2},
	{"github.com/labstack/echo/v4", "v4.16.4", "echo", 3},
	{"github.com/gin-gonic/gin", "v1.12.0", "gin", 3},
	{"go.uber.org/zap", "v1.28.0", "zap", 3},
	{"github.com/google/uuid", "v1.6.0", "uuid", 2},
	{"github.com/dustin/go-humanize", "v1.1.0", "humanize", 2},
	{"github.com/Masterminds/semver/v3", "v3.5.0", "semver", 2},
	{"github.com/spf13/pflag", "v1.1.0", "pflag", 2},
	{"github.com/google/go-cmp", "v0.7.0", "gocmp", 2},
	{"github.com/julienschmidt/httprouter", "v1.3.0", "httprouter", 2},
	{"github.com/pelletier/go-toml/v2", "v2.4.3", "toml", 2},
	{"github.com/tidwall/gjson", "v1.20.2", "gjson", 2},
}

var (
	reposDir = flag.String("repos", "/tmp/gosuites-repos", "folder holding one copy of each module (setup.sh fills it)")
	workRoot = flag.String("work", "", "folder for the mutable work copies (default: a temp dir)")
	tries    = flag.Int("tries", 5, "mutations tried per scenario before dropping it")
	cmdLimit = flag.Duration("timeout", 90*time.Second, "wall limit of one go command")
)

func main() {
	out := flag.String("out", "examples/train/suitedata", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	n := flag.Int("n", 150, "scenarios per family")
	fams := flag.String("families", "go-test,go-test-v,go-test-json,go-vet-real", "comma-separated families")
	workers := flag.Int("workers", 1, "parallel scenarios")
	verbose := flag.Bool("v", false, "log dropped scenarios")
	only := flag.String("modules", "", "comma-separated catalog dirs to use (default all present)")
	flag.Parse()
	log.SetFlags(log.Ltime)
	if *workRoot == "" {
		d, err := os.MkdirTemp("", "gosuites-work-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*workRoot = d
	}
	if err := os.MkdirAll(*workRoot, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := loadModules(*only); err != nil {
		log.Fatal(err)
	}
	gens := map[string]family.Generator{
		"go-test":      genGoTest,
		"go-test-v":    genGoTestV,
		"go-test-json": genGoTestJSON,
		"go-vet-real":  genGoVet,
	}
	err := family.RunFamilies(*fams, gens, family.Options{Out: *out, Seed: *seed, N: *n, Workers: *workers, Verbose: *verbose},
		func(fam string, st family.Stats, took time.Duration) { log.Printf("%s: %v in %v", fam, st, took) })
	if err != nil {
		log.Fatal(err)
	}
}

// pkgInfo is one package of a module with tests.
type pkgInfo struct {
	rel   string   // "." or "./sub"
	files []string // non-test .go files relative to the module root
	tests int
}

// work is a module's mutable copy: every scenario mutates one file in
// place and restores it, so the build and test caches stay warm for the
// packages it did not touch (as on a developer's machine).
type work struct {
	module
	root  string
	pkgs  []pkgInfo
	mu    sync.Mutex
	ready bool
}

var works []*work

func loadModules(only string) error {
	want := map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		if s != "" {
			want[s] = true
		}
	}
	for _, m := range catalog {
		if len(want) > 0 && !want[m.dir] {
			continue
		}
		src := filepath.Join(*reposDir, m.dir)
		if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
			log.Printf("skipping %s: %v", m.path, err)
			continue
		}
		works = append(works, &work{module: m, root: filepath.Join(*workRoot, m.dir)})
	}
	if len(works) == 0 {
		return fmt.Errorf("no module under %s (run setup.sh)", *reposDir)
	}
	return nil
}

// prepare copies the module and lists its packages once.
func (w *work) prepare() error {
	if w.ready {
		return nil
	}
	os.RemoveAll(w.root)
	if out, err := exec.Command("cp", "-r", filepath.Join(*reposDir, w.dir), w.root).CombinedOutput(); err != nil {
		return fmt.Errorf("cp: %v: %s", err, out)
	}
	exec.Command("chmod", "-R", "u+w", w.root).Run()
	out, _, err := goCmd(w.root, "list", "-f", "{{.Dir}}|{{len .TestGoFiles}}|{{len .XTestGoFiles}}|{{join .GoFiles \",\"}}", "./...")
	if err != nil {
		return fmt.Errorf("go list: %v: %s", err, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "|")
		if len(f) != 4 || f[3] == "" {
			continue
		}
		rel, _ := filepath.Rel(w.root, f[0])
		var nt, nx int
		fmt.Sscan(f[1], &nt)
		fmt.Sscan(f[2], &nx)
		if nt+nx == 0 || strings.Contains(rel, "internal/") && nt+nx == 0 {
			continue
		}
		p := pkgInfo{rel: "./" + rel, tests: nt + nx}
		if rel == "." {
			p.rel = "."
		}
		for _, g := range strings.Split(f[3], ",") {
			p.files = append(p.files, filepath.ToSlash(filepath.Join(rel, g)))
		}
		w.pkgs = append(w.pkgs, p)
	}
	if len(w.pkgs) == 0 {
		return fmt.Errorf("%s: no tested package", w.path)
	}
	w.ready = true
	return nil
}

func pickWork(r *rand.Rand) *work {
	return family.PickWeighted(r, works, func(w *work) int { return w.weight })
}

// goCmd runs go with the environment a developer would have offline: the
// module cache is warm, the proxy is not consulted.
func goCmd(dir string, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), *cmdLimit)
	defer cancel()
	c := exec.CommandContext(ctx, "go", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off", "NO_COLOR=1", "TERM=dumb")
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	if ctx.Err() != nil {
		return b.String(), -1, fmt.Errorf("timed out")
	}
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc, err = ee.ExitCode(), nil
	}
	return b.String(), rc, err
}

var (
	modCache, goRoot, homeDir string
	envOnce                   sync.Once
)

// scrub replaces this machine's paths by a developer's.
func scrub(s, root string) string {
	envOnce.Do(func() {
		o, _, _ := goCmd(".", "env", "GOMODCACHE", "GOROOT")
		f := strings.Fields(o)
		if len(f) == 2 {
			modCache, goRoot = f[0], f[1]
		}
		homeDir, _ = os.UserHomeDir()
	})
	s = strings.ReplaceAll(s, root, family.HomeDir)
	if modCache != "" {
		s = strings.ReplaceAll(s, modCache, "/home/dev/go/pkg/mod")
	}
	if goRoot != "" && goRoot != "/usr/local/go" {
		s = strings.ReplaceAll(s, goRoot, "/usr/local/go")
	}
	if *workRoot != "" {
		s = strings.ReplaceAll(s, *workRoot, "/home/dev")
	}
	if homeDir != "" && homeDir != "/" {
		s = strings.ReplaceAll(s, homeDir+"/", "/home/dev/")
	}
	return s
}

// mutant is a run of one command over one mutated file.
type mutant struct {
	w    *work
	pkg  pkgInfo
	file string // relative to the module root
	m    family.Mutation
	out  string   // scrubbed output
	rc   int      // exit status
	args []string // the go command's arguments
}

// runMutants tries up to -tries mutations of files of one package (chosen
// by pick) and returns the first run whose command fails. cmd builds the
// command line for the package; accept may reject a failing run.
func runMutants(r *rand.Rand, pick func(w *work) (pkgInfo, bool), cmd func(r *rand.Rand, w *work, p pkgInfo, file string) []string,
	accept func(mu *mutant) error) (*mutant, []string, error) {
	w := pickWork(r)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.prepare(); err != nil {
		return nil, nil, err
	}
	p, ok := pick(w)
	if !ok {
		return nil, nil, fmt.Errorf("%s: no package fits", w.path)
	}
	var last error = fmt.Errorf("no mutation made the suite fail")
	for t := 0; t < *tries; t++ {
		file := family.Pick(r, p.files)
		full := filepath.Join(w.root, file)
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, nil, err
		}
		src := string(b)
		cands := family.Candidates(src, family.LangC)
		if len(cands) == 0 {
			continue
		}
		m := family.Pick(r, cands)
		args := cmd(r, w, p, file)
		if err := os.WriteFile(full, []byte(m.Apply(src)), 0o644); err != nil {
			return nil, nil, err
		}
		mu, err := func() (*mutant, error) {
			// accept may rerun the command (e.g. narrowed by -run), so the
			// file stays mutated until it returns.
			defer os.WriteFile(full, b, 0o644)
			out, rc, err := goCmd(w.root, args...)
			if err != nil {
				return nil, err
			}
			if rc == 0 {
				return nil, nil
			}
			// Most mutations that break the build are a dropped declaration
			// ("undefined: x"); keep about one in three of them so failing
			// tests dominate, as the brief asks.
			if (strings.Contains(out, "[build failed]") || strings.Contains(out, `"build-output"`)) && t < *tries-1 && r.IntN(3) != 0 {
				return nil, fmt.Errorf("build failure skipped")
			}
			mu := &mutant{w: w, pkg: p, file: file, m: m, out: scrub(out, w.root), rc: rc, args: args}
			if err := accept(mu); err != nil {
				return nil, err
			}
			if n := len(family.SplitLines(mu.out)); n > 3000 || n < 2 {
				return nil, fmt.Errorf("output of %d lines", n)
			}
			return mu, nil
		}()
		if err != nil {
			last = err
		}
		if mu != nil {
			return mu, mu.args, nil
		}
	}
	return nil, nil, last
}

// anyPkg picks a tested package at random.
func anyPkg(r *rand.Rand) func(w *work) (pkgInfo, bool) {
	return func(w *work) (pkgInfo, bool) { return family.Pick(r, w.pkgs), true }
}

func cmdline(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " |*?()$") {
			a = "'" + a + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

func sortedKeys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
