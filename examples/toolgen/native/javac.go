package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// jspecify is not packaged by Debian and Maven Central is out of reach, so
// the annotations jsoup imports are compiled into a jar of the same name
// (two annotation types; javac's output does not depend on more).
var jspecifySrc = map[string]string{
	"Nullable": `package org.jspecify.annotations;

import java.lang.annotation.*;

@Documented
@Target(ElementType.TYPE_USE)
@Retention(RetentionPolicy.RUNTIME)
public @interface Nullable {}
`,
	"NullMarked": `package org.jspecify.annotations;

import java.lang.annotation.*;

@Documented
@Target({ElementType.MODULE, ElementType.PACKAGE, ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR})
@Retention(RetentionPolicy.RUNTIME)
public @interface NullMarked {}
`,
}

var (
	jsoupBaseOnce sync.Once
	jsoupBase     string
	jsoupBaseErr  error
)

// jsoupPrepared returns a jsoup tree with lib/ holding the jars its main
// sources need (jspecify, re2j from Debian's libre2j-java).
func jsoupPrepared() (string, error) {
	jsoupBaseOnce.Do(func() {
		src, err := checkout(repoJsoup)
		if err != nil {
			jsoupBaseErr = err
			return
		}
		base, err := os.MkdirTemp("", "native-jsoup-")
		if err != nil {
			jsoupBaseErr = err
			return
		}
		jsoupBase = filepath.Join(base, "jsoup")
		if err := copyTree(src, jsoupBase); err != nil {
			jsoupBaseErr = err
			return
		}
		jsoupBaseErr = buildJspecify(filepath.Join(jsoupBase, "lib"), base)
		if jsoupBaseErr != nil {
			return
		}
		if out, code, err := runCmd(jsoupBase, time.Minute, nil, "cp /usr/share/java/re2j.jar lib/re2j-1.7.jar"); err != nil || code != 0 {
			jsoupBaseErr = fmt.Errorf("re2j (apt-get install libre2j-java): %v %s", err, out)
		}
	})
	return jsoupBase, jsoupBaseErr
}

func buildJspecify(lib, tmp string) error {
	sdir := filepath.Join(tmp, "jspecify-src", "org", "jspecify", "annotations")
	os.MkdirAll(sdir, 0o755)
	os.MkdirAll(lib, 0o755)
	for n, s := range jspecifySrc {
		os.WriteFile(filepath.Join(sdir, n+".java"), []byte(s), 0o644)
	}
	out, code, err := runCmd(tmp, 2*time.Minute, nil, fmt.Sprintf("javac -d jspecify-classes jspecify-src/org/jspecify/annotations/*.java && jar cf %q -C jspecify-classes .", filepath.Join(lib, "jspecify-1.0.0.jar")))
	if err != nil || code != 0 {
		return fmt.Errorf("jspecify stub: %v %s", err, out)
	}
	return nil
}

// javaMain lists jsoup's main sources (relative paths), package-info and
// tiny files left out of the injection sites.
func javaSources(root, under string) ([]string, error) {
	var fs []string
	err := filepath.Walk(filepath.Join(root, under), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") && !strings.HasSuffix(p, "package-info.java") {
			rel, _ := filepath.Rel(root, p)
			fs = append(fs, rel)
		}
		return err
	})
	sort.Strings(fs)
	return fs, err
}

var javaKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`abstract assert boolean break byte case catch char class const continue default do double else enum extends final finally float for goto if implements import instanceof int interface long native new package private protected public return short static strictfp super switch synchronized this throw throws transient try void volatile while true false null var record yield`) {
		javaKeywords[k] = true
	}
}

type javaInjection struct {
	file, kind, desc string
	line             int
}

var reJavaCall = regexp.MustCompile(`\b([a-z][A-Za-z0-9_]*)\(([^()]*)\)`)

// javaUsable: a statement line inside a method body (8+ spaces of indent),
// no comment, string or char literal, no qualified package names.
func javaUsable(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(l, "        ") && t != "" && !strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "*") && !strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "@") &&
		!strings.ContainsAny(t, "\"'") && !strings.Contains(t, "//") && !strings.Contains(t, "java.") && !strings.Contains(t, "org.") && !strings.Contains(t, "->")
}

// injectJava changes one line of src; line numbers do not move.
func injectJava(r *rand.Rand, file, src, kind string) (string, javaInjection, bool) {
	lines := strings.Split(src, "\n")
	order := r.Perm(len(lines))
	for _, i := range order {
		l := lines[i]
		if !javaUsable(l) {
			continue
		}
		t := strings.TrimSpace(l)
		inj := javaInjection{file: file, kind: kind, line: i + 1}
		var after string
		switch kind {
		case "symbol":
			var ids []string
			for _, loc := range reWord.FindAllStringIndex(l, -1) {
				w := l[loc[0]:loc[1]]
				if len(w) < 3 || javaKeywords[w] || w[0] < 'a' || w[0] > 'z' {
					continue
				}
				ids = append(ids, w)
			}
			if len(ids) == 0 {
				continue
			}
			w := family.Pick(r, ids)
			tw := typo(r, w)
			if hasWord(src, tw) || tw == w {
				continue
			}
			loc := regexp.MustCompile(`\b` + w + `\b`).FindStringIndex(l)
			after = l[:loc[0]] + tw + l[loc[1]:]
			inj.desc = fmt.Sprintf("`%s` misspelled as `%s`", w, tw)
		case "semicolon":
			if !strings.HasSuffix(t, ";") || strings.HasPrefix(t, "for") || strings.Count(t, "(") != strings.Count(t, ")") {
				continue
			}
			after = strings.TrimSuffix(l, ";")
			inj.desc = "missing `;`"
		case "args":
			ms := reJavaCall.FindAllStringSubmatchIndex(l, -1)
			if len(ms) == 0 {
				continue
			}
			m := ms[r.IntN(len(ms))]
			args := l[m[4]:m[5]]
			if strings.TrimSpace(args) == "" {
				after = l[:m[4]] + family.Pick(r, []string{"0", "null", "true"}) + l[m[5]:]
				inj.desc = fmt.Sprintf("argument added to `%s()`", l[m[2]:m[3]])
			} else {
				parts := strings.Split(args, ",")
				if len(parts) == 1 {
					after = l[:m[4]] + l[m[5]:]
				} else {
					after = l[:m[4]] + strings.Join(parts[:len(parts)-1], ",") + l[m[5]:]
				}
				inj.desc = fmt.Sprintf("last argument of `%s` dropped", l[m[2]:m[3]])
			}
		case "types":
			// A return of a value becomes one of the wrong type.
			if !strings.HasPrefix(t, "return ") || t == "return;" || strings.Contains(t, "?") {
				continue
			}
			after = indentOf(l) + "return " + family.Pick(r, []string{"\"\"", "0L", "1.0", "new Object()", "'x'"}) + ";"
			inj.desc = "return value of the wrong type"
		case "assign":
			// A local declaration gets a value of the wrong type.
			m := regexp.MustCompile(`^(\s+)(final )?(int|boolean|String|char|long|Element|Node|Token|Document) ([a-z][A-Za-z0-9]*) = (.+);$`).FindStringSubmatch(l)
			if m == nil {
				continue
			}
			wrong := map[string]string{"int": "\"0\"", "boolean": "0", "String": "0", "char": "\"c\"", "long": "false", "Element": "\"\"", "Node": "0", "Token": "null + 1", "Document": "1"}[m[3]]
			after = m[1] + m[2] + m[3] + " " + m[4] + " = " + wrong + ";"
			inj.desc = fmt.Sprintf("`%s` declared %s but given %s", m[4], m[3], wrong)
		}
		if after == "" || after == l {
			continue
		}
		return replaceLine(src, i+1, after), inj, true
	}
	return "", javaInjection{}, false
}

var javaKinds = []string{"symbol", "symbol", "symbol", "semicolon", "args", "args", "types", "assign"}

// javacDiag is one javac diagnostic: the header and its continuation lines
// (source, caret, symbol:, location:, required:/found:/reason:).
type javacDiag struct {
	file     string
	line     int
	severity string
	lines    []int
}

var reJavacHead = regexp.MustCompile(`^(\S+\.java):(\d+): (error|warning): (.*)$`)
var reJavacCount = regexp.MustCompile(`^\d+ (errors?|warnings?)$`)

func parseJavac(lines []string) []javacDiag {
	var ds []javacDiag
	for i := 0; i < len(lines); i++ {
		m := reJavacHead.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		var n int
		fmt.Sscan(m[2], &n)
		d := javacDiag{file: m[1], line: n, severity: m[3], lines: []int{i + 1}}
		for i+1 < len(lines) && !reJavacHead.MatchString(lines[i+1]) && !reJavacCount.MatchString(lines[i+1]) &&
			!strings.HasPrefix(lines[i+1], "Note: ") && strings.TrimSpace(lines[i+1]) != "" {
			i++
			d.lines = append(d.lines, i+1)
		}
		ds = append(ds, d)
	}
	return ds
}

func genJavac(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	base, err := jsoupPrepared()
	if err != nil {
		return nil, err
	}
	work := filepath.Join(dir, "jsoup")
	if err := copyTree(base, work); err != nil {
		return nil, err
	}
	srcs, err := javaSources(work, "src/main/java")
	if err != nil {
		return nil, err
	}
	n := 1
	if r.IntN(4) == 0 {
		n = 2
	}
	var injs []javaInjection
	used := map[string]bool{}
	for tries := 0; len(injs) < n && tries < 20; tries++ {
		f := family.Pick(r, srcs)
		if used[f] {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(work, f))
		kind := family.Pick(r, javaKinds)
		if len(injs) > 0 && kind == "semicolon" {
			// A syntax error stops javac before it checks types elsewhere.
			continue
		}
		src, inj, ok := injectJava(r, f, string(b), kind)
		if !ok {
			continue
		}
		used[f] = true
		injs = append(injs, inj)
		os.WriteFile(filepath.Join(work, f), []byte(src), 0o644)
		if kind == "semicolon" {
			break
		}
	}
	if len(injs) == 0 {
		return nil, fmt.Errorf("no injection site")
	}
	cmdline := family.Pick(r, []string{
		"javac -cp lib/jspecify-1.0.0.jar:lib/re2j-1.7.jar -d out $(find src/main/java -name '*.java')",
		"javac -cp 'lib/*' -d out $(find src/main/java -name '*.java')",
		"javac -encoding UTF-8 -cp 'lib/*' -d target/classes $(find src/main/java -name '*.java')",
		"find src/main/java -name '*.java' > sources.txt && javac -cp 'lib/*' -d build/classes @sources.txt",
		"javac --release 11 -cp 'lib/*' -d out $(find src/main/java -name '*.java')",
	})
	if r.IntN(2) == 0 {
		// Many builds turn every lint on: its warnings surround the error.
		cmdline = strings.Replace(cmdline, "javac ", "javac -Xlint:all ", 1)
	}
	runline := strings.Replace(cmdline, "javac ", "javac -J"+strings.ReplaceAll(jvmFast, " ", " -J")+" ", 1)
	out, code, err := runCmd(work, 5*time.Minute, []string{"LC_ALL=C.UTF-8"}, runline)
	if err != nil {
		return nil, err
	}
	out = cleanPaths(out, work)
	out = cleanPaths(out, dir)
	return labelJavac(r, idx, out, code, cmdline, injs)
}

func labelJavac(r *rand.Rand, idx int, out string, code int, cmdline string, injs []javaInjection) (*family.Scenario, error) {
	lines := family.SplitLines(out)
	if len(lines) > 3000 {
		return nil, fmt.Errorf("output too long")
	}
	if code == 0 {
		return nil, fmt.Errorf("javac succeeded")
	}
	ds := parseJavac(lines)
	var all []int
	perFile := map[string][]int{}
	hit := map[string]bool{}
	warn := map[string][]int{}
	nwarn := 0
	for _, d := range ds {
		if d.severity == "warning" {
			// Lint warnings of the untouched tree: not the fault.
			k := lintKind(lines[d.lines[0]-1])
			warn[k] = append(warn[k], d.lines...)
			nwarn++
			continue
		}
		found := false
		for _, in := range injs {
			if in.file == d.file {
				found = true
				if d.line == in.line || in.kind == "semicolon" && d.line == in.line+1 {
					hit[in.file] = true
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("diagnostic outside the injected files: %s", lines[d.lines[0]-1])
		}
		all = append(all, d.lines...)
		perFile[d.file] = append(perFile[d.file], d.lines...)
	}
	for _, in := range injs {
		if !hit[in.file] {
			return nil, fmt.Errorf("%s fault at %s:%d (%s) not reported", in.kind, in.file, in.line, in.desc)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no error reported")
	}
	if len(ds)-nwarn > 8 {
		return nil, fmt.Errorf("cascade of %d diagnostics", len(ds))
	}
	count := linesMatching(lines, reJavacCount)
	inj := injs[0]
	base := filepath.Base(inj.file)
	class := strings.TrimSuffix(base, ".java")
	pkg := strings.ReplaceAll(filepath.Dir(strings.TrimPrefix(inj.file, "src/main/java/")), "/", ".")
	kv := []string{"{file}", inj.file, "{base}", base, "{class}", class, "{pkg}", pkg}
	var qs []family.Question
	add := func(q string, g []int) { qs = append(qs, family.Question{Query: q, Gold: g}) }
	add(tmpl(r, []string{
		"Why does the compile fail?", "What is javac complaining about?", "Why won't jsoup compile?", "What compile error did my edit cause?",
		"Show me the javac errors.", "What do I need to fix to get the build green?", "Which line does the compiler reject and why?",
		"The build is broken after my change — what's the error?", "What errors are reported?", "why is compilation failing",
	}), all)
	add(tmpl(r, []string{
		"What's wrong in {base}?", "Why does {class} not compile?", "What does javac say about {file}?", "Which line of {class}.java has the error?",
		"Show the compile error in {class}.", "What's broken in {pkg}.{class}?", "javac errors for {base}?", "Where is the error in the {pkg} package?",
		"What symbol can't be found in {class}?", "what's the problem on the {class} line javac flags",
	}, kv...), perFile[inj.file])
	if len(count) > 0 && r.IntN(2) == 0 {
		add(tmpl(r, []string{"How many errors did javac report?", "How many compile errors are there?", "What's the error count?",
			"how many errors in total", "Is it just one error or several?"}), count)
	}
	if ws := warn["serial"]; len(ws) > 0 && r.IntN(2) == 0 {
		add(tmpl(r, []string{"Which classes are missing a serialVersionUID?", "What serial lint warnings are there?",
			"which serializable classes does lint complain about?", "Show the [serial] warnings."}), ws)
	}
	if ws := append(warn["fallthrough"], warn["cast"]...); len(ws) > 0 && r.IntN(3) == 0 {
		add(tmpl(r, []string{"Where are the fall-through and redundant cast warnings?", "Which warnings are about casts or switch fall-through?",
			"Any lint warnings about code (not serialization)?", "show me the cast and fallthrough lint output"}), ws)
	}
	if len(injs) > 1 {
		var both []int
		for _, in := range injs {
			both = append(both, perFile[in.file]...)
		}
		add(tmpl(r, []string{"Which files have errors?", "Are there errors in more than one class?", "List every file javac rejects.",
			"Which classes fail to compile?", "Where are all the errors?"}), both)
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return &family.Scenario{
		Name: fmt.Sprintf("jsoup-%s%d-%s-%s", seedTag, idx, inj.kind, class),
		Path: "javac.log", Runner: cmdline, Source: repoJsoup.source(), Text: out, Qs: qs,
	}, nil
}

var reLintKind = regexp.MustCompile(`warning: \[([a-z]+)\]`)

// lintKind is the [kind] of a javac lint warning line.
func lintKind(l string) string {
	if m := reLintKind.FindStringSubmatch(l); m != nil {
		return m[1]
	}
	return "other"
}
