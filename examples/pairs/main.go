// Command pairs mines natural-language / code pairs from source files for
// training a contrastive encoder of questions and code (issue #29): a doc
// comment and the definition it documents, an inline comment and the
// statements under it, with the other units of the same file as hard
// negatives. See README.md for the output format and the exclusions.
//
//	go run ./examples/pairs -out /tmp/pairs/all.jsonl.gz -manifest examples/pairs/MANIFEST.tsv
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prunekit/pruner/internal/syntax"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.out, "out", "", "output file (gzipped JSONL), required")
	flag.StringVar(&cfg.manifest, "manifest", "", "write a TSV of the sources used here")
	flag.StringVar(&cfg.traindata, "traindata", "../shared/traindata", "directory of commit-history cases (*.jsonl.gz); empty to skip")
	flag.StringVar(&cfg.gomod, "gomod", goModCache(), "Go module cache; empty to skip")
	flag.StringVar(&cfg.python, "python", "/usr/lib/python3/dist-packages", "installed Python packages; empty to skip")
	flag.StringVar(&cfg.npm, "npm", "/usr/lib/node_modules/npm", "npm installation (with its node_modules); empty to skip")
	flag.StringVar(&cfg.git, "git", "", "comma-separated bare git repositories (fetch mirrors, .../owner+name/repo) mined at HEAD")
	flag.StringVar(&cfg.exclude, "exclude", "../shared/evalsets/EXCLUDE.md", "list of eval sources to add to the built-in exclusions, if present")
	flag.IntVar(&cfg.maxFiles, "max-files", 0, "mine at most this many files (0: all)")
	flag.IntVar(&cfg.workers, "workers", runtime.NumCPU(), "files parsed in parallel")
	flag.BoolVar(&cfg.messages, "messages", false, "also mine message pairs: an error, panic or log message and the code that emits it (kind msg)")
	flag.Parse()
	if cfg.out == "" {
		fmt.Fprintln(os.Stderr, "pairs: -out is required")
		flag.Usage()
		os.Exit(2)
	}
	if err := run(context.Background(), cfg, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pairs:", err)
		os.Exit(1)
	}
}

func goModCache() string {
	if v := os.Getenv("GOMODCACHE"); v != "" {
		return v
	}
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}

type config struct {
	out, manifest                 string
	traindata, gomod, python, npm string
	git                           string
	exclude                       string
	maxFiles, workers             int
	messages                      bool
}

// stats is what a run counts; one per file, summed.
type stats struct {
	read, records, units, pairs int
	skipped                     map[string]int
	pairsByKind, pairsByLang    map[string]int
	recordsBySplit              map[string]int
	pairsBySplit                map[string]int
	sources                     map[string]*sourceStats
}

type sourceStats struct{ files, pairs, units int }

func newStats() *stats {
	return &stats{skipped: map[string]int{}, pairsByKind: map[string]int{}, pairsByLang: map[string]int{},
		recordsBySplit: map[string]int{}, pairsBySplit: map[string]int{}, sources: map[string]*sourceStats{}}
}

// result is one mined file.
type result struct {
	line []byte // the JSONL record with its newline; nil for none
	rec  *Record
	skip string // why the file was not mined, "" if it was
}

func run(ctx context.Context, cfg config, log io.Writer) error {
	start := time.Now()
	ex := newExclusions()
	if cfg.exclude != "" {
		if err := ex.load(cfg.exclude); err != nil {
			return err
		}
	}
	defer blobs.closeAll()
	tasks, err := collect(cfg, ex)
	if err != nil {
		return err
	}
	sort.Slice(tasks, func(a, b int) bool {
		if tasks[a].src != tasks[b].src {
			return tasks[a].src < tasks[b].src
		}
		return tasks[a].path < tasks[b].path
	})
	if cfg.maxFiles > 0 && len(tasks) > cfg.maxFiles {
		tasks = tasks[:cfg.maxFiles]
	}
	for i := range tasks {
		tasks[i].messages = cfg.messages
	}
	fmt.Fprintf(log, "pairs: %d files to mine (listed in %s)\n", len(tasks), time.Since(start).Round(time.Millisecond))
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(cfg.out)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := mineAll(ctx, tasks, max(cfg.workers, 1), f)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if cfg.manifest != "" {
		if err := writeManifest(cfg.manifest, st); err != nil {
			return err
		}
	}
	summary(log, st, time.Since(start))
	return nil
}

// collect lists the files of every enabled corpus.
func collect(cfg config, ex *exclusions) ([]task, error) {
	var all []task
	for _, c := range []struct {
		name, dir string
		list      func(string, *exclusions) ([]task, error)
	}{
		{"traindata", cfg.traindata, traindataTasks},
		{"gomod", cfg.gomod, gomodTasks},
		{"python", cfg.python, pythonTasks},
		{"npm", cfg.npm, npmTasks},
		{"git", cfg.git, gitTasks},
	} {
		if c.dir == "" {
			continue
		}
		ts, err := c.list(c.dir, ex)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		all = append(all, ts...)
	}
	return all, nil
}

// window bounds the mined records held before their turn to be written.
const window = 512

// mineAll mines the tasks in parallel and writes the records to w, in the
// tasks' order, as deterministic gzip (no name, no time in the header).
func mineAll(ctx context.Context, tasks []task, workers int, w io.Writer) (*stats, error) {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	results := make([]result, len(tasks))
	done := make([]chan struct{}, len(tasks))
	for i := range done {
		done[i] = make(chan struct{})
	}
	jobs := make(chan int)
	slots := make(chan struct{}, window)
	go func() {
		defer close(jobs)
		for i := range tasks {
			slots <- struct{}{}
			jobs <- i
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = mineTask(ctx, &tasks[i])
				tasks[i].text = nil
				close(done[i])
			}
		}()
	}
	st := newStats()
	var werr error
	for i := range tasks {
		<-done[i]
		r := &results[i]
		st.add(r)
		if r.line != nil && werr == nil {
			_, werr = zw.Write(r.line)
		}
		results[i] = result{}
		<-slots
	}
	wg.Wait()
	if werr != nil {
		return nil, werr
	}
	return st, zw.Close()
}

func (st *stats) add(r *result) {
	if r.skip != "" {
		st.skipped[r.skip]++
		return
	}
	st.read++
	rec := r.rec
	if rec == nil {
		return
	}
	st.records++
	st.units += len(rec.Units)
	st.pairs += len(rec.Pairs)
	st.recordsBySplit[rec.Split]++
	st.pairsBySplit[rec.Split] += len(rec.Pairs)
	for _, p := range rec.Pairs {
		st.pairsByKind[p.Kind]++
		st.pairsByLang[rec.Lang]++
	}
	s := st.sources[rec.Src]
	if s == nil {
		s = &sourceStats{}
		st.sources[rec.Src] = s
	}
	s.files++
	s.pairs += len(rec.Pairs)
	s.units += len(rec.Units)
}

// mineTask reads, filters and mines one file.
func mineTask(ctx context.Context, t *task) result {
	text := t.text
	if t.file != "" {
		b, err := os.ReadFile(t.file)
		if err != nil {
			return result{skip: "unreadable"}
		}
		text = b
	} else if t.gitDir != "" {
		b, err := blobs.get(t.gitDir).read(t.oid)
		if err != nil {
			return result{skip: "unreadable"}
		}
		text = b
	}
	if why := skipText(text); why != "" {
		return result{skip: why}
	}
	lang := syntax.Detect(string(text), t.path)
	if !lang.IsCode() && t.lang != "" {
		lang, _ = syntax.ParseLanguage(t.lang)
	}
	if !lang.IsCode() {
		return result{skip: "not code"}
	}
	units, pairs := mineFileOpts(ctx, lang, text, t.messages)
	if units == nil && pairs == nil {
		return result{skip: "no parse"}
	}
	if len(pairs) == 0 || !keepRecord(units, pairs) {
		return result{}
	}
	rec := &Record{Src: t.src, Path: t.path, Lang: lang.String(), Split: split(t.src, t.path), Units: units, Pairs: pairs}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return result{skip: "encode"}
	}
	// Only the counts are kept past this point: the record's text lives in
	// line.
	rec.Units, rec.Pairs = make([]Unit, len(units)), pairs
	for i := range pairs {
		pairs[i].NL = ""
	}
	return result{line: buf.Bytes(), rec: rec}
}

// skipText says why a file's content is not mined, "" to mine it.
func skipText(text []byte) string {
	if len(text) > maxFileBytes {
		return "too large"
	}
	head := text
	for i, n := 0, 0; i < len(text); i++ {
		if text[i] == '\n' {
			if n++; n == 5 {
				head = text[:i]
				break
			}
		}
	}
	for _, m := range []string{"Code generated", "DO NOT EDIT", "@generated"} {
		if bytes.Contains(head, []byte(m)) {
			return "generated"
		}
	}
	lines := bytes.Count(text, []byte{'\n'}) + 1
	if len(text)/lines > 200 {
		return "minified"
	}
	if stdlibCopy(string(text)) {
		return "standard library copy"
	}
	return ""
}

// split assigns a file to "val" one time in twenty, by a hash of its
// repository's identity and its path (repoKey), so that no file is on
// both sides, even when two corpora hold the same repository under
// different source names.
func split(src, path string) string {
	h := fnv.New32a()
	h.Write([]byte(repoKey(src) + "\x00" + path))
	if h.Sum32()%20 == 0 {
		return "val"
	}
	return "train"
}

// repoAliases maps the identity repoKey derives for a package or a vanity
// module path to the owner/name of its repository, where a corpus holds
// both (traindata and the module cache or dist-packages).
var repoAliases = map[string]string{
	"go.etcd.io/bbolt": "etcd-io/bbolt",
	"go.uber.org/zap":  "uber-go/zap",
	"go.yaml.in/yaml":  "go-yaml/yaml",
	"tornado":          "tornadoweb/tornado",
	"_pytest":          "pytest-dev/pytest",
	"pytest":           "pytest-dev/pytest",
	"jinja2":           "pallets/jinja",
	"werkzeug":         "pallets/werkzeug",
	"markupsafe":       "pallets/markupsafe",
	"aiohttp":          "aio-libs/aiohttp",
	"httpx":            "encode/httpx",
	"marshmallow":      "marshmallow-code/marshmallow",
	"pydantic":         "pydantic/pydantic",
	"scrapy":           "scrapy/scrapy",
	"black":            "psf/black",
	"more_itertools":   "more-itertools/more-itertools",
	"toolz":            "pytoolz/toolz",
	"cachetools":       "tkem/cachetools",
	"boltons":          "mahmoud/boltons",
	"huggingface_hub":  "huggingface/huggingface_hub",
	"axios":            "axios/axios",
	"koa":              "koajs/koa",
	"lodash":           "lodash/lodash",
	"moment":           "moment/moment",
	"date-fns":         "date-fns/date-fns",
	"got":              "sindresorhus/got",
	"picomatch":        "micromatch/picomatch",
	"minimist":         "substack/minimist",
	"ejs":              "mde/ejs",
}

var gopkgIn = regexp.MustCompile(`^gopkg\.in/(?:([^/]+)/)?([^/.]+)\.v\d+`)

// repoKey is the canonical identity of the repository a source comes
// from, the same in every corpus: owner/name, lower case, for traindata
// and git mirrors and for Go modules on github.com (a subdirectory or
// major version dropped) or gopkg.in; the module path for other Go hosts;
// the top-level package for Python; the package name for npm; then
// repoAliases. Other kinds: the source without its version.
func repoKey(src string) string {
	kind, rest, _ := strings.Cut(src, ":")
	name, _ := splitSource(rest)
	var key string
	switch kind {
	case "git":
		key = strings.ToLower(name)
	case "go":
		segs := strings.Split(name, "/")
		switch m := gopkgIn.FindStringSubmatch(name); {
		case segs[0] == "github.com" && len(segs) >= 3:
			key = strings.ToLower(segs[1] + "/" + segs[2])
		case m != nil && m[1] != "":
			key = strings.ToLower(m[1] + "/" + m[2])
		case m != nil:
			key = strings.ToLower("go-" + m[2] + "/" + m[2])
		default:
			key = name
			if majorSuffix.MatchString(path.Base(name)) {
				key = path.Dir(name)
			}
		}
	case "py":
		key = strings.ToLower(name)
	case "npm":
		key = name
	default:
		key = src
		if kind != src {
			key = name
		}
	}
	if a, ok := repoAliases[key]; ok {
		return a
	}
	return key
}

var majorSuffix = regexp.MustCompile(`^v\d+$`)

// splitSource cuts "kind:name@version" at its last '@' (npm scopes start
// with one).
func splitSource(src string) (name, version string) {
	at := strings.LastIndexByte(src, '@')
	if at <= 0 {
		return src, ""
	}
	return src[:at], src[at+1:]
}

const manifestHeader = `# Sources of the natural-language / code pairs mined by examples/pairs
# (issue #29): one row per source that yielded at least one record.
# None may be a source the eval sets draw on (TestManifestExclusions).
# files: files with a record; pairs and units: their totals.
source	version	files	pairs	units
`

func writeManifest(file string, st *stats) error {
	var b strings.Builder
	b.WriteString(manifestHeader)
	srcs := make([]string, 0, len(st.sources))
	for s := range st.sources {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	for _, s := range srcs {
		name, version := splitSource(s)
		x := st.sources[s]
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d\t%d\n", name, version, x.files, x.pairs, x.units)
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

func summary(w io.Writer, st *stats, took time.Duration) {
	fmt.Fprintf(w, "pairs: read %d files, %d with records (train %d, val %d), %d sources\n",
		st.read, st.records, st.recordsBySplit["train"], st.recordsBySplit["val"], len(st.sources))
	fmt.Fprintf(w, "pairs: %d pairs (train %d, val %d), %d units\n", st.pairs, st.pairsBySplit["train"], st.pairsBySplit["val"], st.units)
	fmt.Fprintf(w, "pairs: by kind: %s\n", counts(st.pairsByKind))
	fmt.Fprintf(w, "pairs: by language: %s\n", counts(st.pairsByLang))
	fmt.Fprintf(w, "pairs: skipped files: %s\n", counts(st.skipped))
	fmt.Fprintf(w, "pairs: took %s\n", took.Round(time.Second))
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
