package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// gitEdit is one change made to the committed work tree.
type gitEdit struct {
	path   string
	mut    family.Mutation // for "modify"
	op     string          // "modify", "delete", "add" (untracked or staged new file)
	staged bool
}

// gitTree checks a project out in dir, commits it and returns the edits
// made afterwards: 1-3 single-line mutations, sometimes a deleted small
// file and untracked files; stage says whether some edits get staged.
func gitTree(r *rand.Rand, dir string, stage bool) (repo, string, []gitEdit, error) {
	rp := pickRepo(r, repos)
	if err := checkout(rp, dir); err != nil {
		return rp, "", nil, err
	}
	branch := family.Pick(r, []string{"main", "main", "master", "fix-eviction", "feature/cleanup", "wip", "dev", "refactor-utils"})
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=Dev",
			"GIT_COMMITTER_EMAIL=dev@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	// The dist-info folder is an install artefact, not the user's change.
	writeFile(filepath.Join(dir, ".gitignore"), "*.dist-info/\n__pycache__/\n")
	if err := git("init", "-q", "-b", branch); err != nil {
		return rp, "", nil, err
	}
	if err := git("add", "-A"); err != nil {
		return rp, "", nil, err
	}
	if err := git("commit", "-q", "-m", "Import "+rp.name); err != nil {
		return rp, "", nil, err
	}
	files := rp.srcFiles(dir)
	var edits []gitEdit
	used := map[string]bool{}
	nm := 1 + r.IntN(3)
	for k := 0; k < nm; k++ {
		f := family.Pick(r, files)
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return rp, "", nil, err
		}
		cands := family.Candidates(string(b), family.LangPython)
		if len(cands) == 0 {
			continue
		}
		m := family.Pick(r, cands)
		clash := false
		for _, e := range edits {
			if e.path == f && e.mut.Line-m.Line < 12 && m.Line-e.mut.Line < 12 {
				clash = true // keep mutations in separate hunks
			}
		}
		if clash {
			continue
		}
		writeFile(filepath.Join(dir, f), m.Apply(string(b)))
		edits = append(edits, gitEdit{path: f, mut: m, op: "modify"})
		used[f] = true
	}
	if len(edits) == 0 {
		return rp, "", nil, fmt.Errorf("no mutation")
	}
	if r.IntN(3) == 0 {
		// Delete a small tracked file (its whole text shows in git diff).
		var small []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(dir, p)
			if fi, err := d.Info(); err == nil && !d.IsDir() && fi.Size() < 2500 && fi.Size() > 0 && !used[rel] &&
				!strings.Contains(rel, ".dist-info") && rel != ".gitignore" {
				small = append(small, rel)
			}
			return nil
		})
		sort.Strings(small)
		if len(small) > 0 {
			f := family.Pick(r, small)
			os.Remove(filepath.Join(dir, f))
			edits = append(edits, gitEdit{path: f, op: "delete"})
			used[f] = true
		}
	}
	if r.IntN(2) == 0 {
		for _, f := range []string{"notes.txt", "scratch.py", "TODO.md", "debug_eviction.py", "out.log", "tests/test_regression.py", filepath.Join(rp.pkg, "_debug.py")} {
			if r.IntN(3) == 0 && !used[f] {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					continue
				}
				if _, err := os.Stat(filepath.Dir(filepath.Join(dir, f))); err != nil {
					continue // git would show the new folder, not the file
				}
				writeFile(filepath.Join(dir, f), "# scratch\nprint('checking')\n")
				edits = append(edits, gitEdit{path: f, op: "add"})
				used[f] = true
			}
		}
	}
	if stage {
		for i := range edits {
			if r.IntN(2) == 0 {
				edits[i].staged = true
				if edits[i].op == "delete" {
					if err := git("rm", "-q", "--cached", edits[i].path); err != nil {
						return rp, "", nil, err
					}
				} else if err := git("add", edits[i].path); err != nil {
					return rp, "", nil, err
				}
			}
		}
	}
	// git add stages the whole file: every edit of a staged path is staged.
	for i := range edits {
		for j := range edits {
			if edits[j].path == edits[i].path && edits[j].staged {
				edits[i].staged = true
			}
		}
	}
	return rp, branch, edits, nil
}

func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_PAGER=cat", "PAGER=cat", "TERM=dumb", "LANG=C.UTF-8")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		return "", fmt.Errorf("git timed out")
	}
	if err != nil {
		return "", fmt.Errorf("git %v: %v", args, err)
	}
	return family.Clean(string(out), dir), nil
}

var reHunk = regexp.MustCompile(`^@@ -\d+(,\d+)? \+\d+(,\d+)? @@`)

// diffIndex locates, in a unified diff, each file's "diff --git" line and,
// for each modify edit, its hunk header and -/+ lines.
func diffIndex(lines []string, edits []gitEdit) (fileLine map[string][]int, editGold map[int][]int) {
	fileLine, editGold = map[string][]int{}, map[int][]int{}
	cur, hunk := "", 0
	for i, l := range lines {
		n := i + 1
		if strings.HasPrefix(l, "diff --git a/") {
			cur = strings.TrimPrefix(strings.SplitN(l, " b/", 2)[0], "diff --git a/")
			fileLine[cur] = append(fileLine[cur], n)
			continue
		}
		if strings.HasPrefix(l, "deleted file mode") {
			fileLine[cur] = append(fileLine[cur], n)
			continue
		}
		if reHunk.MatchString(l) {
			hunk = n
			continue
		}
		for k, e := range edits {
			if e.op != "modify" || e.path != cur {
				continue
			}
			if l == "-"+e.mut.Before || l == "+"+e.mut.After {
				if len(editGold[k]) == 0 || editGold[k][0] != hunk {
					editGold[k] = append(editGold[k], hunk)
				}
				editGold[k] = append(editGold[k], n)
			}
		}
	}
	return
}

var qDiffKind = map[string][]string{
	"compare":    {"which change flips a comparison?", "where did I change a < or > in a condition?", "which edit alters a comparison operator?", "show the hunk where a comparison changed"},
	"off-by-one": {"where did I change a number by one?", "which edit shifts an index or constant by one?", "show me the off-by-one change", "which hunk changes a numeric literal?"},
	"constant":   {"which edit changes a constant?", "where did a magic number change?", "show the hunk with the changed number"},
	"logic":      {"where did an and turn into an or (or the reverse)?", "which change alters the boolean logic of a condition?", "show the and/or change"},
	"bool":       {"which edit flips a True/False?", "where did I change a boolean literal?", "show me the True/False flip"},
	"arith":      {"which change swaps a plus for a minus?", "where did the arithmetic change?", "show the +/- change in the diff"},
	"swap":       {"where did I swap two arguments?", "which call had its arguments reordered?", "show the change that swaps arguments"},
	"drop":       {"which line did I replace with pass?", "where did I remove a statement?", "which hunk deletes an assignment or call?", "what line got dropped?"},
}

var qDiffFile = []string{
	"what did I change in %s?", "show me my edits to %s", "what's the diff for %s?", "which lines changed in %s?",
	"what's modified in %s?", "how was %s changed?", "show the hunk(s) for %s",
}

var qDiffFiles = []string{
	"which files are in this diff?", "list the changed files", "what files have uncommitted changes?",
	"which files does the diff touch?", "which files show up in the diff?", "what paths does this change cover?",
}

func genGitDiff(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	rp, _, edits, err := gitTree(r, dir, false)
	if err != nil {
		return nil, err
	}
	args := family.Pick(r, [][]string{{"diff"}, {"diff"}, {"diff", "-U5"}, {"diff", "--stat"}, {"diff", "HEAD"}, {"diff", "-U1"}, {"diff", "FILE"}})
	mods := []int{}
	for k, e := range edits {
		if e.op == "modify" {
			mods = append(mods, k)
		}
	}
	var shown []string
	for _, a := range args {
		if a == "FILE" {
			a = edits[family.Pick(r, mods)].path
		}
		shown = append(shown, a)
	}
	out, err := runGit(dir, shown...)
	if err != nil {
		return nil, err
	}
	lines := family.SplitLines(out)
	if len(lines) > 3000 || len(lines) == 0 {
		return nil, fmt.Errorf("diff of %d lines", len(lines))
	}
	sc := &family.Scenario{Name: fmt.Sprintf("%s-%04d", rp.name, idx), Path: family.Pick(r, []string{"diff.txt", "changes.diff", "git-diff.txt", "wip.patch"}),
		Runner: "git " + strings.Join(shown, " "), Source: source(rp), Text: out}
	var qs []family.Question
	if shown[len(shown)-1] == "--stat" {
		var all []int
		for _, e := range edits {
			if e.op == "add" {
				continue
			}
			g := family.FindLines(lines, " "+e.path+" ")
			if len(g) != 1 {
				return nil, fmt.Errorf("stat line of %s not found", e.path)
			}
			all = append(all, g...)
			if e.op == "delete" {
				qs = append(qs, family.Question{Query: family.Pick(r, []string{"which file was deleted?", "how many lines did the removed file have?", "which file lost all its lines?"}), Gold: g})
			}
		}
		qs = append(qs, family.Question{Query: family.Pick(r, qDiffFiles), Gold: all})
		for i, l := range lines {
			if strings.Contains(l, "changed,") {
				qs = append(qs, family.Question{Query: family.Pick(r, []string{"how many files changed?", "how many insertions and deletions in total?", "what's the size of the change?", "summarise the diff size"}), Gold: []int{i + 1}})
			}
		}
		sc.Qs = qs
		return sc, nil
	}
	fileLine, editGold := diffIndex(lines, edits)
	var files []int
	for _, e := range edits {
		if g, ok := fileLine[e.path]; ok && e.op != "add" {
			files = append(files, g...)
		}
	}
	for k, e := range edits {
		if e.op != "modify" {
			continue
		}
		g := editGold[k]
		if _, ok := fileLine[e.path]; !ok {
			continue // git diff FILE names one file
		}
		if len(g) != 3 {
			return nil, fmt.Errorf("edit %d (%s:%d) located on %d lines", k, e.path, e.mut.Line, len(g))
		}
		qs = append(qs, family.Question{Query: family.Pick(r, qDiffKind[e.mut.Kind]), Gold: g})
	}
	// A file asked by name: its diff --git line and every edit's hunk in it.
	k := family.Pick(r, mods)
	if _, ok := fileLine[edits[k].path]; ok {
		g := append([]int{}, fileLine[edits[k].path]...)
		for j, e := range edits {
			if e.path == edits[k].path {
				g = append(g, editGold[j]...)
			}
		}
		name := edits[k].path
		if r.IntN(2) == 0 {
			name = filepath.Base(name)
		}
		qs = append(qs, family.Question{Query: fmt.Sprintf(family.Pick(r, qDiffFile), name), Gold: g})
	}
	if len(fileLine) > 1 {
		qs = append(qs, family.Question{Query: family.Pick(r, qDiffFiles), Gold: files})
	}
	for _, e := range edits {
		if e.op == "delete" {
			if g, ok := fileLine[e.path]; ok {
				qs = append(qs, family.Question{Query: family.Pick(r, []string{"which file did I delete?", "is any file removed in this diff?", "what got deleted?"}), Gold: g})
			}
		}
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	sc.Qs = qs
	return sc, nil
}

// statusEntry is where one edit appears in git status output.
func statusGold(lines []string, short bool, edits []gitEdit) (map[string][]int, error) {
	got := map[string][]int{} // class -> lines; classes: staged, unstaged, untracked, deleted, new
	section := ""
	for i, l := range lines {
		n := i + 1
		if short {
			if len(l) < 4 || strings.HasPrefix(l, "## ") {
				continue
			}
			x, y := l[0], l[1]
			switch {
			case x == '?':
				got["untracked"] = append(got["untracked"], n)
				continue
			case x == 'A':
				got["new"] = append(got["new"], n)
				got["staged"] = append(got["staged"], n)
			case x == 'D' || y == 'D':
				got["deleted"] = append(got["deleted"], n)
			}
			if x == 'M' || x == 'D' {
				got["staged"] = append(got["staged"], n)
			}
			if y == 'M' || y == 'D' {
				got["unstaged"] = append(got["unstaged"], n)
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "Changes to be committed:"):
			section = "staged"
		case strings.HasPrefix(l, "Changes not staged for commit:"):
			section = "unstaged"
		case strings.HasPrefix(l, "Untracked files:"):
			section = "untracked"
		case strings.HasPrefix(l, "\t"):
			got[section] = append(got[section], n)
			if strings.Contains(l, "deleted:") {
				got["deleted"] = append(got["deleted"], n)
			}
			if strings.Contains(l, "new file:") {
				got["new"] = append(got["new"], n)
			}
		}
	}
	// Check against the construction: counts per class.
	want := map[string]int{}
	seen := map[string]bool{} // two mutations of one file are one entry
	for _, e := range edits {
		if seen[e.path] {
			continue
		}
		seen[e.path] = true
		switch {
		case e.op == "add" && !e.staged:
			want["untracked"]++
		case e.op == "add":
			want["new"]++
			want["staged"]++
		case e.op == "delete":
			want["deleted"]++
			if e.staged {
				want["staged"]++
			} else {
				want["unstaged"]++
			}
		case e.staged:
			want["staged"]++
		default:
			want["unstaged"]++
		}
	}
	for _, c := range []string{"staged", "unstaged", "untracked", "deleted", "new"} {
		if len(got[c]) != want[c] {
			return nil, fmt.Errorf("status %s: %d lines, constructed %d", c, len(got[c]), want[c])
		}
	}
	return got, nil
}

var qStatus = map[string][]string{
	"unstaged":  {"which files are modified but not staged?", "what changes haven't I added yet?", "what's not staged for commit?", "which files would git commit -a add that aren't staged?", "which edits are still unstaged?"},
	"staged":    {"what's staged for the next commit?", "which files have I already added?", "what will be committed if I run git commit now?", "which changes are in the index?"},
	"untracked": {"which files are untracked?", "what new files has git not seen yet?", "are there untracked files?", "which files aren't tracked by git?"},
	"deleted":   {"did I delete anything?", "which file is deleted?", "what file was removed from the work tree?"},
	"new":       {"which new file is staged?", "what file did I add to the index as new?"},
}

func genGitStatus(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	rp, branch, edits, err := gitTree(r, dir, r.IntN(4) > 0)
	if err != nil {
		return nil, err
	}
	args := family.Pick(r, [][]string{{"status"}, {"status"}, {"status", "-s"}, {"status", "--short", "--branch"}, {"status", "-sb"}})
	out, err := runGit(dir, args...)
	if err != nil {
		return nil, err
	}
	lines := family.SplitLines(out)
	short := len(args) > 1
	got, err := statusGold(lines, short, edits)
	if err != nil {
		return nil, err
	}
	sc := &family.Scenario{Name: fmt.Sprintf("%s-%04d", rp.name, idx), Path: "git-status.txt", Runner: "git " + strings.Join(args, " "), Source: source(rp), Text: out}
	var qs []family.Question
	for _, c := range []string{"unstaged", "staged", "untracked", "deleted", "new"} {
		if len(got[c]) > 0 {
			qs = append(qs, family.Question{Query: family.Pick(r, qStatus[c]), Gold: got[c]})
		}
	}
	// A file asked by name.
	e := family.Pick(r, edits)
	if g := family.FindLines(lines, e.path); len(g) > 0 {
		qs = append(qs, family.Question{Query: fmt.Sprintf(family.Pick(r, []string{"what's the status of %s?", "is %s staged?", "did git notice my change to %s?", "what does git say about %s?"}), e.path), Gold: g})
	}
	for i, l := range lines {
		if (strings.HasPrefix(l, "On branch ") || strings.HasPrefix(l, "## ")) && strings.Contains(l, branch) && r.IntN(3) == 0 {
			qs = append(qs, family.Question{Query: family.Pick(r, []string{"which branch am I on?", "what branch is checked out?", "what's the current branch?"}), Gold: []int{i + 1}})
		}
	}
	var all []int
	for _, c := range []string{"staged", "unstaged", "untracked"} {
		all = append(all, got[c]...)
	}
	if len(all) > 1 {
		qs = append(qs, family.Question{Query: family.Pick(r, []string{"which files did I touch?", "list everything git shows as changed or new", "what's changed in the work tree?", "which paths have changes?"}), Gold: all})
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	sc.Qs = qs
	return sc, nil
}
