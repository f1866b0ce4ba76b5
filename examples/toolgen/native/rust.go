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

// rustCrate is a crate built offline in one persistent folder per run, so
// cargo's incremental cache makes each scenario a partial rebuild; every
// scenario restores the file it changed.
type rustCrate struct {
	repo    repoSpec
	sub     string // crate folder inside the repository
	name    string
	once    sync.Once
	mu      sync.Mutex
	dir     string
	err     error
	sources []string
}

var (
	crateRegexSyntax = &rustCrate{repo: repoRegex, sub: "regex-syntax", name: "regex-syntax"}
	crateAnyhow      = &rustCrate{repo: repoAnyhow, sub: "", name: "anyhow"}
)

// prepare copies the crate out of its checkout and makes its manifest
// resolvable offline: no workspace parent, no optional or dev
// dependencies (crates.io is out of reach; the library itself needs none).
func (c *rustCrate) prepare(warm string) error {
	c.once.Do(func() {
		src, err := checkout(c.repo)
		if err != nil {
			c.err = err
			return
		}
		base, err := os.MkdirTemp("", "native-"+c.name+"-")
		if err != nil {
			c.err = err
			return
		}
		c.dir = filepath.Join(base, c.name)
		if c.err = copyTree(filepath.Join(src, c.sub), c.dir); c.err != nil {
			return
		}
		os.Remove(filepath.Join(c.dir, "rust-toolchain.toml"))
		b, err := os.ReadFile(filepath.Join(c.dir, "Cargo.toml"))
		if err != nil {
			c.err = err
			return
		}
		var keep []string
		skip := false
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "[") {
				skip = strings.TrimSpace(l) == "[dev-dependencies]" || strings.TrimSpace(l) == "[dependencies]"
			}
			if skip || strings.HasPrefix(l, "workspace = ") || strings.HasPrefix(l, "include.workspace") || strings.Contains(l, `"dep:`) {
				continue
			}
			keep = append(keep, l)
		}
		os.WriteFile(filepath.Join(c.dir, "Cargo.toml"), []byte(strings.Join(keep, "\n")), 0o644)
		filepath.Walk(filepath.Join(c.dir, "src"), func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, ".rs") {
				rel, _ := filepath.Rel(c.dir, p)
				c.sources = append(c.sources, rel)
			}
			return err
		})
		sort.Strings(c.sources)
		// Warm the cache (warm is the build the family runs): the first
		// scenario would otherwise show a full build of the crate.
		out, code, err := runCmd(c.dir, 15*time.Minute, []string{"CARGO_NET_OFFLINE=true"}, warm)
		if err != nil || code != 0 {
			c.err = fmt.Errorf("warm %s: %v %s", c.name, err, family.TruncateLines(out, 30))
		}
	})
	return c.err
}

// rustUsable: a statement line inside a function body, no comment, string,
// char literal or lifetime, no macro definitions.
func rustUsable(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(l, "        ") && t != "" && !strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "#") &&
		!strings.ContainsAny(t, "\"'$") && !strings.Contains(t, "//") && !strings.HasPrefix(t, "pub ") && !strings.HasPrefix(t, "fn ") && !strings.HasPrefix(t, "impl")
}

var rustKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err usize u8 u16 u32 u64 i32 i64 char bool str`) {
		rustKeywords[k] = true
	}
}

type rustInjection struct {
	file, kind, desc string
	line             int
	warns            bool
}

var reRustMethod = regexp.MustCompile(`\.([a-z_][a-z0-9_]*)\(`)
var reRustLet = regexp.MustCompile(`^\s+let (mut )?([a-z_][a-z0-9_]*)\b`)

// injectRust changes one line of src (line numbers do not move).
func injectRust(r *rand.Rand, file, src, kind string) (string, rustInjection, bool) {
	lines := strings.Split(src, "\n")
	// Stay out of the crate's test modules: cargo build does not compile them.
	limit := len(lines)
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#[cfg(test)]") {
			limit = i
			break
		}
	}
	for _, i := range r.Perm(limit) {
		l := lines[i]
		inj := rustInjection{file: file, kind: kind, line: i + 1}
		var after string
		switch kind {
		case "unresolved":
			if !rustUsable(l) {
				continue
			}
			// A local bound earlier in the same body, used on this line.
			var locals []string
			for k := i - 1; k >= 0 && k > i-40; k-- {
				if m := reRustLet.FindStringSubmatch(lines[k]); m != nil && len(m[2]) >= 3 && hasWord(l, m[2]) {
					locals = append(locals, m[2])
				}
				if strings.HasPrefix(strings.TrimSpace(lines[k]), "fn ") || strings.HasPrefix(strings.TrimSpace(lines[k]), "pub fn ") {
					break
				}
			}
			if len(locals) == 0 {
				continue
			}
			w := family.Pick(r, locals)
			tw := typo(r, w)
			if hasWord(src, tw) || tw == w {
				continue
			}
			loc := regexp.MustCompile(`\b` + w + `\b`).FindStringIndex(l)
			after = l[:loc[0]] + tw + l[loc[1]:]
			inj.desc = fmt.Sprintf("`%s` misspelled as `%s`", w, tw)
		case "method":
			if !rustUsable(l) {
				continue
			}
			ms := reRustMethod.FindAllStringSubmatchIndex(l, -1)
			if len(ms) == 0 {
				continue
			}
			m := ms[r.IntN(len(ms))]
			w := l[m[2]:m[3]]
			tw := typo(r, w)
			if len(w) < 3 || tw == w || hasWord(src, tw) {
				continue
			}
			after = l[:m[2]] + tw + l[m[3]:]
			inj.desc = fmt.Sprintf("method `%s` misspelled as `%s`", w, tw)
		case "semicolon":
			t := strings.TrimSpace(l)
			if !rustUsable(l) || !strings.HasSuffix(t, ");") || !strings.HasPrefix(t, "let ") || strings.Count(t, "(") != strings.Count(t, ")") {
				continue
			}
			after = strings.TrimSuffix(l, ";")
			inj.desc = "missing `;`"
		case "mismatch", "unused":
			// A blank line inside a body becomes a binding.
			if strings.TrimSpace(l) != "" || i == 0 || i+1 >= limit {
				continue
			}
			prev, next := lines[i-1], lines[i+1]
			if !strings.HasPrefix(prev, "        ") || !strings.HasPrefix(next, "        ") || !strings.HasSuffix(strings.TrimSpace(prev), ";") || !rustUsable(next) {
				continue
			}
			ind := indentOf(next)
			if kind == "mismatch" {
				ty, val := family.Pick(r, [][2]string{{"usize", `"0"`}, {"u32", "-1i64"}, {"bool", "0"}, {"&str", "1"}, {"String", `"none"`}, {"Option<usize>", "0"}, {"char", `"a"`}})[0], ""
				pairs := map[string][]string{"usize": {`"0"`, "1.5", "None"}, "u32": {"0u64", "-1i64", "true"}, "bool": {"0", "None"}, "&str": {"1", "'a'"}, "String": {`"none"`, "0"}, "Option<usize>": {"0", `""`}, "char": {`"a"`, "0u8"}}
				val = family.Pick(r, pairs[ty])
				v := family.Pick(r, []string{"_len", "_pos", "_limit", "_n", "_flag", "_count"})
				after = fmt.Sprintf("%slet %s: %s = %s;", ind, v, ty, val)
				inj.desc = fmt.Sprintf("`%s` declared %s but given %s", v, ty, val)
			} else {
				v := family.Pick(r, []string{"count", "len", "pos", "limit", "start", "depth", "idx"})
				if hasWord(strings.Join(lines[max(0, i-30):min(len(lines), i+30)], "\n"), v) {
					continue
				}
				after = fmt.Sprintf("%slet %s = %s;", ind, v, family.Pick(r, []string{"0", "1", "0usize", "Vec::<u8>::new()"}))
				inj.desc = fmt.Sprintf("unused binding `%s`", v)
				inj.warns = true
			}
		}
		if after == "" || after == l {
			continue
		}
		return replaceLine(src, i+1, after), inj, true
	}
	return "", rustInjection{}, false
}

var rustKinds = []string{"unresolved", "unresolved", "method", "method", "semicolon", "mismatch", "mismatch", "unused"}

// rustDiag is one rustc diagnostic: header, --> location, code, carets,
// notes and help (rustc ends each with a blank line).
type rustDiag struct {
	severity, head string
	file           string
	line           int
	lines          []int
}

var reRustHead = regexp.MustCompile(`^(error|warning)(\[E\d+\])?: (.*)$`)
var reRustLoc = regexp.MustCompile(`^\s*--> ([^:]+):(\d+):(\d+)$`)

func parseRustc(lines []string) []rustDiag {
	var ds []rustDiag
	for i := 0; i < len(lines); i++ {
		m := reRustHead.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		d := rustDiag{severity: m[1], head: m[3], lines: []int{i + 1}}
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			i++
			d.lines = append(d.lines, i+1)
			if lm := reRustLoc.FindStringSubmatch(lines[i]); lm != nil && d.file == "" {
				d.file = lm[1]
				fmt.Sscan(lm[2], &d.line)
			}
		}
		ds = append(ds, d)
	}
	return ds
}

func genCargoBuild(r *rand.Rand, idx int, dir string) (*family.Scenario, error) {
	c := crateAnyhow
	if r.IntN(4) == 0 {
		c = crateRegexSyntax
	}
	if err := c.prepare("cargo build && cargo check"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var inj rustInjection
	var orig []byte
	for tries := 0; tries < 20; tries++ {
		f := family.Pick(r, c.sources)
		b, _ := os.ReadFile(filepath.Join(c.dir, f))
		src, in, ok := injectRust(r, f, string(b), family.Pick(r, rustKinds))
		if ok {
			inj, orig = in, b
			os.WriteFile(filepath.Join(c.dir, f), []byte(src), 0o644)
			break
		}
	}
	if orig == nil {
		return nil, fmt.Errorf("no injection site")
	}
	defer os.WriteFile(filepath.Join(c.dir, inj.file), orig, 0o644)
	cmdline := family.Pick(r, []string{"cargo build", "cargo build", "cargo build --offline", "cargo check", "cargo build --all-features"})
	out, code, err := runCmd(c.dir, 10*time.Minute, []string{"CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never"}, cmdline)
	if err != nil {
		return nil, err
	}
	out = cleanPaths(out, c.dir)
	return labelCargoBuild(r, idx, out, code, cmdline, c.name, c.repo.source(), inj)
}

func labelCargoBuild(r *rand.Rand, idx int, out string, code int, cmdline, crate, source string, inj rustInjection) (*family.Scenario, error) {
	lines := family.SplitLines(out)
	ds := parseRustc(lines)
	var errs, warns, inFile []int
	hit := false
	var summary []int
	for _, d := range ds {
		if d.file == "" {
			// "error: could not compile `x` (lib) due to 1 previous error"
			// and the warning count: summary lines of the run.
			summary = append(summary, d.lines...)
			continue
		}
		if d.file != inj.file {
			return nil, fmt.Errorf("diagnostic outside the injected file: %s", lines[d.lines[0]-1])
		}
		if d.line == inj.line || inj.kind == "semicolon" && d.line == inj.line+1 {
			hit = true
		}
		inFile = append(inFile, d.lines...)
		if d.severity == "error" {
			errs = append(errs, d.lines...)
		} else {
			warns = append(warns, d.lines...)
		}
	}
	if !hit {
		return nil, fmt.Errorf("%s fault at %s:%d (%s) not reported", inj.kind, inj.file, inj.line, inj.desc)
	}
	if len(ds) > 10 {
		return nil, fmt.Errorf("cascade of %d diagnostics", len(ds))
	}
	if (code != 0) != (len(errs) > 0) {
		return nil, fmt.Errorf("exit %d does not match the diagnostics", code)
	}
	base := filepath.Base(inj.file)
	mod := strings.TrimSuffix(strings.TrimPrefix(inj.file, "src/"), ".rs")
	kv := []string{"{file}", inj.file, "{base}", base, "{mod}", strings.ReplaceAll(mod, "/", "::"), "{crate}", crate}
	var qs family.Questions
	add := qs.Add
	if code != 0 {
		add(tmpl(r, []string{
			"Why does the build fail?", "What is rustc complaining about?", "Why doesn't {crate} compile anymore?", "What compile error did my change introduce?",
			"Show me the compiler error.", "What do I need to fix to make cargo build pass?", "Which line does rustc reject and why?",
			"cargo build fails - what's the error?", "what's the error code and where is it?", "why is compilation broken",
		}, kv...), errs, summary)
		add(tmpl(r, []string{
			"What's wrong in {file}?", "Why does {base} not compile?", "What does the compiler say about {mod}?", "Which line of {base} has the error?",
			"Show the error in {file} with its help text.", "what's broken in the {mod} module?", "rustc errors for {base}?",
			"Where exactly in {file} is the type error?", "What does rustc suggest for {base}?", "Explain the error in {mod}.",
		}, kv...), inFile)
	} else {
		add(tmpl(r, []string{
			"Are there any warnings?", "What does the compiler warn about?", "The build passes but prints a warning, what is it?",
			"Any warnings I should fix before committing?", "What's rustc's warning and where?", "show me the warnings",
			"Does cargo report anything suspicious?", "Which line triggers a warning?", "What lint fired?", "why is there a warning in the build",
		}, kv...), warns)
		add(tmpl(r, []string{
			"Is there a warning in {file}?", "What does rustc say about {base}?", "Any warnings in the {mod} module?", "What's the warning in {base} and how do I silence it?",
			"Which line of {file} does the warning point at?", "What's flagged in {mod}?",
		}, kv...), warns)
	}
	if r.IntN(3) == 0 {
		var comp []int
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "Compiling ") || strings.HasPrefix(strings.TrimSpace(l), "Checking ") || strings.HasPrefix(strings.TrimSpace(l), "Finished ") {
				comp = append(comp, i+1)
			}
		}
		add(tmpl(r, []string{"Which crates were compiled?", "What did cargo build in this run?", "Which crate versions does the build compile?",
			"Did the build finish?", "what got compiled"}), comp)
	}
	r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
	return &family.Scenario{
		Name: fmt.Sprintf("%s-%s%d-%s-%s", crate, seedTag, idx, inj.kind, strings.ReplaceAll(mod, "/", "_")),
		Path: "cargo-build.log", Runner: cmdline, Source: source, Text: out, Qs: qs,
	}, nil
}
