// Command jssuites generates tool-output training cases for the pruner's
// line model by running the real test suites and tools of real JavaScript
// and TypeScript repositories with injected faults.
//
// Families (one gzipped JSONL file each, under -out):
//
//   - js-mocha: mocha (spec, dot, --bail) over micromatch/picomatch with a
//     single-line mutation in lib/*.js, and over mde/ejs (its tdd suites)
//     with the mutation in its CommonJS build, lib/cjs/*.js (built once
//     per run by the project's own tsc step).
//   - js-node-test: `node --test` (spec or TAP reporter) over the same
//     mocha-style suite, with a small preload that maps describe/it onto
//     node:test.
//   - js-tape: tape over substack/minimist with a mutation in index.js.
//   - ts-tsc: `tsc --noEmit` (plain or --pretty) over a few date-fns
//     functions and their imports, with injected type errors.
//
// Labels come by construction: the generator knows the mutated file:line
// or the injected type error, parses the real output into failure blocks
// (header, assertion message, expected/actual, project stack frames) or
// diagnostics, and checks that the fault showed; a scenario whose output
// does not show it is dropped. The scratch directory and the tools
// directory are replaced by /home/dev/project in the output.
//
// Usage (after setup.sh; repos is a folder of checkouts named owner+name):
//
//	go run ./examples/toolgen/jssuites -repos /tmp/jsrepos -tools /tmp/jstools \
//	    -out examples/train/suitedata -seed 1 -n 200 -workers 1 -families js-mocha
//
// On a busy machine the data files were made in chunks (-seed 100+k
// -offset 1000k -n 6..12, one out folder per chunk) and the chunks'
// files joined: zcat c*/FAM.jsonl.gz | gzip -9 > FAM.jsonl.gz.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// env is what every generator needs: where the checkouts and tools are.
type env struct {
	repos string // folder of checkouts, <owner>+<name>
	tools string // npm --prefix folder holding node_modules
}

// maxLines caps an output: longer ones are dropped, never cut.
const maxLines = 3000

func main() {
	out := flag.String("out", "examples/train/suitedata", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	n := flag.Int("n", 200, "scenarios per family")
	fams := flag.String("families", "js-mocha,js-node-test,js-tape,ts-tsc", "comma-separated families")
	workers := flag.Int("workers", 1, "parallel scenarios")
	repos := flag.String("repos", "/tmp/jsrepos", "folder of repository checkouts named owner+name")
	tools := flag.String("tools", "/tmp/jstools", "npm prefix holding mocha, tape, typescript")
	verbose := flag.Bool("v", false, "log dropped scenarios")
	// Long runs go in chunks (different -seed, -offset) merged afterwards,
	// so a slow machine loses at most one chunk; offset keeps names unique.
	offset := flag.Int("offset", 0, "added to scenario numbers in names")
	flag.Parse()
	e := &env{repos: *repos, tools: *tools}
	gens := map[string]family.Generator{
		"js-mocha":     e.genMocha,
		"js-node-test": e.genNodeTest,
		"js-tape":      e.genTape,
		"ts-tsc":       e.genTsc,
	}
	for fam, g := range gens {
		gens[fam] = func(r *rand.Rand, idx int, dir string) (*family.Scenario, error) { return g(r, idx+*offset, dir) }
	}
	err := family.RunFamilies(*fams, gens, family.Options{Out: *out, Seed: *seed, N: *n, Workers: *workers, Verbose: *verbose},
		func(fam string, st family.Stats, took time.Duration) { log.Printf("%s: %v in %v", fam, st, took) })
	if err != nil {
		log.Fatal(err)
	}
}

// copyRepo copies checkout name (without .git and node_modules) into dir
// and links dir/node_modules to the tools' node_modules, the way a
// developer's project has its dev dependencies installed.
func (e *env) copyRepo(name, dir string) error {
	return e.copyTree(filepath.Join(e.repos, name), dir)
}

// copyTree is copyRepo from any folder (a prepared build).
func (e *env) copyTree(src, dir string) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		// Keep the mode: suites run scripts like ejs's bin/cli.js.
		return os.WriteFile(dst, b, info.Mode().Perm())
	})
	if err != nil {
		return err
	}
	return os.Symlink(filepath.Join(e.tools, "node_modules"), filepath.Join(dir, "node_modules"))
}

// run runs a shell command in dir with stdout and stderr on one pipe (in
// order, as a terminal shows them) and returns the cleaned output and the
// exit code.
func (e *env) run(dir, command string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(e.tools, "node_modules", ".bin")+":"+os.Getenv("PATH"),
		"NO_COLOR=1", "FORCE_COLOR=0", "NODE_OPTIONS=")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", -1, fmt.Errorf("timeout: %s", command)
	}
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		return "", -1, err
	}
	return e.clean(buf.String(), dir), rc, nil
}

var reANSI = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// clean replaces this machine's paths by a user's: the scratch dir by the
// project home, the tools' node_modules (linked from the project) by the
// project's node_modules, and strips colour codes (a pasted terminal).
func (e *env) clean(out, dir string) string {
	out = reANSI.ReplaceAllString(out, "")
	nm := filepath.Join(e.tools, "node_modules")
	if real, err := filepath.EvalSymlinks(nm); err == nil && real != nm {
		out = strings.ReplaceAll(out, real, family.HomeDir+"/node_modules")
	}
	out = strings.ReplaceAll(out, nm, family.HomeDir+"/node_modules")
	out = strings.ReplaceAll(out, e.tools, "/home/dev/.local")
	return family.Clean(out, dir)
}

// checkOut drops outputs that are too long or still carry a path of this
// machine.
func checkOut(out string) error {
	if n := len(family.SplitLines(out)); n > maxLines {
		return fmt.Errorf("output has %d lines", n)
	}
	for _, p := range []string{"/tmp/", "/work/", "/root/"} {
		if strings.Contains(out, p) {
			return fmt.Errorf("machine path %s left in output", p)
		}
	}
	return nil
}

// mutate applies a random single-line mutation to one of files (relative
// to dir), trying up to tries candidates until check says the fault shows.
// It restores the file before each new try and returns the mutation kept.
func mutate(r *rand.Rand, dir string, files []string, tries int, check func(file string, m family.Mutation) (bool, error)) (string, family.Mutation, error) {
	for t := 0; t < tries; t++ {
		file := family.Pick(r, files)
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			return "", family.Mutation{}, err
		}
		src := string(b)
		cands := family.Candidates(src, family.LangC)
		if len(cands) == 0 {
			continue
		}
		m := family.Pick(r, cands)
		if err := os.WriteFile(p, []byte(m.Apply(src)), 0o644); err != nil {
			return "", m, err
		}
		ok, err := check(file, m)
		if err != nil {
			return "", m, err
		}
		if ok {
			return file, m, nil
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", m, err
		}
	}
	return "", family.Mutation{}, fmt.Errorf("no mutation made a test fail in %d tries", tries)
}

// gitHead is the commit of a checkout, recorded in the scenario's source.
var heads = map[string]string{
	"micromatch+picomatch": "4f41a8edade7a5ab19832f7b40ecce46b288767f",
	"mde+ejs":              "2c41365ca042a70978e5795adc05fbb8b35fb013",
	"substack+minimist":    "aeb3e27dae0412de5c0494e9563a5f10c82cc7a9",
	"date-fns+date-fns":    "dd66398305c2b015fba3c1b3d31ccff42ee8d4cf",
}

func source(name string) string {
	return strings.Replace(name, "+", "/", 1) + "@" + heads[name]
}
