package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// maxFileBytes bounds the files read: larger ones are data tables or
// bundles more often than code someone documented.
const maxFileBytes = 1 << 20

// task is one source file to mine.
type task struct {
	src  string // "kind:name@version"
	path string // path inside the source
	file string // file on disk; "" when text holds the content
	text []byte
	lang string // the corpus's language label, a hint when detection fails
	// gitDir and oid name a blob of a bare repository, read when mined.
	gitDir, oid string
	// messages adds the message pairs (messages.go).
	messages bool
}

// codeExt lists the extensions of the languages mined; the content decides
// between C and C++ for headers.
var codeExt = map[string]bool{
	".go": true, ".py": true, ".js": true, ".mjs": true, ".cjs": true, ".jsx": true,
	".ts": true, ".mts": true, ".cts": true, ".tsx": true, ".rs": true, ".java": true,
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".hpp": true, ".hh": true,
}

// skipDir names the directories never read inside a corpus root: test
// fixtures and vendored copies of other projects (which would also defeat
// the per-source exclusions), plus VCS and cache folders.
func skipDir(name string, allowNodeModules bool) bool {
	switch name {
	case "testdata", "vendor", "__pycache__", ".git":
		return true
	case "node_modules":
		return !allowNodeModules
	}
	return false
}

// hasSkippedSegment applies skipDir to every directory of a relative path,
// for corpora that come as text rather than a tree.
func hasSkippedSegment(p string) bool {
	segs := strings.Split(p, "/")
	for _, s := range segs[:len(segs)-1] {
		if skipDir(s, false) {
			return true
		}
	}
	return false
}

// walkCode lists the code files under dir (relative paths, slash
// separated, sorted), skipping excluded and skipped directories.
func walkCode(dir string, ex *exclusions, allowNodeModules bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable corner does not stop the corpus
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != dir && (skipDir(d.Name(), allowNodeModules) || strings.HasPrefix(d.Name(), ".") || ex.excluded(rel) != "") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !codeExt[strings.ToLower(path.Ext(d.Name()))] || ex.excluded(rel) != "" {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > maxFileBytes || info.Size() == 0 {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out, err
}

// trainCase is the part of a ../shared/traindata case the miner reads.
type trainCase struct {
	Repo  string `json:"repo"`
	Lang  string `json:"lang"`
	Path  string `json:"path"`
	Text  string `json:"text"`
	Split string `json:"split"`
}

// traindataTasks reads the commit-history cases: only train ones, so no
// file seen by the line model's validation leaks into training, and per
// (repository, path) only the longest text, since the cases repeat a file
// at many commits.
func traindataTasks(dir string, ex *exclusions) ([]task, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("traindata: no *.jsonl.gz in %s", dir)
	}
	sort.Strings(files)
	best := map[[2]string]trainCase{}
	for _, f := range files {
		if err := readCases(f, func(c trainCase) {
			if c.Split != "train" || ex.excluded(c.Repo) != "" || ex.excluded(c.Path) != "" || hasSkippedSegment(c.Path) {
				return
			}
			k := [2]string{c.Repo, c.Path}
			if len(c.Text) > len(best[k].Text) {
				best[k] = c
			}
		}); err != nil {
			return nil, err
		}
	}
	var out []task
	for _, c := range best {
		if len(c.Text) > maxFileBytes {
			continue
		}
		out = append(out, task{src: "git:" + c.Repo + "@history", path: c.Path, text: []byte(c.Text), lang: c.Lang})
	}
	return out, nil
}

func readCases(file string, fn func(trainCase)) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	dec := json.NewDecoder(zr)
	for {
		var c trainCase
		if err := dec.Decode(&c); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		fn(c)
	}
}

// unescapeModule undoes the module cache's case encoding ("!x" is "X").
func unescapeModule(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '!' && i+1 < len(s) {
			i++
			b.WriteString(strings.ToUpper(s[i : i+1]))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// gomodTasks reads the module cache: the highest cached version of each
// module.
func gomodTasks(root string, ex *exclusions) ([]task, error) {
	type mod struct{ dir, version string }
	best := map[string]mod{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if !d.IsDir() || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "cache" {
			return filepath.SkipDir
		}
		at := strings.LastIndexByte(d.Name(), '@')
		if at < 0 {
			return nil
		}
		name := unescapeModule(rel[:len(rel)-len(d.Name())+at])
		version := unescapeModule(d.Name()[at+1:])
		if cur, ok := best[name]; !ok || compareVersions(version, cur.version) > 0 {
			best[name] = mod{p, version}
		}
		return filepath.SkipDir
	})
	if err != nil {
		return nil, err
	}
	var out []task
	for name, m := range best {
		src := "go:" + name + "@" + m.version
		if ex.excluded(src) != "" {
			continue
		}
		files, err := walkCode(m.dir, ex, false)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			out = append(out, task{src: src, path: f, file: filepath.Join(m.dir, filepath.FromSlash(f))})
		}
	}
	return out, nil
}

// compareVersions orders module versions the semver way, close enough for
// the module cache: numeric major.minor.patch, a release above its
// prereleases (pseudo-versions are prereleases and order by their
// timestamp), build metadata (+incompatible) ignored; anything unparsable
// falls back to a string compare.
func compareVersions(a, b string) int {
	pa, preA, okA := splitVersion(a)
	pb, preB, okB := splitVersion(b)
	if !okA || !okB {
		return strings.Compare(a, b)
	}
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case preA == preB:
		return 0
	case preA == "":
		return 1
	case preB == "":
		return -1
	}
	return strings.Compare(preA, preB)
}

func splitVersion(v string) (nums [3]int, pre string, ok bool) {
	v = strings.TrimPrefix(v, "v")
	v, _, _ = strings.Cut(v, "+")
	v, pre, _ = strings.Cut(v, "-")
	parts := strings.Split(v, ".")
	if len(parts) > 3 {
		return nums, "", false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nums, "", false
		}
		nums[i] = n
	}
	return nums, pre, true
}

var pythonStdlibRoot = regexp.MustCompile(`(^|/)python3\.\d+(/|$)`)

// pythonTasks reads an installed-packages directory: each top-level
// package or module is a source.
func pythonTasks(root string, ex *exclusions) ([]task, error) {
	if abs, err := filepath.Abs(root); err == nil && pythonStdlibRoot.MatchString(filepath.ToSlash(abs)) && !strings.Contains(filepath.ToSlash(abs), "-packages") {
		return nil, fmt.Errorf("python: %s is the standard library, which the eval sets draw on", root)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	versions := pythonVersions(root, entries)
	var out []task
	for _, e := range entries {
		name := e.Name()
		var top string
		switch {
		case e.IsDir() && !strings.HasSuffix(name, "-info") && !strings.HasSuffix(name, "-stubs") && name != "__pycache__":
			// Stub packages hold signatures without bodies or
			// docstrings: nothing to pair.
			top = name
		case e.Type().IsRegular() && strings.HasSuffix(name, ".py"):
			top = strings.TrimSuffix(name, ".py")
		default:
			continue
		}
		version := versions[strings.ToLower(top)]
		if version == "" {
			version = versions[normDist(top)]
		}
		if version == "" {
			version = "debian"
		}
		src := "py:" + top + "@" + version
		if ex.excluded(src) != "" {
			continue
		}
		if !e.IsDir() {
			if info, err := e.Info(); err == nil && info.Size() > 0 && info.Size() <= maxFileBytes {
				out = append(out, task{src: src, path: name, file: filepath.Join(root, name)})
			}
			continue
		}
		files, err := walkCode(filepath.Join(root, name), ex, false)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if !strings.HasSuffix(f, ".py") {
				continue // compiled extensions ship their C sources rarely, and not as this package's Python
			}
			out = append(out, task{src: src, path: name + "/" + f, file: filepath.Join(root, name, filepath.FromSlash(f))})
		}
	}
	return out, nil
}

func normDist(s string) string {
	return strings.ToLower(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}

// pythonVersions maps the top-level names of the installed distributions
// (from top_level.txt, else the distribution's own name) to their version.
func pythonVersions(root string, entries []os.DirEntry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".dist-info") && !strings.HasSuffix(name, ".egg-info") {
			continue
		}
		p := filepath.Join(root, name)
		var meta []byte
		if e.IsDir() {
			for _, m := range []string{"METADATA", "PKG-INFO"} {
				if b, err := os.ReadFile(filepath.Join(p, m)); err == nil {
					meta = b
					break
				}
			}
		} else {
			meta, _ = os.ReadFile(p)
		}
		var dist, version string
		sc := bufio.NewScanner(strings.NewReader(string(meta)))
		for sc.Scan() {
			l := sc.Text()
			if l == "" {
				break // the headers end at the first blank line
			}
			if v, ok := strings.CutPrefix(l, "Name:"); ok {
				dist = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "Version:"); ok {
				version = strings.TrimSpace(v)
			}
		}
		if version == "" {
			continue
		}
		if dist == "" {
			dist, _, _ = strings.Cut(strings.TrimSuffix(strings.TrimSuffix(name, ".dist-info"), ".egg-info"), "-")
		}
		out[normDist(dist)] = version
		if tl, err := os.ReadFile(filepath.Join(p, "top_level.txt")); err == nil {
			for _, t := range strings.Fields(string(tl)) {
				if _, seen := out[strings.ToLower(t)]; !seen {
					out[strings.ToLower(t)] = version
				}
			}
		}
	}
	return out
}

// npmTasks reads the npm installation and its bundled node_modules; a
// file belongs to the package of the nearest package.json with a name.
func npmTasks(root string, ex *exclusions) ([]task, error) {
	files, err := walkCode(root, ex, true)
	if err != nil {
		return nil, err
	}
	type pkg struct{ dir, name, version string }
	cache := map[string]*pkg{}
	var find func(dir string) *pkg
	find = func(dir string) *pkg {
		if p, ok := cache[dir]; ok {
			return p
		}
		var p *pkg
		var meta struct{ Name, Version string }
		if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), "package.json")); err == nil && json.Unmarshal(b, &meta) == nil && meta.Name != "" {
			p = &pkg{dir, meta.Name, meta.Version}
		} else if dir != "." {
			p = find(path.Dir(dir))
		}
		cache[dir] = p
		return p
	}
	var out []task
	for _, f := range files {
		switch path.Ext(f) {
		case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		default:
			continue
		}
		p := find(path.Dir(f))
		if p == nil {
			continue
		}
		version := p.version
		if version == "" {
			version = "unversioned"
		}
		src := "npm:" + p.name + "@" + version
		if ex.excluded(src) != "" {
			continue
		}
		rel := f
		if p.dir != "." {
			rel = strings.TrimPrefix(f, p.dir+"/")
		}
		out = append(out, task{src: src, path: rel, file: filepath.Join(root, filepath.FromSlash(f))})
	}
	return out, nil
}
