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

// libuvSources are the files libuv's CMakeLists.txt compiles on Linux, in
// its order: the Makefile a user writes lists them the same way.
var libuvSources = strings.Fields(`src/fs-poll.c src/idna.c src/inet.c src/random.c src/strscpy.c src/strtok.c
 src/thread-common.c src/threadpool.c src/timer.c src/uv-common.c src/uv-data-getter-setters.c src/version.c
 src/unix/async.c src/unix/core.c src/unix/dl.c src/unix/fs.c src/unix/getaddrinfo.c src/unix/getnameinfo.c
 src/unix/loop-watcher.c src/unix/loop.c src/unix/pipe.c src/unix/poll.c src/unix/process.c src/unix/random-devurandom.c
 src/unix/signal.c src/unix/stream.c src/unix/tcp.c src/unix/thread.c src/unix/tty.c src/unix/udp.c
 src/unix/proctitle.c src/unix/linux.c src/unix/procfs-exepath.c src/unix/random-getrandom.c src/unix/random-sysctl-linux.c`)

// makefileTmpl is the Makefile a user writes to build libuv without cmake.
// @QUIET@ switches between echoing gcc's command line and a short "CC x".
const makefileTmpl = `CC = gcc
CFLAGS = -O@OPT@ -g -std=gnu11 -Iinclude -Isrc -Wall -Wextra -Wno-unused-parameter@WERROR@ -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64
SRCS = @SRCS@
OBJS = $(patsubst src/%.c,build/%.o,$(SRCS))

all: build/libuv.a

build/libuv.a: $(OBJS)
	@AR@

build/%.o: src/%.c
	@mkdir -p $(dir $@)
@RULE@

clean:
	rm -rf build

.PHONY: all clean
`

func makefile(werror, quiet bool, opt string) string {
	var srcs strings.Builder
	for i, s := range libuvSources {
		if i > 0 {
			srcs.WriteString(" \\\n       ")
		}
		srcs.WriteString(s)
	}
	w := ""
	if werror {
		w = " -Werror"
	}
	rule, ar := "\t$(CC) $(CFLAGS) -c $< -o $@", "ar rcs $@ $^"
	if quiet {
		rule, ar = "\t@echo \"  CC      $<\"\n\t@$(CC) $(CFLAGS) -c $< -o $@", "@echo \"  AR      $@\"\n\t@ar rcs $@ $^"
	}
	return strings.NewReplacer("@OPT@", opt, "@WERROR@", w, "@SRCS@", srcs.String(), "@RULE@", rule, "@AR@", ar).Replace(makefileTmpl)
}

var (
	libuvBaseOnce sync.Once
	libuvBase     string
	libuvBaseErr  error
)

// libuvPrebuilt builds libuv once with a clean Makefile; scenarios copy it
// and rebuild only what they touch, as a developer's second `make` does.
func libuvPrebuilt() (string, error) {
	libuvBaseOnce.Do(func() {
		src, err := checkout(repoLibuv)
		if err != nil {
			libuvBaseErr = err
			return
		}
		base, err := os.MkdirTemp("", "native-libuv-")
		if err != nil {
			libuvBaseErr = err
			return
		}
		libuvBase = filepath.Join(base, "libuv")
		if err := copyTree(src, libuvBase); err != nil {
			libuvBaseErr = err
			return
		}
		os.WriteFile(filepath.Join(libuvBase, "Makefile"), []byte(makefile(false, false, "0")), 0o644)
		out, code, err := runCmd(libuvBase, 10*time.Minute, nil, "make -j2")
		if err != nil || code != 0 {
			libuvBaseErr = fmt.Errorf("prebuild libuv: %v (exit %d): %s", err, code, family.TruncateLines(out, 20))
		}
	})
	return libuvBase, libuvBaseErr
}

// cFunc is a function definition found in a C file (libuv style: the
// header starts at column 0, the body ends with "}" at column 0).
type cFunc struct {
	name        string
	head        int // 1-based line of the header's first line
	open, end   int // lines of the opening "{" and closing "}"
	params      string
	returnsVoid bool
}

var reCFuncHead = regexp.MustCompile(`^(?:static |inline |UV_UNUSED\()?[A-Za-z_][A-Za-z0-9_ \*]*?\b([A-Za-z_][A-Za-z0-9_]*)\(`)

func cFuncs(lines []string) []cFunc {
	var fs []cFunc
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || l[0] == '/' || l[0] == '}' || strings.HasPrefix(l, "typedef") || strings.HasPrefix(l, "struct") {
			continue
		}
		m := reCFuncHead.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		// The header may span lines up to the one ending with "{".
		j := i
		for j < len(lines) && !strings.HasSuffix(lines[j], "{") && !strings.HasSuffix(lines[j], ";") && j-i < 6 {
			j++
		}
		if j >= len(lines) || !strings.HasSuffix(lines[j], "{") {
			continue
		}
		k := j + 1
		for k < len(lines) && lines[k] != "}" {
			k++
		}
		if k >= len(lines) {
			break
		}
		head := strings.Join(lines[i:j+1], " ")
		params := head[strings.Index(head, "(")+1:]
		prev := ""
		if i > 0 {
			prev = lines[i-1]
		}
		fs = append(fs, cFunc{name: m[1], head: i + 1, open: j + 1, end: k + 1, params: params,
			returnsVoid: strings.HasPrefix(l, "void ") || strings.HasPrefix(l, "static void ") || strings.HasPrefix(prev, "static void") || strings.HasPrefix(prev, "void")})
		i = k
	}
	return fs
}

// cInjection is one injected compile fault: the file, the line and what
// the compiler is expected to say about it.
type cInjection struct {
	file   string // relative path, e.g. src/unix/core.c
	fn     string
	line   int
	kind   string // undeclared, semicolon, member, argcount, unused, ptrtype, implicit, retval, mutation
	before string
	after  string
	warns  bool // the fault is a warning without -Werror
	desc   string
}

var reArrowMember = regexp.MustCompile(`(->|\.)([a-z_][a-z0-9_]*)\b`)
var reCall = regexp.MustCompile(`\b(uv__?[a-z0-9_]+)\(([^()]*)\)`)
var rePtrParam = regexp.MustCompile(`\b((?:uv_[a-z_]+_t|struct [a-z_]+))\s*\*\s*([a-z_][a-z0-9_]*)\s*[,)]`)

// usable says whether a body line is plain code the injections may touch:
// no comment, no string, no preprocessor line, no macro continuation.
func usable(l string) bool {
	t := strings.TrimSpace(l)
	return t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "*") &&
		!strings.HasPrefix(t, "//") && !strings.ContainsAny(t, "\"'\\") && !strings.Contains(t, "/*")
}

// injectC picks one compile fault in file (source src) of the given kind,
// or returns false when the file offers no site for it.
func injectC(r *rand.Rand, file, src, kind string) (cInjection, bool) {
	lines := strings.Split(src, "\n")
	fs := cFuncs(lines)
	if len(fs) == 0 {
		return cInjection{}, false
	}
	type site struct {
		f    cFunc
		line int
	}
	var sites []site
	for _, f := range fs {
		for n := f.open + 1; n < f.end; n++ {
			sites = append(sites, site{f, n})
		}
	}
	r.Shuffle(len(sites), func(i, j int) { sites[i], sites[j] = sites[j], sites[i] })
	for _, s := range sites {
		l := lines[s.line-1]
		inj := cInjection{file: file, fn: s.f.name, line: s.line, kind: kind, before: l}
		switch kind {
		case "undeclared":
			if !usable(l) {
				continue
			}
			var cands []string
			for _, p := range reWord.FindAllString(s.f.params, -1) {
				if len(p) >= 3 && hasWord(l, p) && !strings.HasPrefix(p, "uv_") && p != "const" && p != "int" && p != "char" && p != "size_t" && p != "unsigned" && p != "struct" && p != "void" {
					cands = append(cands, p)
				}
			}
			if len(cands) == 0 {
				continue
			}
			p := family.Pick(r, cands)
			t := typo(r, p)
			if hasWord(src, t) {
				continue
			}
			loc := regexp.MustCompile(`\b` + p + `\b`).FindStringIndex(l)
			inj.after = l[:loc[0]] + t + l[loc[1]:]
			inj.desc = fmt.Sprintf("`%s` misspelled as `%s`", p, t)
		case "semicolon":
			t := strings.TrimSpace(l)
			if !usable(l) || !strings.HasSuffix(t, ");") || strings.HasPrefix(t, "return") || strings.HasPrefix(t, "if") || strings.HasPrefix(t, "for") || strings.HasPrefix(t, "while") || strings.Contains(t, "(void)") {
				continue
			}
			// The call must be a whole statement on this line.
			if strings.Count(t, "(") != strings.Count(t, ")") || s.line < 2 || !strings.HasSuffix(strings.TrimSpace(lines[s.line-2]), ";") && !strings.HasSuffix(strings.TrimSpace(lines[s.line-2]), "{") {
				continue
			}
			inj.after = strings.TrimSuffix(l, ";")
			inj.desc = "missing `;`"
		case "member":
			if !usable(l) {
				continue
			}
			ms := reArrowMember.FindAllStringSubmatchIndex(l, -1)
			if len(ms) == 0 {
				continue
			}
			m := ms[r.IntN(len(ms))]
			name := l[m[4]:m[5]]
			if len(name) < 3 {
				continue
			}
			t := typo(r, name)
			if hasWord(src, t) {
				continue
			}
			inj.after = l[:m[4]] + t + l[m[5]:]
			inj.desc = fmt.Sprintf("member `%s` misspelled as `%s`", name, t)
		case "argcount", "implicit":
			if !usable(l) {
				continue
			}
			ms := reCall.FindAllStringSubmatchIndex(l, -1)
			if len(ms) == 0 {
				continue
			}
			m := ms[r.IntN(len(ms))]
			name, args := l[m[2]:m[3]], l[m[4]:m[5]]
			if kind == "argcount" {
				parts := strings.Split(args, ",")
				if len(parts) < 2 {
					continue
				}
				if r.IntN(3) == 0 {
					// An extra argument instead of a missing one.
					inj.after = l[:m[5]] + ", 0" + l[m[5]:]
					inj.desc = fmt.Sprintf("extra argument to `%s`", name)
				} else {
					inj.after = l[:m[4]] + strings.Join(parts[:len(parts)-1], ",") + l[m[5]:]
					inj.desc = fmt.Sprintf("last argument of `%s` dropped", name)
				}
			} else {
				t := typo(r, name)
				if hasWord(src, t) || t == name {
					continue
				}
				inj.after = l[:m[2]] + t + l[m[3]:]
				inj.warns = true
				inj.desc = fmt.Sprintf("call to `%s` misspelled as `%s`", name, t)
			}
		case "unused", "ptrtype":
			// A blank line inside the body becomes a declaration.
			if strings.TrimSpace(l) != "" || s.line <= s.f.open+1 {
				continue
			}
			ind := indentOf(lines[s.line])
			if ind == "" {
				ind = "  "
			}
			if kind == "unused" {
				v := family.Pick(r, []string{"saved_errno", "nread", "count", "flags", "timeout", "nfds", "retries", "pending", "events", "tmp"})
				if hasWord(src, v) && r.IntN(2) == 0 {
					continue
				}
				v = v + family.Pick(r, []string{"", "2", "_old", "_local"})
				if hasWord(src, v) {
					continue
				}
				inj.after = ind + family.Pick(r, []string{"int ", "unsigned int ", "ssize_t ", "size_t ", "long "}) + v + family.Pick(r, []string{";", " = 0;"})
				inj.desc = fmt.Sprintf("unused variable `%s`", v)
			} else {
				ms := rePtrParam.FindAllStringSubmatch(s.f.params, -1)
				if len(ms) == 0 {
					continue
				}
				m := family.Pick(r, ms)
				v := family.Pick(r, []string{"fdp", "cur", "ptr", "p", "buf", "state"})
				if hasWord(src, v) {
					continue
				}
				ty := family.Pick(r, []string{"int*", "char*", "uv_buf_t*", "unsigned int*", "long*"})
				inj.after = fmt.Sprintf("%s%s %s = %s;", ind, ty, v, m[2])
				inj.desc = fmt.Sprintf("`%s` (a %s*) assigned to a %s", m[2], m[1], ty)
			}
			inj.warns = true
		case "retval":
			t := strings.TrimSpace(l)
			if s.f.returnsVoid && t == "return;" {
				inj.after = strings.Replace(l, "return;", "return 0;", 1)
				inj.desc = "`return 0;` in a void function"
			} else if !s.f.returnsVoid && strings.HasPrefix(t, "return ") && strings.HasSuffix(t, ";") && usable(l) {
				inj.after = indentOf(l) + "return;"
				inj.desc = "`return` without a value"
			} else {
				continue
			}
			inj.warns = true
		default:
			return cInjection{}, false
		}
		return inj, true
	}
	return cInjection{}, false
}

var cKinds = []string{"undeclared", "undeclared", "semicolon", "member", "member", "argcount", "argcount", "unused", "ptrtype", "implicit", "retval"}

// gccDiag is one diagnostic gcc printed: its header line and the lines that
// belong to it (source and caret lines, fix-it lines).
type gccDiag struct {
	file     string
	line     int
	severity string
	msg      string
	lines    []int // 1-based output lines: header then continuation
}

var reGccHead = regexp.MustCompile(`^([^\s:][^:]*):(\d+):(\d+): (error|warning|note): (.*)$`)
var reGccCont = regexp.MustCompile(`^\s+(\d+ )?\|`)
var reGccInFunc = regexp.MustCompile(`^([^\s:][^:]*): In function ['‘]([^'’]+)['’]:$`)

// parseGcc splits gcc output into diagnostics; a note is its own entry.
func parseGcc(lines []string) []gccDiag {
	var ds []gccDiag
	for i := 0; i < len(lines); i++ {
		m := reGccHead.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		var n int
		fmt.Sscan(m[2], &n)
		d := gccDiag{file: m[1], line: n, severity: m[4], msg: m[5], lines: []int{i + 1}}
		for i+1 < len(lines) && reGccCont.MatchString(lines[i+1]) {
			i++
			d.lines = append(d.lines, i+1)
		}
		ds = append(ds, d)
	}
	return ds
}

func genCGcc(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	base, err := libuvPrebuilt()
	if err != nil {
		return nil, err
	}
	work := filepath.Join(dir, "libuv")
	if err := copyTree(base, work); err != nil {
		return nil, err
	}
	// Mostly one faulty file; sometimes two, built with -k so both show.
	nfiles := 1
	if r.IntN(4) == 0 {
		nfiles = 2
	}
	var injs []cInjection
	used := map[string]bool{}
	for tries := 0; len(injs) < nfiles && tries < 20; tries++ {
		file := family.Pick(r, libuvSources)
		if used[file] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(work, file))
		if err != nil {
			return nil, err
		}
		src := string(b)
		var inj cInjection
		var ok bool
		if r.IntN(8) == 0 {
			inj, ok = mutationC(r, file, src)
		} else {
			inj, ok = injectC(r, file, src, family.Pick(r, cKinds))
		}
		if !ok {
			continue
		}
		used[file] = true
		injs = append(injs, inj)
		os.WriteFile(filepath.Join(work, file), []byte(replaceLine(src, inj.line, inj.after)), 0o644)
	}
	if len(injs) == 0 {
		return nil, fmt.Errorf("no injection site")
	}
	werror := r.IntN(3) == 0
	quiet := r.IntN(3) == 0
	os.WriteFile(filepath.Join(work, "Makefile"), []byte(makefile(werror, quiet, family.Pick(r, []string{"0", "0", "2", "g"}))), 0o644)
	// Sources older than objects, except the edited ones and a few others
	// the developer also touched, so make rebuilds just those.
	old := time.Now().Add(-time.Hour)
	newer := time.Now().Add(-30 * time.Minute)
	filepath.Walk(work, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			t := old
			if strings.HasSuffix(p, ".o") || strings.HasSuffix(p, ".a") {
				t = newer
			}
			os.Chtimes(p, t, t)
		}
		return nil
	})
	now := time.Now()
	for _, inj := range injs {
		os.Chtimes(filepath.Join(work, inj.file), now, now)
	}
	for k := r.IntN(4); k > 0; k-- {
		os.Chtimes(filepath.Join(work, family.Pick(r, libuvSources)), now, now)
	}
	cmdline := family.Pick(r, []string{"make", "make", "make -j1", "make all"})
	if len(injs) > 1 || r.IntN(4) == 0 {
		cmdline = family.Pick(r, []string{"make -k", "make -k -j1", "make --keep-going"})
	}
	// A UTF-8 terminal gets gcc's curly quotes, a plain C locale (CI) ASCII ones.
	locale := family.Pick(r, []string{"C.UTF-8", "C.UTF-8", "C"})
	out, code, err := runCmd(work, 5*time.Minute, []string{"LC_ALL=" + locale, "LANG=" + locale}, cmdline)
	if err != nil {
		return nil, err
	}
	out = cleanPaths(out, work)
	out = cleanPaths(out, dir)
	return labelCGcc(r, idx, out, code, cmdline, injs, werror)
}

// mutationC applies a mutation-engine candidate; it is kept only when the
// compiler reports it (most single-line mutations compile cleanly).
func mutationC(r *rand.Rand, file, src string) (cInjection, bool) {
	lines := strings.Split(src, "\n")
	fs := cFuncs(lines)
	var ms []family.Mutation
	for _, m := range family.Candidates(src, family.LangC) {
		for _, f := range fs {
			if m.Line > f.open && m.Line < f.end && (m.Kind == "swap" || m.Kind == "drop" || m.Kind == "bool") {
				ms = append(ms, m)
				break
			}
		}
	}
	if len(ms) == 0 {
		return cInjection{}, false
	}
	m := family.Pick(r, ms)
	fn := ""
	for _, f := range fs {
		if m.Line > f.open && m.Line < f.end {
			fn = f.name
		}
	}
	return cInjection{file: file, fn: fn, line: m.Line, kind: "mutation", before: m.Before, after: m.After, warns: true, desc: m.Desc}, true
}

var reMakeErr = regexp.MustCompile(`^make: \*\*\* \[Makefile:\d+: (build/[^\]]+)\] Error \d+$`)

func labelCGcc(r *rand.Rand, idx int, out string, code int, cmdline string, injs []cInjection, werror bool) (*family.Scenario, error) {
	lines := family.SplitLines(out)
	if len(lines) > 3000 {
		return nil, fmt.Errorf("output too long")
	}
	diags := parseGcc(lines)
	// Every diagnostic must come from an injection: the clean tree builds
	// without any.
	var gold, errGold, warnGold, makeGold []int
	perFile := map[string][]int{}
	hit := map[string]bool{}
	for di, d := range diags {
		if d.severity == "note" {
			continue
		}
		var inj *cInjection
		for k := range injs {
			if injs[k].file == d.file {
				inj = &injs[k]
			}
		}
		if inj == nil {
			return nil, fmt.Errorf("diagnostic outside the injected files: %s", lines[d.lines[0]-1])
		}
		// A missing semicolon after a macro call is reported at the next
		// token, which may be a line or two further.
		if d.line == inj.line || inj.kind == "semicolon" && d.line > inj.line && d.line <= inj.line+2 {
			hit[inj.file] = true
		}
		blk := append([]int{}, d.lines...)
		// Notes that follow belong to this diagnostic (declared here, each
		// undeclared identifier is reported only once, ...).
		for k := di + 1; k < len(diags) && diags[k].severity == "note"; k++ {
			blk = append(blk, diags[k].lines...)
			// A note in a header comes after the line naming the include.
			if n := diags[k].lines[0]; n >= 2 && strings.HasPrefix(lines[n-2], "In file included from ") {
				blk = append(blk, n-1)
			}
		}
		// The "In function" line above it names the function.
		for k := d.lines[0] - 1; k >= 1; k-- {
			if m := reGccInFunc.FindStringSubmatch(lines[k-1]); m != nil {
				if m[1] == d.file {
					blk = append(blk, k)
				}
				break
			}
			if strings.HasPrefix(lines[k-1], "gcc ") || strings.HasPrefix(lines[k-1], "  CC ") {
				break
			}
		}
		gold = append(gold, blk...)
		perFile[d.file] = append(perFile[d.file], blk...)
		if d.severity == "error" {
			errGold = append(errGold, blk...)
		} else {
			warnGold = append(warnGold, blk...)
		}
	}
	for _, inj := range injs {
		if !hit[inj.file] {
			return nil, fmt.Errorf("%s fault at %s:%d (%s) not reported", inj.kind, inj.file, inj.line, inj.desc)
		}
	}
	if len(diags) > 14 {
		return nil, fmt.Errorf("cascade of %d diagnostics", len(diags))
	}
	for i, l := range lines {
		if reMakeErr.MatchString(l) || strings.HasPrefix(l, "cc1: all warnings being treated as errors") {
			makeGold = append(makeGold, i+1)
		}
	}
	failed := code != 0
	if failed != (len(errGold) > 0) && !(failed && werror) {
		return nil, fmt.Errorf("exit %d does not match the diagnostics", code)
	}
	if failed && len(makeGold) == 0 {
		return nil, fmt.Errorf("no make error line")
	}
	inj := injs[0]
	base := filepath.Base(inj.file)
	var qs family.Questions
	add := qs.Add
	fkv := []string{"{file}", inj.file, "{base}", base, "{fn}", inj.fn, "{obj}", strings.TrimSuffix(strings.TrimPrefix(inj.file, "src/"), ".c") + ".o"}
	if failed {
		add(tmpl(r, []string{
			"Why does the build fail?", "Why is make failing?", "What compile error stops the libuv build?",
			"The build broke after my edit, what is the compiler complaining about?", "What is the error from gcc and where is it?",
			"make exits with Error 1 - what's the actual error?", "Show me the compiler errors.", "What do I have to fix to get it to compile again?",
			"Which line does the compiler reject?", "why won't libuv build",
		}), errGold, makeGold)
		add(tmpl(r, []string{
			"What's wrong in {file}?", "Why does {base} not compile?", "What error does gcc give for {fn}?", "Show the diagnostics for {file}.",
			"What does the compiler say about {fn} in {base}?", "Which line of {base} has the error?", "Why does {obj} fail to build?",
			"What is broken in function {fn}?", "gcc errors in {base}?", "Where in {fn} is the compile error?",
		}, fkv...), perFile[inj.file])
		add(tmpl(r, []string{
			"Which object file failed to build?", "Which make target failed?", "Which files failed to compile?", "What target did make stop on?",
			"Which .o couldn't be built?", "Which translation units have errors?", "list the objects that failed",
			"what does make report as the failed rule?", "Which sources did make give up on?", "which build step failed",
		}), makeGold, errGold)
	} else {
		add(tmpl(r, []string{
			"Did the build produce any warnings?", "What warnings does gcc print?", "The build passes but prints something, what is it?",
			"Are there compiler warnings I should fix?", "What is gcc warning about?", "Show me the warnings from this build.",
			"Anything suspicious in the compile output?", "What did -Wall flag?", "Is there a warning about my change?", "which lines get warnings",
		}), warnGold)
		add(tmpl(r, []string{
			"What does gcc warn about in {file}?", "Is there a warning in {fn}?", "Any warnings for {base}?", "Why does {base} produce a warning?",
			"What's the warning in function {fn}?", "Which line of {base} triggers a warning?", "What did the compiler flag in {fn}?",
			"Show the warning for {file}.", "what's gcc unhappy about in {base}", "warning location in {fn}?",
		}, fkv...), perFile[inj.file])
	}
	// Which files were rebuilt: a question about the run, not the fault.
	var compiled []int
	for i, l := range lines {
		if strings.HasPrefix(l, "gcc ") || strings.HasPrefix(l, "  CC ") {
			compiled = append(compiled, i+1)
		}
	}
	if r.IntN(3) == 0 && len(compiled) > 0 {
		add(tmpl(r, []string{"Which source files did make recompile?", "What files got compiled in this run?", "Which .c files were rebuilt?",
			"Which compile commands ran?", "what did make actually rebuild?", "List the files make compiled."}), compiled)
	}
	if len(injs) > 1 {
		var both []int
		for _, in := range injs {
			both = append(both, perFile[in.file]...)
		}
		add(tmpl(r, []string{"Which files have errors?", "Are there errors in more than one file?", "List every file with a diagnostic and what it says.",
			"Which functions fail to compile?", "Where are all the errors?"}), both)
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return &family.Scenario{
		Name: fmt.Sprintf("libuv-%s%d-%s-%s", seedTag, idx, inj.kind, strings.ReplaceAll(strings.TrimSuffix(base, ".c"), "-", "_")),
		Path: "make.log", Runner: cmdline, Source: repoLibuv.source(), Text: out, Qs: qs,
	}, nil
}
