package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// repoSpec is one real repository the families run in: the folder name
// under -repos, its GitHub name, and the commit the checkouts were made at
// (MANIFEST.tsv lists the same).
type repoSpec struct{ dir, name, commit string }

var (
	repoLibuv  = repoSpec{"libuv", "libuv/libuv", "6179e7af87413396d5853a1c3722c8b5749336c8"}
	repoJsoup  = repoSpec{"jsoup", "jhy/jsoup", "46b620860af930eedc193a705eaf7cea5aec89a6"}
	repoRegex  = repoSpec{"regex", "rust-lang/regex", "2b527599eb9eea0dcc288c704584f242f26a5c61"}
	repoAnyhow = repoSpec{"anyhow", "dtolnay/anyhow", "1dbe1862aae650423e3361fbd20b7d17c5109cc3"}
)

func (r repoSpec) source() string { return r.name + "@" + r.commit[:12] }

// reposDir is the folder of checkouts (-repos).
var reposDir = "/tmp/native_repos"

// mirrorDir holds bare mirrors to make a missing checkout from.
var mirrorDir = "/work/.mirror"

// checkout returns the path of r's work tree, extracting it from the bare
// mirror at r's commit when the folder is missing.
func checkout(r repoSpec) (string, error) {
	dst := filepath.Join(reposDir, r.dir)
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	owner, name, _ := strings.Cut(r.name, "/")
	git := filepath.Join(mirrorDir, owner+"+"+name, "repo")
	if _, err := os.Stat(git); err != nil {
		git = filepath.Join(mirrorDir, owner+"+"+name)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("sh", "-c", fmt.Sprintf("git --git-dir=%q archive %s | tar -x -C %q", git, r.commit, dst))
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dst)
		return "", fmt.Errorf("checkout %s: %v: %s", r.name, err, out)
	}
	return dst, nil
}

// copyTree copies src to dst with cp -a (keeps mtimes, which make needs).
func copyTree(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp: %v: %s", err, out)
	}
	return nil
}

// runCmd runs a shell command line in dir with stdout and stderr going to
// one buffer, in the order a terminal shows them, and returns the output
// and exit code.
func runCmd(dir string, timeout time.Duration, env []string, line string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		return buf.String(), -1, fmt.Errorf("%q timed out", line)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return buf.String(), -1, err
	}
	return buf.String(), code, nil
}

// cleanPaths replaces the scratch dir and this machine's home, toolchain
// and cache paths by what a user's machine shows.
func cleanPaths(out, dir string) string {
	out = family.Clean(out, dir)
	home, _ := os.UserHomeDir()
	repl := []string{}
	if home != "" && home != "/" {
		repl = append(repl, home+"/.cargo", "/home/dev/.cargo", home+"/.rustup", "/home/dev/.rustup", home, "/home/dev")
	}
	repl = append(repl, os.TempDir()+"/", "/home/dev/tmp/")
	return strings.NewReplacer(repl...).Replace(out)
}

// lineOf returns the 1-based numbers of lines matching re.
func linesMatching(lines []string, re *regexp.Regexp) []int {
	var out []int
	for i, l := range lines {
		if re.MatchString(l) {
			out = append(out, i+1)
		}
	}
	return out
}

// tmpl picks one of the templates and fills {name}-style fields.
func tmpl(r *rand.Rand, ts []string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(family.Pick(r, ts))
}

// typo makes a plausible misspelling of an identifier: a dropped, doubled
// or swapped letter.
func typo(r *rand.Rand, id string) string {
	if len(id) < 3 {
		return id + "x"
	}
	i := 1 + r.IntN(len(id)-2)
	switch r.IntN(3) {
	case 0:
		return id[:i] + id[i+1:]
	case 1:
		return id[:i] + id[i:i+1] + id[i:]
	default:
		if id[i] == id[i+1] {
			return id[:i] + id[i+1:]
		}
		return id[:i] + id[i+1:i+2] + id[i:i+1] + id[i+2:]
	}
}

var reWord = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// hasWord says whether id occurs as a whole word in src.
func hasWord(src, id string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(id) + `\b`).MatchString(src)
}

// replaceLine returns src with 1-based line n replaced.
func replaceLine(src string, n int, line string) string {
	ls := strings.Split(src, "\n")
	ls[n-1] = line
	return strings.Join(ls, "\n")
}

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }
