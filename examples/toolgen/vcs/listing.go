package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// fentry is a file written into a listing tree.
type fentry struct {
	size int64
	kind string // "src", "test", "cache", "artifact", "tiny", "doc"
}

// genListing builds a directory tree from a repository's paths and returns
// one listing output with its questions.
func genListing(rng *rand.Rand, repo *repoData, id, dir string) ([]*output, error) {
	latest := map[string]string{}
	paths := append([]string{}, repo.paths...)
	for _, p := range paths {
		recs := repo.byPath[p]
		latest[p] = recs[len(recs)-1].Text
	}
	rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	if len(paths) > 150 {
		paths = paths[:60+rng.IntN(90)]
	}
	files := map[string]*fentry{}
	write := func(rel string, data []byte, kind string) error {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		files[rel] = &fentry{size: int64(len(data)), kind: kind}
		return os.WriteFile(p, data, 0o644)
	}
	sized := func(text string, n int) []byte {
		if n <= 0 || text == "" {
			return nil
		}
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(text)
		}
		return []byte(b.String()[:n])
	}
	dirs := map[string][]string{}
	for _, p := range paths {
		t := latest[p]
		f := math.Exp(rng.Float64()*math.Log(12)) / 4 // 0.25 .. 3
		n := int(float64(len(t))*f) + rng.IntN(200)
		kind := "src"
		if isTestPath(p) {
			kind = "test"
		}
		if err := write(p, sized(t, n), kind); err != nil {
			return nil, err
		}
		dirs[filepath.Dir(p)] = append(dirs[filepath.Dir(p)], p)
	}
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	var dnames []string
	for d := range dirs {
		dnames = append(dnames, d)
	}
	sort.Strings(dnames)
	for _, d := range dnames {
		for _, p := range dirs[d] {
			ext := filepath.Ext(p)
			stem := strings.TrimSuffix(filepath.Base(p), ext)
			sz := int(files[p].size)
			switch ext {
			case ".py":
				if rng.IntN(10) < 7 {
					v := pick(rng, []string{"311", "311", "312", "310"})
					if err := write(filepath.Join(d, "__pycache__", stem+".cpython-"+v+".pyc"), noise(sz/2+rng.IntN(sz/2+100)), "cache"); err != nil {
						return nil, err
					}
				}
			case ".java":
				if !isTestPath(p) && rng.IntN(2) == 0 {
					if err := write(filepath.Join("target/classes", strings.TrimPrefix(d, "src/main/java"), stem+".class"), noise(sz/3+rng.IntN(sz/2+100)), "artifact"); err != nil {
						return nil, err
					}
				}
			case ".c", ".cc", ".cpp":
				if rng.IntN(3) > 0 {
					if err := write(filepath.Join("build", d, stem+".o"), noise(sz/2+rng.IntN(sz+100)), "artifact"); err != nil {
						return nil, err
					}
				}
			}
		}
		// Tiny package markers / re-exports.
		if rng.IntN(3) == 0 && len(dirs[d]) >= 1 {
			first := strings.TrimSuffix(filepath.Base(dirs[d][0]), filepath.Ext(dirs[d][0]))
			var name, body string
			switch repo.lang {
			case "python":
				name, body = "__init__.py", pick(rng, []string{"", "from ." + first + " import *\n", "# package\n"})
			case "javascript":
				name, body = "index.js", "module.exports = require('./"+first+"');\n"
			case "typescript":
				name, body = "index.ts", "export * from './"+first+"'\n"
			case "rust":
				name, body = "mod.rs", "mod "+first+";\npub use self::"+first+"::*;\n"
			case "go":
				name, body = "doc.go", "// Package "+filepath.Base(d)+" is documented elsewhere.\npackage "+filepath.Base(d)+"\n"
			}
			if name != "" {
				if _, exists := files[filepath.Join(d, name)]; !exists {
					if err := write(filepath.Join(d, name), []byte(body), "tiny"); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	switch repo.lang {
	case "javascript", "typescript":
		for i := 0; i < 1+rng.IntN(3); i++ {
			base := pick(rng, []string{"bundle", "index", "main", strings.ReplaceAll(filepath.Base(repo.name), ".", "")})
			n := 40000 + rng.IntN(400000)
			if err := write(fmt.Sprintf("dist/%s.min.js", base), noise(n), "artifact"); err != nil {
				return nil, err
			}
			if err := write(fmt.Sprintf("dist/%s.min.js.map", base), noise(n*2), "artifact"); err != nil {
				return nil, err
			}
		}
	case "rust":
		for i := 0; i < 2+rng.IntN(3); i++ {
			if err := write(fmt.Sprintf("target/debug/deps/lib%s-%08x.rlib", pick(rng, []string{"core", "util", "proc", "sync", "io"}), rng.Uint32()), noise(50000+rng.IntN(300000)), "artifact"); err != nil {
				return nil, err
			}
		}
	}
	for _, doc := range []string{"README.md", "LICENSE", ".gitignore"} {
		if err := write(doc, sized("Project documentation and notes.\n", 100+rng.IntN(9000)), "doc"); err != nil {
			return nil, err
		}
	}
	// Seeded mtimes.
	base := time.Date(2023+rng.IntN(2), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 9, 0, 0, 0, time.UTC)
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			t := base.Add(-time.Duration(rng.IntN(300*24*60)) * time.Minute)
			os.Chtimes(p, t, t)
		}
		return nil
	})
	// Candidate subtrees: directories with many entries below them.
	below := map[string]int{}
	for p := range files {
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			below[d]++
			if d == "." {
				break
			}
		}
	}
	var subs []string
	for d, n := range below {
		if n >= 12 {
			subs = append(subs, d)
		}
	}
	sort.Strings(subs)
	if len(subs) == 0 {
		return nil, fmt.Errorf("tree too small")
	}
	r := newRunner(dir)
	type cmdSpec struct {
		name string
		args func(sub string) []string
		file string
	}
	specs := []cmdSpec{
		{"du -a", func(s string) []string { return []string{"du", "-a", s} }, "du_%s.txt"},
		{"du -ah", func(s string) []string { return []string{"du", "-ah", s} }, "du_%s.txt"},
		{"du -h --max-depth", func(s string) []string { return []string{"du", "-h", "--max-depth=" + strconv.Itoa(2+rng.IntN(2)), s} }, "du_depth_%s.txt"},
		{"du -k --max-depth", func(s string) []string { return []string{"du", "-k", "--max-depth=" + strconv.Itoa(2+rng.IntN(3)), s} }, "du_%s.txt"},
		{"ls -lR", func(s string) []string { return []string{"ls", "-lR", s} }, "ls_%s.txt"},
		{"ls -laR", func(s string) []string { return []string{"ls", "-laR", s} }, "ls_%s.txt"},
		{"ls -la", func(s string) []string { return []string{"ls", "-la", s} }, "ls_%s.txt"},
		{"ls -lS", func(s string) []string { return []string{"ls", "-lS", s} }, "ls_sorted_%s.txt"},
		{"find printf", func(s string) []string { return []string{"find", s, "-type", "f", "-printf", "%10s  %p\n"} }, "find_%s.txt"},
		{"find size", func(s string) []string {
			return []string{"find", s, "-type", "f", "-size", fmt.Sprintf("+%dk", 1+rng.IntN(3)), "-printf", "%s\t%p\n"}
		}, "find_%s.txt"},
		{"find exec ls", func(s string) []string {
			return []string{"find", s, "-type", "f", "-name", "*" + pick(rng, []string{".py", ".go", ".js", ".ts", ".java", ".rs", ".c", ".h", ".cpp", ".hpp"}), "-exec", "ls", "-l", "{}", "+"}
		}, "find_ls_%s.txt"},
	}
	for try := 0; try < 12; try++ {
		sp := specs[rng.IntN(len(specs))]
		sub := subs[rng.IntN(len(subs))]
		if strings.HasPrefix(sp.name, "ls -l") && sp.name != "ls -lR" && sp.name != "ls -laR" {
			// single directory: the one with most direct entries
			best, bn := "", 0
			cnt := map[string]int{}
			for p := range files {
				cnt[filepath.Dir(p)]++
			}
			for d, n := range cnt {
				if n > bn || (n == bn && d < best) {
					best, bn = d, n
				}
			}
			sub = best
		}
		arg := sub
		if arg != "." && rng.IntN(4) == 0 {
			arg = "./" + arg
		} else if rng.IntN(6) == 0 {
			arg = filepath.Join(dir, sub)
		}
		out, err := r.run("", nil, sp.args(arg)[0], sp.args(arg)[1:]...)
		if err != nil || out == "" {
			continue
		}
		text := r.clean(out)
		n := len(splitLines(text))
		if n < 40 || n > 800 {
			continue
		}
		label := strings.ReplaceAll(strings.Trim(sub, "./"), "/", "_")
		if label == "" {
			label = strings.ReplaceAll(filepath.Base(repo.name), ".", "_")
		}
		o := newOutput(id, fmt.Sprintf(sp.file, label), text)
		o.dirHint = sub
		ents := parseListing(o, files)
		if len(ents) < 10 {
			continue
		}
		listingQuestions(rng, o, ents, files, strings.HasPrefix(sp.name, "ls -l") && strings.Contains(sp.name, "R"))
		if len(o.qs) >= 2 {
			return []*output{o}, nil
		}
	}
	return nil, fmt.Errorf("no usable listing")
}

// lentry is a line of a listing naming a file or directory.
type lentry struct {
	line  int
	path  string // relative to the tree root
	dir   bool
	val   float64 // displayed size (units of the output)
	bytes bool    // val is in bytes
	head  int     // ls -R header line of its directory, or -1
}

func parseHuman(s string) (float64, bool) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1024*1024, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1024*1024*1024, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * mult, err == nil
}

func normPath(p string) string {
	p = strings.TrimPrefix(p, homeDir)
	p = strings.TrimPrefix(p, "/")
	p = filepath.Clean(p)
	return p
}

func parseListing(o *output, files map[string]*fentry) []lentry {
	var ents []lentry
	curDir, head := "", -1
	for i, l := range o.lines {
		if strings.HasSuffix(l, ":") && !strings.Contains(l, " ") {
			curDir, head = normPath(strings.TrimSuffix(l, ":")), i
			continue
		}
		if l == "" || strings.HasPrefix(l, "total ") {
			continue
		}
		if sz, p, ok := strings.Cut(l, "\t"); ok { // du, find -printf %s\t%p
			v, okv := parseHuman(strings.TrimSpace(sz))
			if !okv {
				continue
			}
			np := normPath(p)
			_, isFile := files[np]
			ents = append(ents, lentry{line: i, path: np, dir: !isFile, val: v, bytes: strings.HasPrefix(o.file, "find"), head: -1})
			continue
		}
		fs := strings.Fields(l)
		if len(fs) == 2 { // find -printf '%10s  %p'
			if v, err := strconv.ParseFloat(fs[0], 64); err == nil {
				np := normPath(fs[1])
				_, isFile := files[np]
				ents = append(ents, lentry{line: i, path: np, dir: !isFile, val: v, bytes: true, head: -1})
			}
			continue
		}
		if len(fs) >= 9 && strings.ContainsAny(l[:1], "-dl") {
			v, ok := parseHuman(fs[4])
			if !ok {
				continue
			}
			name := strings.Join(fs[8:], " ")
			if name == "." || name == ".." {
				continue
			}
			np := normPath(name)
			if curDir != "" || !strings.Contains(name, "/") {
				if curDir == "" {
					curDir = normPath(listDir(o))
				}
				np = normPath(filepath.Join(curDir, name))
			}
			ents = append(ents, lentry{line: i, path: np, dir: l[0] == 'd', val: v, bytes: true, head: head})
		}
	}
	// Keep only entries that name something in the tree.
	var out []lentry
	for _, e := range ents {
		if _, ok := files[e.path]; ok || e.dir {
			out = append(out, e)
		}
	}
	return out
}

// listDir recovers the directory a non-recursive ls listed from the file
// name of the output (set by genListing); "." when unknown.
func listDir(o *output) string { return o.dirHint }

func listingQuestions(rng *rand.Rand, o *output, ents []lentry, files map[string]*fentry, recursive bool) {
	want := 2 + rng.IntN(4)
	withHead := func(es []lentry) []int {
		var g []int
		for _, e := range es {
			g = append(g, e.line)
			if recursive && e.head >= 0 {
				g = append(g, e.head)
			}
		}
		return g
	}
	fileEnts := func(keep func(e lentry, f *fentry) bool) []lentry {
		var es []lentry
		for _, e := range ents {
			if f, ok := files[e.path]; ok && !e.dir && keep(e, f) {
				es = append(es, e)
			}
		}
		return es
	}
	topK := func(es []lentry, k int) []lentry {
		s := append([]lentry{}, es...)
		sort.SliceStable(s, func(i, j int) bool { return s[i].val > s[j].val })
		for ; k >= 1; k-- {
			if k < len(s) && s[k-1].val > s[k].val {
				return s[:k]
			}
		}
		return nil
	}
	gens := []func() bool{
		func() bool { // largest in one directory (direct children)
			by := map[string][]lentry{}
			for _, e := range fileEnts(func(e lentry, f *fentry) bool { return f.kind == "src" || f.kind == "test" }) {
				by[filepath.Dir(e.path)] = append(by[filepath.Dir(e.path)], e)
			}
			var ds []string
			for d, es := range by {
				if len(es) >= 4 {
					ds = append(ds, d)
				}
			}
			if len(ds) == 0 {
				return false
			}
			sort.Strings(ds)
			d := ds[rng.IntN(len(ds))]
			k := 1 + rng.IntN(3)
			top := topK(by[d], k)
			if top == nil {
				return false
			}
			dn := d
			if rng.IntN(2) == 0 {
				dn = filepath.Base(d)
			}
			if d == "." {
				dn = "the top level"
			}
			q := fmt.Sprintf(pick(rng, []string{"Ignoring nested folders, what are the heaviest files sitting in %[1]s itself?",
				"Name the top %[2]d files by size inside %[1]s.", "%[1]s feels bloated; point me at its %[2]d fattest files so I can break them up.",
				"Rank the files of %[1]s by byte count and give me the first %[2]d."}), dn, len(top))
			if len(top) == 1 {
				q = fmt.Sprintf(pick(rng, []string{"Single heaviest file in %s?", "Out of everything in %s, what file has the most bytes?", "Show me the one file that dominates %s in size."}), dn)
			}
			return o.add(q, withHead(top))
		},
		func() bool { // largest test files
			top := topK(fileEnts(func(e lentry, f *fentry) bool { return f.kind == "test" }), 1+rng.IntN(4))
			if top == nil {
				return false
			}
			q := fmt.Sprintf(pick(rng, []string{"Top %d test files ranked by size?", "Our test suite is getting heavy — list the %d bulkiest test sources.",
				"Show the %d test files with the highest byte counts.", "Among the tests, find the %d that occupy the most bytes."}), len(top))
			return o.add(q, withHead(top))
		},
		func() bool { // above a threshold, bytes only
			es := fileEnts(func(e lentry, f *fentry) bool { return e.bytes && (f.kind == "src" || f.kind == "test") })
			testsOnly := rng.IntN(2) == 0
			if testsOnly {
				es = fileEnts(func(e lentry, f *fentry) bool { return e.bytes && f.kind == "test" })
			}
			if len(es) < 4 {
				return false
			}
			sort.SliceStable(es, func(i, j int) bool { return es[i].val > es[j].val })
			k := clip(1+rng.IntN(8), 1, len(es)-1)
			for ; k >= 1; k-- {
				hiKB := int(es[k-1].val) / 1024
				loKB := int(es[k].val) / 1024
				if hiKB > loKB && hiKB >= 2 {
					thr := loKB + (hiKB-loKB+1)/2
					if float64(thr*1024) >= es[k-1].val || float64(thr*1024) < es[k].val {
						thr = loKB
						if float64(thr*1024) < es[k].val {
							continue
						}
					}
					what := "source files"
					if testsOnly {
						what = "test files"
					}
					q := fmt.Sprintf(pick(rng, []string{"Any %s exceeding %d KB?", "Find every one of the %s whose size passes %d KB.", "Show %s with sizes above the %d KB mark.", "I only care about %s heavier than %d KB; list them."}), what, thr)
					return o.add(q, withHead(es[:k]))
				}
			}
			return false
		},
		func() bool { // subdirectories taking the most space + total
			var dirsE []lentry
			var root *lentry
			for i, e := range ents {
				if e.dir {
					dirsE = append(dirsE, e)
					if root == nil || len(e.path) < len(root.path) || (e.path == ".") {
						root = &ents[i]
					}
				}
			}
			if root == nil || strings.HasPrefix(o.file, "ls") {
				return false
			}
			var kids []lentry
			for _, e := range dirsE {
				if e.path != root.path && (filepath.Dir(e.path) == root.path) {
					kids = append(kids, e)
				}
			}
			if len(kids) < 3 {
				return false
			}
			top := topK(kids, 1+rng.IntN(3))
			if top == nil {
				return false
			}
			q := pick(rng, []string{"Break down usage: the heaviest immediate subfolders plus the grand total, please.",
				"I'm tight on disk. Which child folders eat the most, and what does everything add up to?",
				"Give me the top folders by usage and the total for the whole checkout.",
				"Summarise consumption: name the bulkiest folders one level down and the overall sum."})
			return o.add(q, append(withHead(top), root.line))
		},
		func() bool { // tiny files
			es := fileEnts(func(e lentry, f *fentry) bool { return e.bytes && e.val < 200 })
			if len(es) < 1 || len(es) > 15 {
				return false
			}
			q := pick(rng, []string{"Spot the stub files — a few bytes each, likely just markers or re-export shims.",
				"List anything below 200 bytes.", "Some files look almost empty; which are they?", "Find the practically blank files in this listing."})
			return o.add(q, withHead(es))
		},
		func() bool { // caches / artefacts
			es := fileEnts(func(e lentry, f *fentry) bool { return f.kind == "cache" || f.kind == "artifact" })
			if len(es) < 1 {
				return false
			}
			if len(es) > 15 {
				by := map[string][]lentry{}
				for _, e := range es {
					by[filepath.Dir(e.path)] = append(by[filepath.Dir(e.path)], e)
				}
				var ds []string
				for d, x := range by {
					if len(x) <= 15 {
						ds = append(ds, d)
					}
				}
				if len(ds) == 0 {
					return false
				}
				sort.Strings(ds)
				d := ds[rng.IntN(len(ds))]
				q := fmt.Sprintf(pick(rng, []string{"Inside %s, what is machine-generated rather than hand-written?", "Point out the compiled leftovers and cache files under %s.", "%s has junk from builds; which entries are they?"}), d)
				return o.add(q, withHead(by[d]))
			}
			q := pick(rng, []string{"Flag bytecode, object files and other generated clutter in this listing.", "What here should be gitignored because a build produced it?",
				"Separate out the non-source junk: caches, binaries, bundles.", "Identify leftovers from compiling or packaging."})
			return o.add(q, withHead(es))
		},
		func() bool { // test files about a topic, with sizes
			by := map[string][]lentry{}
			for _, e := range fileEnts(func(e lentry, f *fentry) bool { return f.kind == "test" }) {
				seen := map[string]bool{}
				for _, w := range wordRe.FindAllString(strings.TrimSuffix(filepath.Base(e.path), filepath.Ext(e.path)), -1) {
					w = strings.ToLower(w)
					if len(w) >= 4 && w != "test" && w != "tests" && w != "spec" && !seen[w] {
						seen[w] = true
						by[w] = append(by[w], e)
					}
				}
			}
			var ws []string
			for w, es := range by {
				if len(es) <= 4 {
					ws = append(ws, w)
				}
			}
			if len(ws) == 0 {
				return false
			}
			sort.Strings(ws)
			w := ws[rng.IntN(len(ws))]
			q := fmt.Sprintf(pick(rng, []string{"Show the %s tests along with their sizes.", "How large are the test sources dealing with %s?", "Find the spec or test files named after %s and report their size."}), w)
			return o.add(q, withHead(by[w]))
		},
	}
	for _, k := range rng.Perm(len(gens)) {
		if len(o.qs) >= want {
			break
		}
		gens[k]()
	}
}
