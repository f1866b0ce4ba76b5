package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// The jars the tests run with, from Debian's junit5, libopentest4j-java,
// libapiguardian-java and libre2j-java packages.
const (
	junitConsole = "/usr/share/java/junit-platform-console-standalone.jar"
	junitTestCP  = "/usr/share/java/junit-jupiter-api.jar:/usr/share/java/junit-jupiter-params.jar:/usr/share/java/opentest4j.jar:/usr/share/java/apiguardian-api.jar:/usr/share/java/junit-platform-commons.jar"
)

// jvmFast makes the JVM start and JIT faster on a loaded machine; it does
// not change what javac or the tests print.
const jvmFast = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

var (
	jsoupTestOnce sync.Once
	jsoupTest     string
	jsoupTestErr  error
)

// jsoupCompiled returns a jsoup tree with out/classes (main) and
// out/test-classes: the test sources that compile offline against Debian's
// JUnit 5.9 (the ones needing netty, gson or a newer JUnit are left out,
// and so, in turn, are those that use them).
func jsoupCompiled() (string, error) {
	jsoupTestOnce.Do(func() {
		base, err := jsoupPrepared()
		if err != nil {
			jsoupTestErr = err
			return
		}
		jsoupTest = base + "-tests"
		if err := copyTree(base, jsoupTest); err != nil {
			jsoupTestErr = err
			return
		}
		jcp := "lib/jspecify-1.0.0.jar:lib/re2j-1.7.jar"
		out, code, err := runCmd(jsoupTest, 10*time.Minute, nil, "javac -J"+strings.ReplaceAll(jvmFast, " ", " -J")+" -nowarn -cp "+jcp+" -d out/classes $(find src/main/java -name '*.java')")
		if err != nil || code != 0 {
			jsoupTestErr = fmt.Errorf("compile jsoup: %v %s", err, family.TruncateLines(out, 20))
			return
		}
		tests, err := javaSources(jsoupTest, "src/test/java")
		if err != nil {
			jsoupTestErr = err
			return
		}
		var keep []string
		for _, t := range tests {
			b, _ := os.ReadFile(filepath.Join(jsoupTest, t))
			if !strings.Contains(string(b), "io.netty") {
				keep = append(keep, t)
			}
		}
		for round := 0; round < 8; round++ {
			os.RemoveAll(filepath.Join(jsoupTest, "out/test-classes"))
			os.WriteFile(filepath.Join(jsoupTest, "out/tests.txt"), []byte(strings.Join(keep, "\n")+"\n"), 0o644)
			out, code, err := runCmd(jsoupTest, 10*time.Minute, nil, "javac -J"+strings.ReplaceAll(jvmFast, " ", " -J")+" -nowarn -cp out/classes:"+jcp+":"+junitTestCP+" -d out/test-classes @out/tests.txt")
			if err != nil {
				jsoupTestErr = err
				return
			}
			if code == 0 {
				return
			}
			bad := map[string]bool{}
			for _, m := range regexp.MustCompile(`(?m)^(src/test/java/\S+\.java):\d+: error`).FindAllStringSubmatch(out, -1) {
				bad[m[1]] = true
			}
			if len(bad) == 0 {
				break
			}
			var next []string
			for _, t := range keep {
				if !bad[t] {
					next = append(next, t)
				}
			}
			keep = next
		}
		jsoupTestErr = fmt.Errorf("jsoup tests do not compile")
	})
	return jsoupTest, jsoupTestErr
}

// junitPackages are the jsoup packages whose tests run offline.
var junitPackages = []string{"nodes", "parser", "select", "safety", "internal", "helper"}

func genJunit(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	base, err := jsoupCompiled()
	if err != nil {
		return nil, err
	}
	work := filepath.Join(dir, "jsoup")
	if err := copyTree(base, work); err != nil {
		return nil, err
	}
	pkg := family.Pick(r, junitPackages)
	srcs, err := javaSources(work, "src/main/java/org/jsoup/"+pkg)
	if err != nil || len(srcs) == 0 {
		return nil, fmt.Errorf("no sources in %s", pkg)
	}
	jcp := "lib/jspecify-1.0.0.jar:lib/re2j-1.7.jar"
	detail := family.Pick(r, []string{"", "", "", " --details=tree", " --details=summary"})
	cmdline := fmt.Sprintf("java -jar junit-platform-console-standalone-1.9.1.jar -cp out/classes:out/test-classes:src/test/resources:src/main/resources:%s --select-package org.jsoup.%s --disable-banner --disable-ansi-colors%s", jcp, pkg, detail)
	runline := strings.Replace(cmdline, "java -jar junit-platform-console-standalone-1.9.1.jar", "java "+jvmFast+" -jar "+junitConsole, 1)
	runs := 0
	for tries := 0; tries < 12 && runs < 4; tries++ {
		file := family.Pick(r, srcs)
		orig, _ := os.ReadFile(filepath.Join(work, file))
		var cands []family.Mutation
		lines := strings.Split(string(orig), "\n")
		for _, m := range family.Candidates(string(orig), family.LangC) {
			if strings.HasPrefix(lines[m.Line-1], "        ") && !strings.Contains(lines[m.Line-1], "Validate.") {
				cands = append(cands, m)
			}
		}
		if len(cands) == 0 {
			continue
		}
		m := family.Pick(r, cands)
		os.WriteFile(filepath.Join(work, file), []byte(m.Apply(string(orig))), 0o644)
		out, code, err := runCmd(work, 3*time.Minute, nil, "javac -J"+strings.ReplaceAll(jvmFast, " ", " -J")+" -nowarn -cp out/classes:"+jcp+" -d out/classes "+file)
		if err != nil || code != 0 {
			// The mutation does not compile (e.g. a flipped constant in a
			// switch): restore and pick another.
			os.WriteFile(filepath.Join(work, file), orig, 0o644)
			_ = out
			continue
		}
		runs++
		out, code, err = runCmd(work, 90*time.Second, []string{"LC_ALL=C.UTF-8", "LANG=C.UTF-8"}, runline)
		if err != nil {
			return nil, err
		}
		if code == 0 {
			// The mutation survived the tests: undo it and recompile.
			os.WriteFile(filepath.Join(work, file), orig, 0o644)
			runCmd(work, 3*time.Minute, nil, "javac -J"+strings.ReplaceAll(jvmFast, " ", " -J")+" -nowarn -cp out/classes:"+jcp+" -d out/classes "+file)
			continue
		}
		out = cleanPaths(out, work)
		out = cleanPaths(out, dir)
		return labelJunit(r, idx, out, cmdline, file, m)
	}
	return nil, fmt.Errorf("no mutation in %s failed a test (%d runs)", pkg, runs)
}

var (
	reJunitFailHead = regexp.MustCompile(`^  JUnit (Jupiter|Vintage):(\S+?):(.+)$`)
	reJunitFrame    = regexp.MustCompile(`^\s+(org\.jsoup\.[\w.$]+)\.([\w$<>]+)\((\w+\.java):(\d+)\)$`)
	reJunitExc      = regexp.MustCompile(`^\s+(=> |Caused by: )(\S+)`)
)

// junitFailure is one entry of the console launcher's "Failures (n):"
// section with the tree line(s) that reported it.
type junitFailure struct {
	class, test string
	head        int   // the "JUnit Jupiter:Class:test()" line
	exc         []int // "=> ..." and "Caused by: ..." lines
	frames      []int // frames in jsoup (main and test code)
	mainFrames  []int // frames in jsoup's main code (the code under test)
	mutFrames   []int // frames at the mutated file:line
	msg         string
}

func parseJunit(lines []string, mutFile string, mutLine int) (fails []junitFailure, tree []int, summary map[string]int) {
	summary = map[string]int{}
	reSum := regexp.MustCompile(`^\[\s*\d+ (tests|containers) (\w+)\s*\]$`)
	inFail := false
	mutBase := filepath.Base(mutFile)
	for i, l := range lines {
		if strings.HasPrefix(l, "Failures (") {
			inFail = true
			continue
		}
		if strings.HasPrefix(l, "Test run finished") {
			inFail = false
		}
		if m := reSum.FindStringSubmatch(l); m != nil {
			summary[m[1]+" "+m[2]] = i + 1
			continue
		}
		if !inFail {
			if strings.Contains(l, " ✘") && (strings.HasPrefix(l, "│") || strings.HasPrefix(l, "├") || strings.HasPrefix(l, "└") || strings.HasPrefix(l, " ")) {
				tree = append(tree, i+1)
			}
			continue
		}
		if m := reJunitFailHead.FindStringSubmatch(l); m != nil {
			fails = append(fails, junitFailure{class: m[2], test: m[3], head: i + 1})
			continue
		}
		if len(fails) == 0 {
			continue
		}
		f := &fails[len(fails)-1]
		if m := reJunitExc.FindStringSubmatch(l); m != nil {
			f.exc = append(f.exc, i+1)
			if f.msg == "" {
				f.msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "=>"))
			}
			continue
		}
		if m := reJunitFrame.FindStringSubmatch(l); m != nil {
			f.frames = append(f.frames, i+1)
			if !strings.HasSuffix(m[3], "Test.java") {
				f.mainFrames = append(f.mainFrames, i+1)
			}
			if m[3] == mutBase && m[4] == fmt.Sprint(mutLine) {
				f.mutFrames = append(f.mutFrames, i+1)
			}
		}
	}
	return fails, tree, summary
}

func labelJunit(r *rand.Rand, idx int, out, cmdline, file string, m family.Mutation) (*family.Scenario, error) {
	lines := family.SplitLines(out)
	if len(lines) > 3000 {
		return nil, fmt.Errorf("output too long")
	}
	fails, tree, summary := parseJunit(lines, file, m.Line)
	if len(fails) == 0 {
		return nil, fmt.Errorf("exit 1 without a failure entry")
	}
	if len(fails) > 25 {
		return nil, fmt.Errorf("%d failures: too broad", len(fails))
	}
	class := strings.TrimSuffix(filepath.Base(file), ".java")
	var qs family.Questions
	add := qs.Add
	// The failing tests: tree lines and failure headers.
	var heads []int
	for _, f := range fails {
		heads = append(heads, f.head)
	}
	add(tmpl(r, []string{
		"Which tests failed?", "Which tests broke after my change?", "What failed in this test run?", "List the failing tests.",
		"Which test cases are red now?", "what tests fail", "After my edit, which tests started failing?",
		"Which JUnit tests did not pass?", "Name the failing test methods.", "Which tests should I look at?",
	}), tree, heads)
	// First failure: header, exception and frames in jsoup code.
	f := fails[0]
	fgold := append(append([]int{f.head}, f.exc...), f.frames...)
	tname := strings.TrimSuffix(f.test, "()")
	if i := strings.Index(tname, "("); i >= 0 {
		tname = tname[:i]
	}
	kv := []string{"{test}", tname, "{class}", f.class, "{main}", class}
	add(tmpl(r, []string{
		"Why does {test} fail?", "What's the assertion error in {class}.{test}?", "Show me the failure of {test} with its stack trace in our code.",
		"Why is {class} failing?", "What went wrong in {test}?", "What did {test} expect and what did it get?",
		"Where does the {test} failure come from?", "Explain the {class} failure.", "{test} is red - what's the error?", "stack trace for {test}",
	}, kv...), fgold)
	add(tmpl(r, []string{
		"Why does the first failing test fail?", "What error does the failing test report?", "What's the expected vs actual value in the failure?",
		"What exception was thrown?", "Show the failure message and the frames in jsoup.", "What is the assertion that failed?",
		"Why are the tests failing?", "What does the failure say?", "what blew up", "Give me the error and where in our code it happens.",
	}), fgold)
	var mut, mainf []int
	for _, x := range fails {
		mut = append(mut, x.mutFrames...)
		mainf = append(mainf, x.mainFrames...)
	}
	if len(mut) > 0 {
		add(tmpl(r, []string{
			"Which line of {main}.java shows up in the stack traces?", "Where in {main} does it go wrong?", "Which frames point into {main}?",
			"Is {main} in the stack trace? Which line?", "Where in the library code (not the tests) is the exception raised?",
			"Which non-test frames appear in the traces?", "Show the stack frames inside the code under test.",
		}, kv...), mainf)
	} else if len(mainf) > 0 && r.IntN(2) == 0 {
		add(tmpl(r, []string{"Which frames in the traces are jsoup library code rather than tests?", "Where in the library code do the traces pass?",
			"Show the non-test jsoup frames."}), mainf)
	}
	if r.IntN(4) == 0 {
		if l, ok := summary["tests failed"]; ok {
			add(tmpl(r, []string{"How many tests failed?", "What's the failure count?", "how many failures in total?", "How many tests did not pass?"}), []int{l})
		}
	} else if r.IntN(4) == 0 {
		if l, ok := summary["tests found"]; ok {
			add(tmpl(r, []string{"How many tests were run?", "How many tests were found?", "What's the total number of tests?"}), []int{l, summary["tests successful"]})
		}
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return &family.Scenario{
		Name: fmt.Sprintf("jsoup-%s%d-%s-%s-%d", seedTag, idx, m.Kind, class, m.Line),
		Path: "junit.log", Runner: cmdline, Source: repoJsoup.source(), Text: out, Qs: qs,
	}, nil
}
