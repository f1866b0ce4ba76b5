package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

// gcommit is one commit of a replayed history.
type gcommit struct {
	hash    string
	author  person
	date    time.Time
	msg     string
	subject string
	kind    string // "add", "import", "change", "rename"
	paths   []string
	changes map[string]int  // path -> lines added+deleted (numstat, no renames)
	idents  map[string]bool // identifiers on the changed lines
	from    string          // rename source
	total   int
}

type gevent struct {
	kind     string
	path     string // training path (key)
	text     string
	msg      string
	newPath  string
	multiAdd []string // import commit paths
}

var addMsgs = []string{"Add %s", "Initial version of %s", "Import %s", "Add %s skeleton", "Create %s", "Start %s"}
var importMsgs = []string{"Initial import", "Initial commit", "Import sources", "First import of the code base", "Bootstrap repository"}
var renameMsgs = []string{"Move %s to %s", "Rename %s to %s", "Relocate %s into %s", "git mv %s %s"}
var changelogLines = []string{"- %s", "* %s", "  - %s"}

// genGit replays a few paths of repo as a git history and returns a log
// output and a blame output with their questions.
func genGit(rng *rand.Rand, repo *repoData, id, dir string) ([]*output, error) {
	var cands []string
	for _, p := range repo.paths {
		recs := repo.byPath[p]
		if len(recs) >= 3 && wholeFiles(recs) && strings.Count(recs[len(recs)-1].Text, "\n") < 2500 {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("no path with history")
	}
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	var chosen []string
	budget := 20 + rng.IntN(40)
	for _, p := range cands {
		if budget <= 0 || len(chosen) >= 6 {
			break
		}
		chosen = append(chosen, p)
		budget -= clip(len(repo.byPath[p])-1, 0, 18)
	}
	// Per-path event sequences.
	seqs := map[string][]gevent{}
	for _, p := range chosen {
		recs := repo.byPath[p]
		start := 0
		if len(recs) > 19 {
			start = rng.IntN(len(recs) - 18)
			recs = recs[start : start+19]
		}
		seq := []gevent{{kind: "add", path: p, text: recs[0].Text, msg: fmt.Sprintf(pick(rng, addMsgs), filepath.Base(p))}}
		for i := 1; i < len(recs); i++ {
			seq = append(seq, gevent{kind: "change", path: p, text: recs[i].Text, msg: strings.TrimSpace(recs[i-1].Query)})
		}
		if len(seq) >= 4 && rng.IntN(100) < 35 {
			at := 2 + rng.IntN(len(seq)-2)
			np := renamed(rng, p)
			ev := gevent{kind: "rename", path: p, newPath: np}
			seq = append(seq[:at], append([]gevent{ev}, seq[at:]...)...)
		}
		seqs[p] = seq
	}
	var events []gevent
	if rng.IntN(100) < 40 {
		imp := gevent{kind: "import", msg: pick(rng, importMsgs)}
		for _, p := range chosen {
			imp.multiAdd = append(imp.multiAdd, p)
		}
		events = append(events, imp)
	}
	rem := map[string]int{}
	for {
		var live []string
		tot := 0
		for _, p := range chosen {
			if rem[p] < len(seqs[p]) {
				live = append(live, p)
				tot += len(seqs[p]) - rem[p]
			}
		}
		if len(live) == 0 {
			break
		}
		x := rng.IntN(tot)
		for _, p := range live {
			x -= len(seqs[p]) - rem[p]
			if x < 0 {
				events = append(events, seqs[p][rem[p]])
				rem[p]++
				break
			}
		}
	}
	r := newRunner(dir)
	if _, err := r.run("", nil, "git", "init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	people := makePeople(rng, 3+rng.IntN(6))
	weights := make([]int, len(people))
	for i := range weights {
		weights[i] = 1 + rng.IntN(6)
	}
	tz := map[string]*time.Location{}
	for _, p := range people {
		tz[p.name] = randomZone(rng)
	}
	when := time.Date(2014+rng.IntN(10), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 8+rng.IntN(10), rng.IntN(60), rng.IntN(60), 0, time.UTC)
	cur := map[string]string{} // training path -> current repo path
	first := map[string]string{}
	for _, e := range events {
		if e.kind == "import" {
			for _, p := range e.multiAdd {
				first[p] = seqs[p][0].text
			}
		}
	}
	var commits []*gcommit
	for _, e := range events {
		var paths []string
		switch e.kind {
		case "import":
			for _, p := range e.multiAdd {
				cur[p] = p
				if err := writeFile(dir, p, first[p]); err != nil {
					return nil, err
				}
				paths = append(paths, p)
			}
		case "add":
			if _, done := cur[e.path]; done {
				continue // part of the import
			}
			cur[e.path] = e.path
			if err := writeFile(dir, e.path, e.text); err != nil {
				return nil, err
			}
			paths = []string{e.path}
		case "change":
			if err := writeFile(dir, cur[e.path], e.text); err != nil {
				return nil, err
			}
			paths = []string{cur[e.path]}
		case "rename":
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, e.newPath)), 0o755); err != nil {
				return nil, err
			}
			if _, err := r.run("", nil, "git", "mv", cur[e.path], e.newPath); err != nil {
				return nil, err
			}
			e.msg = fmt.Sprintf(pick(rng, renameMsgs), cur[e.path], e.newPath)
			paths = []string{e.newPath}
		}
		if e.kind == "change" && rng.IntN(100) < 15 {
			f, err := os.OpenFile(filepath.Join(dir, "CHANGELOG.md"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(f, pick(rng, changelogLines)+"\n", subjectOf(e.msg))
			f.Close()
			paths = append(paths, "CHANGELOG.md")
		}
		if _, err := r.run("", nil, "git", append([]string{"add", "--"}, paths...)...); err != nil {
			return nil, err
		}
		if _, err := r.run("", nil, "git", "diff", "--cached", "--quiet"); err == nil {
			continue // nothing staged
		}
		when = when.Add(time.Duration(20+rng.IntN(60*24*6)) * time.Minute)
		if rng.IntN(8) == 0 {
			when = when.Add(time.Duration(rng.IntN(60*24*40)) * time.Minute)
		}
		tot := 0
		for _, w := range weights {
			tot += w
		}
		x := rng.IntN(tot)
		who := people[0]
		for i, w := range weights {
			if x -= w; x < 0 {
				who = people[i]
				break
			}
		}
		d := when.In(tz[who.name])
		ds := d.Format("2006-01-02T15:04:05-07:00")
		env := []string{"GIT_AUTHOR_NAME=" + who.name, "GIT_AUTHOR_EMAIL=" + who.email, "GIT_AUTHOR_DATE=" + ds,
			"GIT_COMMITTER_NAME=" + who.name, "GIT_COMMITTER_EMAIL=" + who.email, "GIT_COMMITTER_DATE=" + ds}
		msg := e.msg
		if strings.TrimSpace(msg) == "" {
			msg = "Update " + filepath.Base(paths[0])
		}
		if _, err := r.run("", env, "git", "commit", "-q", "--no-verify", "-m", msg); err != nil {
			return nil, err
		}
		h, err := r.run("", nil, "git", "rev-parse", "HEAD")
		if err != nil {
			return nil, err
		}
		c := &gcommit{hash: strings.TrimSpace(h), author: who, date: d, msg: msg, subject: subjectOf(msg), kind: e.kind,
			paths: paths, changes: map[string]int{}, idents: map[string]bool{}}
		if e.kind == "rename" {
			c.from = cur[e.path]
			cur[e.path] = e.newPath
		}
		commits = append(commits, c)
	}
	if len(commits) < 8 {
		return nil, fmt.Errorf("only %d commits", len(commits))
	}
	byHash := map[string]*gcommit{}
	for _, c := range commits {
		byHash[c.hash] = c
	}
	// Numstat and changed identifiers, from git itself.
	ns, err := r.run("", nil, "git", "log", "--numstat", "--no-renames", "--format=@@%H")
	if err != nil {
		return nil, err
	}
	var c *gcommit
	for _, l := range splitLines(ns) {
		if strings.HasPrefix(l, "@@") {
			c = byHash[l[2:]]
			continue
		}
		f := strings.Split(l, "\t")
		if c == nil || len(f) != 3 {
			continue
		}
		a, _ := strconv.Atoi(f[0])
		b, _ := strconv.Atoi(f[1])
		c.changes[f[2]] = a + b
		c.total += a + b
	}
	pd, err := r.run("", nil, "git", "log", "-U0", "--no-renames", "--format=@@%H")
	if err != nil {
		return nil, err
	}
	for _, l := range splitLines(pd) {
		if strings.HasPrefix(l, "@@") && len(l) == 42 {
			c = byHash[l[2:]]
			continue
		}
		if c == nil || len(l) == 0 || (l[0] != '+' && l[0] != '-') || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
			continue
		}
		if isComment(l[1:]) {
			continue
		}
		for _, t := range identRe.FindAllString(l[1:], -1) {
			if goodIdent(t) {
				c.idents[t] = true
			}
		}
	}
	g := &gitScen{rng: rng, r: r, dir: dir, commits: commits, byHash: byHash, cur: cur}
	var outs []*output
	if o := g.logOutput(id); o != nil {
		outs = append(outs, o)
	}
	if o := g.blameOutput(id); o != nil {
		outs = append(outs, o)
	}
	return outs, nil
}

// wholeFiles reports whether every record is a whole file rather than a
// window of a longer one; replaying successive windows as file versions
// would make huge fake diffs.
func wholeFiles(recs []lmtrain.Case) bool {
	for _, c := range recs {
		if c.WindowStart != 1 || c.FileLines != len(splitLines(c.Text)) {
			return false
		}
	}
	return true
}

func renamed(rng *rand.Rand, p string) string {
	d, b := filepath.Dir(p), filepath.Base(p)
	switch rng.IntN(3) {
	case 0:
		return filepath.Join(d, pick(rng, []string{"internal", "core", "legacy", "impl", "util"}), b)
	case 1:
		ext := filepath.Ext(b)
		return filepath.Join(d, strings.TrimSuffix(b, ext)+pick(rng, []string{"_impl", "_base", "_core", "2"})+ext)
	}
	if d == "." {
		return filepath.Join(pick(rng, []string{"src", "lib", "pkg"}), b)
	}
	return filepath.Join(filepath.Dir(d), pick(rng, []string{"common", "shared", "base"}), b)
}

func writeFile(root, rel, text string) error {
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(text), 0o644)
}

type gitScen struct {
	rng     *rand.Rand
	r       *runner
	dir     string
	commits []*gcommit
	byHash  map[string]*gcommit
	cur     map[string]string
}

// located is a commit found in an output.
type located struct {
	c                        *gcommit
	head, author, date, subj int
	end                      int // exclusive
}

var hexPrefix = regexp.MustCompile(`^\^?([0-9a-f]{7,40})\b`)

// locate finds the commits of the output by their hashes.
func (g *gitScen) locate(o *output, oneLine bool) []*located {
	var locs []*located
	for i, l := range o.lines {
		var c *gcommit
		if strings.HasPrefix(l, "commit ") && len(l) >= 47 {
			c = g.byHash[l[7:47]]
		} else if oneLine {
			if m := hexPrefix.FindStringSubmatch(l); m != nil {
				c = g.find(m[1])
			}
		}
		if c == nil {
			continue
		}
		if len(locs) > 0 {
			locs[len(locs)-1].end = i
		}
		lc := &located{c: c, head: i, author: -1, date: -1, subj: -1, end: len(o.lines)}
		if oneLine {
			lc.subj = i
		}
		locs = append(locs, lc)
	}
	for _, lc := range locs {
		for i := lc.head + 1; i < lc.end; i++ {
			l := o.lines[i]
			switch {
			case lc.author < 0 && strings.HasPrefix(l, "Author:"):
				lc.author = i
			case lc.date < 0 && strings.HasPrefix(l, "Date:"):
				lc.date = i
			case lc.subj < 0 && strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != "":
				lc.subj = i
			}
		}
		if lc.subj < 0 {
			lc.subj = lc.head
		}
	}
	return locs
}

func (g *gitScen) find(prefix string) *gcommit {
	var hit *gcommit
	for h, c := range g.byHash {
		if strings.HasPrefix(h, prefix) {
			if hit != nil {
				return nil
			}
			hit = c
		}
	}
	return hit
}

// fileLine finds the --stat or --name-status line of path in a commit block.
func fileLine(o *output, lc *located, path string) int {
	for i := lc.head + 1; i < lc.end; i++ {
		l := o.lines[i]
		if left, _, ok := strings.Cut(l, " | "); ok {
			left = strings.TrimSpace(left)
			if left == path || (strings.HasPrefix(left, "...") && strings.HasSuffix(path, left[3:])) {
				return i
			}
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) >= 2 && len(f[0]) >= 1 && strings.ContainsAny(f[0][:1], "AMDRC") && f[len(f)-1] == path {
			return i
		}
	}
	return -1
}

// renameLine finds the line showing a rename in a commit block.
func renameLine(o *output, lc *located) int {
	for i := lc.head + 1; i < lc.end; i++ {
		l := o.lines[i]
		if (strings.Contains(l, " => ") && strings.Contains(l, " | ")) || (strings.HasPrefix(l, "R") && strings.Count(l, "\t") == 2) {
			return i
		}
	}
	return -1
}

func summaryLine(o *output, lc *located) int {
	for i := lc.head + 1; i < lc.end; i++ {
		if strings.Contains(o.lines[i], " changed, ") {
			return i
		}
	}
	return -1
}

type logFormat struct {
	args    []string
	file    string
	oneLine bool
	stat    bool // shows per-file lines
	authors bool
	dates   bool
	patch   bool
	nums    bool // --stat numbers
}

func (f logFormat) follow() bool { return len(f.args) > 1 && f.args[1] == "--follow" }

func (g *gitScen) logOutput(id string) *output {
	formats := []logFormat{
		{args: []string{"log"}, file: "git-log.txt", authors: true, dates: true},
		{args: []string{"log", "--stat"}, file: "git-log-stat.txt", stat: true, nums: true, authors: true, dates: true},
		{args: []string{"log", "--name-status"}, file: "git-log-name-status.txt", stat: true, authors: true, dates: true},
		{args: []string{"log", "--format=%h %s", "--stat"}, file: "git_log_stat.txt", oneLine: true, stat: true, nums: true},
		{args: []string{"log", "--oneline", "--name-status"}, file: "log-files.txt", oneLine: true, stat: true},
		{args: []string{"log", "--format=%h %ad %an  %s", "--date=short"}, file: "history.txt", oneLine: true, authors: true, dates: true},
		{args: []string{"log", "--format=%h %<(18,trunc)%an %ad %s", "--date=iso", "--stat=100"}, file: "git-log.txt", oneLine: true, stat: true, nums: true, authors: true, dates: true},
		{args: []string{"log", "-p"}, file: "git-log-p.txt", authors: true, dates: true, patch: true},
		{args: []string{"log", "--follow", "--stat"}, file: "git-log-follow.txt", stat: true, nums: true, authors: true, dates: true},
		{args: []string{"show", "--stat"}, file: "git-show.txt", stat: true, nums: true, authors: true, dates: true},
	}
	order := g.rng.Perm(len(formats))
	for _, fi := range order {
		f := formats[fi]
		args := append([]string{}, f.args...)
		var pathArg string
		switch {
		case f.patch || f.follow():
			pathArg = g.cur[pickKey(g.rng, g.cur)]
			if f.follow() {
				for _, c := range g.commits {
					if c.kind == "rename" {
						pathArg = c.paths[0]
					}
				}
			}
		case f.args[0] == "show":
			n := 5 + g.rng.IntN(8)
			if n > len(g.commits) {
				n = len(g.commits)
			}
			perm := g.rng.Perm(len(g.commits))[:n]
			sort.Sort(sort.Reverse(sort.IntSlice(perm)))
			for _, k := range perm {
				args = append(args, g.commits[k].hash[:7+g.rng.IntN(3)])
			}
		case g.rng.IntN(4) == 0:
			pathArg = g.cur[pickKey(g.rng, g.cur)]
			if g.rng.IntN(2) == 0 && filepath.Dir(pathArg) != "." {
				pathArg = filepath.Dir(pathArg)
			}
		}
		limit := 0
		var text string
		for try := 0; try < 6; try++ {
			a := append([]string{}, args...)
			if limit > 0 {
				a = append(a, fmt.Sprintf("-n%d", limit))
			}
			if pathArg != "" {
				a = append(a, "--", pathArg)
			}
			out, err := g.r.run("", nil, "git", a...)
			if err != nil {
				text = ""
				break
			}
			n := len(splitLines(out))
			text = out
			if n <= 800 {
				break
			}
			cnt := strings.Count(out, "\ncommit ") + 1
			if f.oneLine {
				cnt = len(g.commits)
			}
			if limit == 0 {
				limit = cnt
			}
			limit = limit * 700 / n
			if limit < 2 {
				text = ""
				break
			}
		}
		n := len(splitLines(text))
		if text == "" || n < 40 || n > 800 {
			continue
		}
		o := newOutput(id+"-log", f.file, g.r.clean(text))
		g.logQuestions(o, f)
		if len(o.qs) >= 2 {
			return o
		}
	}
	return nil
}

func pickKey(rng *rand.Rand, m map[string]string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks[rng.IntN(len(ks))]
}

func (lc *located) ident(f logFormat) []int {
	g := []int{lc.head, lc.subj}
	if f.authors && lc.author >= 0 {
		g = append(g, lc.author)
	}
	if f.dates && lc.date >= 0 {
		g = append(g, lc.date)
	}
	return g
}

func (g *gitScen) logQuestions(o *output, f logFormat) {
	locs := g.locate(o, f.oneLine)
	if len(locs) < 2 {
		return
	}
	rng := g.rng
	want := 2 + rng.IntN(4)
	gens := []func() bool{
		func() bool { return g.qWho(o, f, locs) },
		func() bool { return g.qWho(o, f, locs) },
		func() bool { return g.qCode(o, f, locs) },
		func() bool { return g.qCode(o, f, locs) },
		func() bool { return g.qFileBig(o, f, locs) },
		func() bool { return g.qFirst(o, f, locs) },
		func() bool { return g.qAuthor(o, f, locs) },
		func() bool { return g.qKeyword(o, f, locs) },
		func() bool { return g.qRename(o, f, locs) },
		func() bool { return g.qBiggest(o, f, locs) },
		func() bool { return g.qMonth(o, f, locs) },
	}
	for _, k := range rng.Perm(len(gens)) {
		if len(o.qs) >= want {
			break
		}
		gens[k]()
	}
}

func (g *gitScen) qWho(o *output, f logFormat, locs []*located) bool {
	for _, k := range g.rng.Perm(len(locs)) {
		lc := locs[k]
		if lc.c.kind != "change" || len(strings.Fields(lc.c.subject)) < 3 {
			continue
		}
		d := describe(lc.c.subject)
		if d == "" {
			continue
		}
		gold := []int{lc.head, lc.subj}
		var q string
		if f.authors {
			gold = lc.ident(f)
			q = pick(g.rng, []string{
				"Track down the person and date behind the change that %s.",
				"Somebody %s at some point; give me that commit's hash plus its author.",
				"I need the author and timestamp of the commit that %s.",
				"Whose commit %s, and on what day did it land?",
			})
			q = fmt.Sprintf(q, d)
			if g.rng.IntN(3) == 0 {
				q = fmt.Sprintf(pick(g.rng, []string{"Author and date of the commit titled \"%s\"?", "Give me who wrote \"%s\" and the day it went in."}), lc.c.subject)
			}
		} else {
			q = fmt.Sprintf(pick(g.rng, []string{"Point me to the commit that %s.", "Hash of the change that %s, please.", "Somewhere in here a commit %s; which entry is that?"}), d)
		}
		return o.add(q, gold)
	}
	return false
}

func (g *gitScen) qCode(o *output, f logFormat, locs []*located) bool {
	// Only a patch shows the identifiers a commit touched; elsewhere the
	// question would name something absent from the output.
	if !f.patch {
		return false
	}
	count := map[string]int{}
	for _, lc := range locs {
		for t := range lc.c.idents {
			count[t]++
		}
	}
	for _, k := range g.rng.Perm(len(locs)) {
		lc := locs[k]
		if lc.c.kind != "change" {
			continue
		}
		var ids []string
		for t := range lc.c.idents {
			if count[t] == 1 && !strings.Contains(lc.c.msg, t) {
				ids = append(ids, t)
			}
		}
		if len(ids) == 0 {
			continue
		}
		sort.Strings(ids)
		t := ids[g.rng.IntN(len(ids))]
		gold := lc.ident(f)
		if f.patch {
			var hits []int
			for i := lc.head + 1; i < lc.end; i++ {
				l := o.lines[i]
				if len(l) > 0 && (l[0] == '+' || l[0] == '-') && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") && strings.Contains(l, t) {
					hits = append(hits, i)
				}
			}
			if len(hits) == 0 || len(hits) > 10 {
				continue
			}
			gold = append(gold, hits...)
		}
		base := filepath.Base(lc.c.paths[0])
		q := pick(g.rng, []string{"Find the patch hunk lines mentioning `%s` and the commit they belong to.",
			"Where in this diff does %s get edited, and in which commit?",
			"Pull out the added or removed lines with %s, plus the commit header.",
			"%s was edited in " + base + "; show the diff lines and who committed them."})
		return o.add(fmt.Sprintf(q, t), gold)
	}
	return false
}

func (g *gitScen) qFileBig(o *output, f logFormat, locs []*located) bool {
	if !f.nums {
		return false
	}
	type hit struct {
		lc   *located
		line int
		n    int
	}
	byPath := map[string][]hit{}
	for _, lc := range locs {
		if lc.c.kind == "rename" {
			continue
		}
		for p, n := range lc.c.changes {
			if p == "CHANGELOG.md" {
				continue
			}
			if li := fileLine(o, lc, p); li >= 0 {
				byPath[p] = append(byPath[p], hit{lc, li, n})
			}
		}
	}
	var ps []string
	for p, hs := range byPath {
		if len(hs) >= 3 {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return false
	}
	sort.Strings(ps)
	p := ps[g.rng.IntN(len(ps))]
	hs := byPath[p]
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].n > hs[j].n })
	for k := clip(2+g.rng.IntN(4), 1, len(hs)-1); k >= 1; k-- {
		if hs[k-1].n > hs[k].n && hs[k].n >= 1 {
			thr := hs[k].n
			var gold []int
			for _, h := range hs[:k] {
				gold = append(gold, h.lc.head, h.lc.subj, h.line)
			}
			name := p
			if g.rng.IntN(2) == 0 {
				name = filepath.Base(p)
			}
			q := fmt.Sprintf(pick(g.rng, []string{
				"Heavy edits to %s: find commits whose churn there exceeds %d lines.",
				"Pick out commits where %[1]s saw upwards of %[2]d lines modified.",
				"Show commits touching %s with a line count above %d in the stat.",
			}), name, thr)
			if k == 1 {
				q = fmt.Sprintf(pick(g.rng, []string{"Find the commit with the most churn in %s.", "Per the stat, which single commit rewrote the largest chunk of %s?"}), name)
			}
			return o.add(q, gold)
		}
	}
	return false
}

func (g *gitScen) qFirst(o *output, f logFormat, locs []*located) bool {
	for _, k := range g.rng.Perm(len(locs)) {
		lc := locs[k]
		if lc.c.kind != "add" && lc.c.kind != "import" {
			continue
		}
		p := lc.c.paths[g.rng.IntN(len(lc.c.paths))]
		gold := lc.ident(f)
		if f.stat {
			li := fileLine(o, lc, p)
			if li < 0 {
				continue
			}
			gold = append(gold, li)
		} else if lc.c.kind == "import" {
			continue // nothing in the output names the file
		}
		name := filepath.Base(p)
		q := pick(g.rng, []string{"Origin of %s: who checked it in first, and on what date?", "Locate the commit that brought %s into the repo.",
			"%s showed up at some point; which commit created it?", "Earliest commit containing %s, with its author?"})
		return o.add(fmt.Sprintf(q, name), gold)
	}
	return false
}

func (g *gitScen) qAuthor(o *output, f logFormat, locs []*located) bool {
	if !f.authors {
		return false
	}
	by := map[string][]*located{}
	for _, lc := range locs {
		by[lc.c.author.name] = append(by[lc.c.author.name], lc)
	}
	var names []string
	for n, ls := range by {
		if len(ls) >= 2 && len(ls) <= 6 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return false
	}
	sort.Strings(names)
	n := names[g.rng.IntN(len(names))]
	var gold []int
	for _, lc := range by[n] {
		gold = append(gold, lc.head, lc.subj)
		if lc.author >= 0 {
			gold = append(gold, lc.author)
		}
	}
	first := strings.Fields(n)[0]
	q := fmt.Sprintf(pick(g.rng, []string{"Pull out everything %s committed, with subjects.", "Commits by %s only, please.",
		"Filter this log down to %s's work.", "What did %s contribute? Show those entries."}), pick(g.rng, []string{n, first}))
	return o.add(q, gold)
}

func (g *gitScen) qKeyword(o *output, f logFormat, locs []*located) bool {
	by := map[string][]*located{}
	for _, lc := range locs {
		seen := map[string]bool{}
		for _, w := range wordRe.FindAllString(lc.c.subject, -1) {
			w = strings.ToLower(w)
			if len(w) >= 4 && !stopWords[w] && !seen[w] {
				seen[w] = true
				by[w] = append(by[w], lc)
			}
		}
	}
	var ws []string
	for w, ls := range by {
		if len(ls) >= 2 && len(ls) <= 5 {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return false
	}
	sort.Strings(ws)
	w := ws[g.rng.IntN(len(ws))]
	var gold []int
	for _, lc := range by[w] {
		gold = append(gold, lc.head, lc.subj)
	}
	q := fmt.Sprintf(pick(g.rng, []string{"Find commits whose subject talks about %s.", "Which log entries relate to %s?",
		"Grab the commits mentioning %s in their message.", "Any history around %s? List those commits."}), w)
	return o.add(q, gold)
}

func (g *gitScen) qRename(o *output, f logFormat, locs []*located) bool {
	for _, lc := range locs {
		if lc.c.kind != "rename" {
			continue
		}
		gold := lc.ident(f)
		if f.stat {
			li := renameLine(o, lc)
			if li < 0 {
				return false
			}
			gold = append(gold, li)
		}
		q := fmt.Sprintf(pick(g.rng, []string{"%s got relocated at some point; find that commit and the new path.", "Track the rename of %s: which commit, and its new name?",
			"Is %s still around under another name? Show the move."}), filepath.Base(lc.c.from))
		if f.follow() && g.rng.IntN(2) == 0 {
			q = pick(g.rng, []string{"Find the commit where this file changed its name, and the old name.", "This path used to be something else; locate the renaming commit."})
		}
		return o.add(q, gold)
	}
	return false
}

func (g *gitScen) qBiggest(o *output, f logFormat, locs []*located) bool {
	if !f.nums || len(locs) < 4 {
		return false
	}
	s := append([]*located{}, locs...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].c.total > s[j].c.total })
	if s[0].c.total <= s[1].c.total || s[0].c.kind == "rename" {
		return false
	}
	gold := []int{s[0].head, s[0].subj}
	if sl := summaryLine(o, s[0]); sl >= 0 {
		gold = append(gold, sl)
	} else {
		for p := range s[0].c.changes {
			if li := fileLine(o, s[0], p); li >= 0 {
				gold = append(gold, li)
			}
		}
	}
	q := pick(g.rng, []string{"Find the commit with the highest total churn in this log.", "Judging by the stats, which commit is the heaviest?",
		"Largest diff in this history: which commit, and what was it for?"})
	return o.add(q, gold)
}

func (g *gitScen) qMonth(o *output, f logFormat, locs []*located) bool {
	if !f.dates {
		return false
	}
	by := map[string][]*located{}
	for _, lc := range locs {
		k := lc.c.date.Format("January 2006")
		by[k] = append(by[k], lc)
	}
	var ks []string
	for k, ls := range by {
		if len(ls) >= 2 && len(ls) <= 5 {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return false
	}
	sort.Strings(ks)
	k := ks[g.rng.IntN(len(ks))]
	var gold []int
	for _, lc := range by[k] {
		gold = append(gold, lc.head, lc.subj)
		if lc.date >= 0 {
			gold = append(gold, lc.date)
		}
	}
	q := fmt.Sprintf(pick(g.rng, []string{"Show commits dated %s.", "What went in over the course of %s?", "Filter the log to %s only."}), k)
	return o.add(q, gold)
}

// ---- blame ----

var literalRe = regexp.MustCompile(`"([A-Za-z][^"\\]{14,70})"|'([A-Za-z][^'\\]{14,70})'`)

func (g *gitScen) blameOutput(id string) *output {
	var ps []string
	for _, p := range g.cur {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	g.rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	for _, p := range ps {
		b, err := os.ReadFile(filepath.Join(g.dir, p))
		if err != nil {
			continue
		}
		flines := splitLines(string(b))
		if len(flines) < 40 {
			continue
		}
		args := []string{"blame"}
		if g.rng.IntN(3) == 0 {
			args = append(args, "-w")
		}
		start := 1
		if len(flines) > 600 || g.rng.IntN(3) == 0 {
			n := clip(100+g.rng.IntN(400), 40, len(flines))
			start = 1 + g.rng.IntN(len(flines)-n+1)
			args = append(args, "-L", fmt.Sprintf("%d,%d", start, start+n-1))
		}
		args = append(args, p)
		out, err := g.r.run("", nil, "git", args...)
		if err != nil {
			continue
		}
		o := newOutput(id+"-blame", "blame_"+strings.ReplaceAll(filepath.Base(p), ".", "_")+".txt", g.r.clean(out))
		if len(o.lines) < 40 || len(o.lines) > 800 {
			continue
		}
		owner := make([]*gcommit, len(o.lines))
		content := make([]string, len(o.lines))
		ok := true
		for i, l := range o.lines {
			m := hexPrefix.FindStringSubmatch(l)
			if m == nil {
				ok = false
				break
			}
			owner[i] = g.find(m[1])
			if start-1+i < len(flines) {
				content[i] = flines[start-1+i]
			}
			if owner[i] == nil {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		g.blameQuestions(o, owner, content, p)
		if len(o.qs) >= 2 {
			return o
		}
	}
	return nil
}

func (g *gitScen) blameQuestions(o *output, owner []*gcommit, content []string, path string) {
	rng := g.rng
	want := 2 + rng.IntN(3)
	n := len(o.lines)
	linesOf := map[*gcommit][]int{}
	for i, c := range owner {
		if hasWord(content[i]) {
			linesOf[c] = append(linesOf[c], i)
		}
	}
	var cs []*gcommit
	for _, c := range g.commits {
		if len(linesOf[c]) > 0 {
			cs = append(cs, c)
		}
	}
	block := func(i int) []int {
		lo, hi := i, i
		for lo > 0 && owner[lo-1] == owner[i] && i-lo < 6 {
			lo--
		}
		for hi < n-1 && owner[hi+1] == owner[i] && hi-i < 6 {
			hi++
		}
		var b []int
		for k := lo; k <= hi; k++ {
			b = append(b, k)
		}
		return b
	}
	gens := []func() bool{
		func() bool { // identifier in code from a change commit
			idCount := map[string]int{}
			for _, c := range content {
				for _, t := range identRe.FindAllString(c, -1) {
					idCount[t]++
				}
			}
			for _, i := range rng.Perm(n) {
				if owner[i].kind != "change" || isComment(content[i]) {
					continue
				}
				var ids []string
				for _, t := range identRe.FindAllString(content[i], -1) {
					if goodIdent(t) && idCount[t] == 1 {
						ids = append(ids, t)
					}
				}
				if len(ids) == 0 {
					continue
				}
				t := ids[rng.IntN(len(ids))]
				q := fmt.Sprintf(pick(rng, []string{"Blame check: who is behind the line with %s, and its commit?",
					"Find where %s appears here and who put it there.", "Attribution for the %s bit of " + filepath.Base(path) + ", please.",
					"%s looks suspicious; which commit and author own that line?"}), t)
				return o.add(q, block(i))
			}
			return false
		},
		func() bool { // lines of one change commit, described by its message
			for _, k := range rng.Perm(len(cs)) {
				c := cs[k]
				if c.kind != "change" || len(linesOf[c]) < 2 || len(linesOf[c]) > 15 {
					continue
				}
				d := describe(c.subject)
				if d == "" {
					continue
				}
				q := fmt.Sprintf(pick(rng, []string{"Highlight the lines still owned by the change that %s.", "Trace the surviving code from the commit that %s.",
					"Per blame, what came out of the work that %s?"}), d)
				if rng.IntN(3) == 0 {
					q = fmt.Sprintf(pick(rng, []string{"Blame lines owned by \"%s\"?", "Show what the commit \"%s\" still owns here."}), c.subject)
				}
				return o.add(q, linesOf[c])
			}
			return false
		},
		func() bool { // by author
			by := map[string][]int{}
			for i, c := range owner {
				if hasWord(content[i]) {
					by[c.author.name] = append(by[c.author.name], i)
				}
			}
			var names []string
			for a, ls := range by {
				if len(ls) >= 2 && len(ls) <= 12 {
					names = append(names, a)
				}
			}
			if len(names) == 0 {
				return false
			}
			sort.Strings(names)
			a := names[rng.IntN(len(names))]
			q := fmt.Sprintf(pick(rng, []string{"Filter the blame to %s's lines.", "Where does %s show up as the owner in this blame?",
				"Lines credited to %s, please."}), pick(rng, []string{a, strings.Fields(a)[0]}))
			return o.add(q, by[a])
		},
		func() bool { // most recent change
			if len(cs) < 2 {
				return false
			}
			c := cs[len(cs)-1]
			if len(linesOf[c]) < 1 || len(linesOf[c]) > 18 || c.kind == "import" || c.kind == "add" {
				return false
			}
			q := pick(rng, []string{"Show the freshest lines in this blame and their author.",
				"Find the lines from the latest commit in this region.", "Newest edits here: which lines, by whom?"})
			return o.add(q, linesOf[c])
		},
		func() bool { // string literal
			cnt := map[string]int{}
			var cand []int
			for i, c := range content {
				for _, m := range literalRe.FindAllString(c, -1) {
					cnt[m]++
				}
				if literalRe.MatchString(c) {
					cand = append(cand, i)
				}
			}
			for _, k := range rng.Perm(len(cand)) {
				i := cand[k]
				m := literalRe.FindString(content[i])
				if cnt[m] != 1 || len(strings.Fields(m)) < 3 {
					continue
				}
				q := fmt.Sprintf(pick(rng, []string{"The string %s: whose commit put it there, and on what date?", "Find the blame line for the literal %s.",
					"Owner of the line emitting %s?"}), m)
				return o.add(q, []int{i})
			}
			return false
		},
	}
	order := rng.Perm(len(gens))
	for _, k := range order {
		if len(o.qs) >= want {
			break
		}
		gens[k]()
	}
}
