package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

// manifestRow is one line of MANIFEST.tsv.
type manifestRow struct{ repo, commit, license, usedBy string }

func readManifest(t *testing.T) []manifestRow {
	f, err := os.Open("MANIFEST.tsv")
	require.NoError(t, err)
	defer f.Close()
	var rows []manifestRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" || strings.HasPrefix(l, "repository\t") {
			continue
		}
		cols := strings.Split(l, "\t")
		require.Len(t, cols, 4, "MANIFEST.tsv row %q needs 4 tab-separated columns", l)
		for _, c := range cols {
			require.NotEmpty(t, strings.TrimSpace(c), "empty column in %q", l)
		}
		rows = append(rows, manifestRow{cols[0], cols[1], cols[2], cols[3]})
	}
	require.NoError(t, sc.Err())
	return rows
}

// sourceRepo reads a case's source ("owner/repo@commit", "labelled
// owner/repo@commit", "module@version") as repository and commit.
func sourceRepo(src string) (repo, commit string) {
	src = strings.TrimPrefix(src, "labelled ")
	repo, commit, _ = strings.Cut(src, "@")
	return repo, commit
}

// TestManifest: every repository the in-repo training data names is in
// MANIFEST.tsv (at its commit, for outputs of real suites), and, where
// ../shared is present, so is every ../shared/traindata repository, and no
// listed repository is a source the eval sets draw on.
func TestManifest(t *testing.T) {
	rows := readManifest(t)
	history := map[string]bool{}
	pinned := map[string]bool{}
	for _, r := range rows {
		if r.commit == "history" {
			history[strings.ToLower(r.repo)] = true
		} else {
			pinned[strings.ToLower(r.repo+"@"+r.commit)] = true
		}
	}
	reported := map[string]bool{}
	for _, dir := range []string{"questiondata", "agentdata", "suitedata", "suitenatural", "vcsnatural"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
		for _, f := range files {
			cs, err := lmtrain.LoadFile(f)
			require.NoError(t, err)
			for _, c := range cs {
				if strings.HasPrefix(c.Repo, "tool:") {
					if c.Source == "" || strings.HasPrefix(c.Source, "labelled tool:") {
						continue // a generated project: the generators' rows
					}
					repo, commit := sourceRepo(c.Source)
					if key := strings.ToLower(repo + "@" + commit); !pinned[key] && !reported[key] {
						reported[key] = true
						t.Errorf("%s: %s (%s) is not in MANIFEST.tsv at that commit", f, c.ID, c.Source)
					}
					continue
				}
				if key := strings.ToLower(c.Repo); !history[key] && !reported[key] {
					reported[key] = true
					t.Errorf("%s: %s names %s, absent from MANIFEST.tsv", f, c.ID, c.Repo)
				}
			}
		}
	}
	shared := "../../../shared"
	if _, err := os.Stat(filepath.Join(shared, "evalsets", "EXCLUDE.md")); err != nil {
		t.Skip("../shared is absent: checked the in-repo data only; the traindata and EXCLUDE.md checks need it")
	}
	train, err := lmtrain.LoadDir(filepath.Join(shared, "traindata"))
	require.NoError(t, err)
	for _, c := range train {
		if !history[strings.ToLower(c.Repo)] {
			t.Errorf("../shared/traindata repository %s is absent from MANIFEST.tsv", c.Repo)
			history[strings.ToLower(c.Repo)] = true // once
		}
	}
	excluded := readExclude(t, filepath.Join(shared, "evalsets", "EXCLUDE.md"))
	require.NotEmpty(t, excluded)
	for _, r := range rows {
		name := strings.ToLower(r.repo)
		for _, x := range excluded {
			base := name[strings.LastIndex(name, "/")+1:]
			if name == x || strings.HasSuffix(name, "/"+x) || base == x || strings.Contains(x, "/") && strings.HasPrefix(name, "github.com/"+x) {
				t.Errorf("MANIFEST.tsv lists %s, a source of the eval sets (%s in EXCLUDE.md)", r.repo, x)
			}
		}
	}
}

// readExclude returns the repositories and package names EXCLUDE.md lists
// (lower case): its "- name" bullets outside the whole-ecosystem section.
func readExclude(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	section := ""
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			section = l
			continue
		}
		if strings.Contains(section, "ecosystem") || !strings.HasPrefix(l, "- ") {
			continue
		}
		name := strings.TrimSpace(strings.TrimPrefix(l, "- "))
		name, _, _ = strings.Cut(name, " ")
		out = append(out, strings.ToLower(name))
	}
	return out
}
