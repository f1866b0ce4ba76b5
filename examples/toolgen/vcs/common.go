package main

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/prunekit/pruner/internal/evalset"
	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

// homeDir replaces the scratch directory in every output.
const homeDir = "/home/dev/project"

// outCase is one training record, in the training data files' format.
type outCase = lmtrain.Case

// question is a query and the 0-based output lines that answer it.
type question struct {
	query string
	gold  []int
}

// output is one real tool output and the questions asked about it.
type output struct {
	name  string // scenario id, unique within the family
	file  string // plausible file name for the output
	text  string
	lines []string
	qs    []question

	dirHint string // listing: the directory a plain ls listed
}

func newOutput(name, file, text string) *output {
	return &output{name: name, file: file, text: text, lines: splitLines(text)}
}

// splitLines splits like the training data: text.split("\n") without the
// empty piece after a final newline.
func splitLines(s string) []string {
	ls := strings.Split(s, "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// add records a question when its gold set is usable: 1–25 distinct,
// non-blank lines in range. It reports whether the question was kept.
func (o *output) add(query string, gold []int) bool {
	if strings.TrimSpace(query) == "" || len(gold) == 0 {
		return false
	}
	seen := map[int]bool{}
	var g []int
	for _, i := range gold {
		if i < 0 || i >= len(o.lines) {
			return false
		}
		if strings.TrimSpace(o.lines[i]) == "" {
			continue
		}
		if !seen[i] {
			seen[i] = true
			g = append(g, i)
		}
	}
	if len(g) == 0 || len(g) > 25 {
		return false
	}
	for _, q := range o.qs {
		if q.query == query {
			return false
		}
	}
	sort.Ints(g)
	o.qs = append(o.qs, question{query: query, gold: g})
	return true
}

// cases turns the output's questions into training cases. The split is
// drawn from the scenario id, so all outputs of one scenario (the log and
// the blame of one replayed history, the listings of one tree) share it.
func (o *output) cases(family string, seed uint64, scenario string) []outCase {
	split := "train"
	if hash64(fmt.Sprint(seed, family, scenario))%100 < 5 {
		split = "val"
	}
	var out []outCase
	for k, q := range o.qs {
		g := make([]int, len(q.gold))
		for i, x := range q.gold {
			g[i] = x + 1
		}
		out = append(out, outCase{Case: evalset.Case{
			ID: fmt.Sprintf("tool:%s/%s#%d", family, o.name, k+1), Repo: "tool:" + family,
			Lang: "text", Path: o.file, Kind: "tool", Query: q.query, Text: o.text,
			GoldLines: g, WindowStart: 1, FileLines: len(o.lines),
		}, Split: split})
	}
	return out
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// runner runs real tools in a scratch directory.
type runner struct {
	dir string // scratch directory (absolute)
	env []string
}

func newRunner(dir string) *runner {
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C.UTF-8", "TZ=UTC",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0",
	}
	return &runner{dir: dir, env: env}
}

// run runs name args in dir (relative to the scratch directory) with extra
// environment variables and returns stdout.
func (r *runner) run(sub string, extra []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = filepath.Join(r.dir, sub)
	cmd.Env = append(append([]string{}, r.env...), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// clean replaces the scratch directory (and its resolved form) with homeDir.
func (r *runner) clean(s string) string {
	if real, err := filepath.EvalSymlinks(r.dir); err == nil && real != r.dir {
		s = strings.ReplaceAll(s, real, homeDir)
	}
	return strings.ReplaceAll(s, r.dir, homeDir)
}

// ---- names, dates, phrasing ----

var firstNames = []string{"Alice", "Bram", "Chen", "Dana", "Emeka", "Farah", "Gustavo", "Hana", "Ivan", "Jade",
	"Kenji", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Samir", "Tereza", "Umar", "Vera",
	"Wojciech", "Ximena", "Yusuf", "Zoe", "Arjun", "Beatriz", "Callum", "Dmitri", "Elif", "Finn", "Greta",
	"Hiroshi", "Ines", "Jonas", "Kira", "Luca", "Mei", "Nils", "Olga", "Pavel", "Rania", "Sven", "Tomasz", "Yara"}
var lastNames = []string{"Okafor", "Lindqvist", "Moreau", "Tanaka", "Kowalski", "Haddad", "Fernandes", "Novak",
	"Schmidt", "Park", "Ivanova", "Rossi", "Nakamura", "Mbeki", "Larsen", "Costa", "Weber", "Aydin", "Petrov",
	"Gupta", "Dubois", "Jansen", "Silva", "Horvat", "Brennan", "Kim", "Varga", "Mendes", "Olsen", "Reyes",
	"Fischer", "Sato", "Chowdhury", "Nowak", "Eriksen", "Banerjee", "Quinn", "Abara", "Yilmaz", "Holm"}
var mailDomains = []string{"gmail.com", "example.org", "users.noreply.github.com", "fastmail.com", "corp.example.com", "proton.me"}

type person struct{ name, email string }

func makePeople(rng *rand.Rand, n int) []person {
	var ps []person
	used := map[string]bool{}
	for len(ps) < n {
		f, l := firstNames[rng.IntN(len(firstNames))], lastNames[rng.IntN(len(lastNames))]
		name := f + " " + l
		if used[name] {
			continue
		}
		used[name] = true
		var local string
		switch rng.IntN(4) {
		case 0:
			local = strings.ToLower(f + "." + l)
		case 1:
			local = strings.ToLower(f[:1] + l)
		case 2:
			local = strings.ToLower(f) + strconv.Itoa(rng.IntN(99)+1)
		default:
			local = strings.ToLower(l + f[:1])
		}
		ps = append(ps, person{name, local + "@" + mailDomains[rng.IntN(len(mailDomains))]})
	}
	return ps
}

var zones = []int{-7, -5, -4, 0, 1, 2, 3, 5, 8, 9, -3, 10}

func randomZone(rng *rand.Rand) *time.Location {
	h := zones[rng.IntN(len(zones))]
	return time.FixedZone("", h*3600)
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// subjectOf returns the first line of a commit message.
func subjectOf(msg string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return strings.TrimSpace(s)
}

var issueRef = regexp.MustCompile(`\s*\((#|closes |fixes |gh-)\d+\)\s*$|\s*#\d+\s*$`)

// describe turns a commit subject into a clause usable after "the change
// that ..." ("Fix the foo bar." -> "fixed the foo bar").
func describe(subject string) string {
	s := issueRef.ReplaceAllString(strings.TrimSpace(subject), "")
	s = strings.TrimRight(s, ". ")
	if i := strings.Index(s, ": "); i > 0 && i < 25 && !strings.Contains(s[:i], " ") {
		s = s[i+2:] // "area: message"
	}
	if s == "" {
		return ""
	}
	w, rest, _ := strings.Cut(s, " ")
	lw := strings.ToLower(w)
	past := map[string]string{"add": "added", "adds": "added", "added": "added", "fix": "fixed", "fixes": "fixed", "fixed": "fixed",
		"remove": "removed", "removes": "removed", "removed": "removed", "use": "switched to using", "update": "updated",
		"updates": "updated", "make": "made", "makes": "made", "allow": "allowed", "support": "added support for",
		"improve": "improved", "refactor": "refactored", "rename": "renamed", "move": "moved", "drop": "dropped",
		"change": "changed", "handle": "handled", "avoid": "avoided", "implement": "implemented", "clean": "cleaned",
		"simplify": "simplified", "introduce": "introduced", "replace": "replaced", "ensure": "ensured", "don't": "stopped the code from",
		"do": "did", "correct": "corrected", "optimize": "optimized", "expose": "exposed", "deprecate": "deprecated",
		"prevent": "prevented", "set": "set", "return": "returned", "check": "checked", "extract": "extracted",
		"convert": "converted", "enable": "enabled", "disable": "disabled", "tweak": "tweaked", "reduce": "reduced",
		"revert": "reverted", "bump": "bumped", "merge": "merged", "skip": "skipped", "pass": "passed", "document": "documented"}
	if p, ok := past[lw]; ok && rest != "" {
		return p + " " + rest
	}
	if strings.HasSuffix(lw, "ed") {
		return strings.ToLower(w[:1]) + w[1:] + " " + rest
	}
	return "dealt with " + lowerFirst(s)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	if len(r) > 1 && unicode.IsUpper(r[1]) {
		return s // acronym
	}
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

var identRe = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// goodIdent reports whether tok looks like a distinctive code identifier.
func goodIdent(tok string) bool {
	if len(tok) < 6 || len(tok) > 40 || stopIdents[strings.ToLower(tok)] {
		return false
	}
	hasUpperInside, hasUnderscore := false, strings.Contains(strings.Trim(tok, "_"), "_")
	for i, c := range tok {
		if i > 0 && unicode.IsUpper(c) {
			hasUpperInside = true
		}
	}
	hasDigit := strings.ContainsAny(tok, "0123456789")
	return hasUpperInside || hasUnderscore || hasDigit
}

var stopIdents = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`return public private static final function string object number boolean
	import export default extends implements interface package struct typeof instanceof continue nullptr
	include define ifndef endif unsigned integer println printf sprintf fprintf string_view override virtual
	undefined prototype constructor property arguments assert assertequals asserttrue assertfalse expected
	because should self_ isinstance options value values result results params kwargs length static_cast
	request response parameters deprecated license copyright software without warranties distributed
	limitations permissions apache version however whether therefore`) {
		stopIdents[w] = true
	}
}

// wordRe matches plain English-ish words for keyword questions.
var wordRe = regexp.MustCompile(`[A-Za-z][a-z]+`)

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for with from into that this when then than more less some none fix fixes fixed add adds added
	remove removed update updated use uses used make makes made allow support improve refactor rename move
	drop change changes handle avoid implement clean simplify introduce replace ensure correct merge pull request
	branch master main test tests testing should also only not are was were its it's can could would will unused
	missing minor typo typos small code file files comment comments docs doc readme version release bump like
	about after before again other some which while where what there their them they have has had been being
	instead just new old case cases work works working line lines back still need needs using`) {
		stopWords[w] = true
	}
}

var testBase = regexp.MustCompile(`(^test_|^tests?\.|_test\.|_tests\.|\.test\.|\.spec\.|_spec\.|Tests?\.|Spec\.|^test[A-Z])`)

func isTestPath(p string) bool {
	if testBase.MatchString(filepath.Base(p)) {
		return true
	}
	for _, d := range strings.Split(filepath.ToSlash(filepath.Dir(p)), "/") {
		switch strings.ToLower(d) {
		case "test", "tests", "__tests__", "spec", "testing", "testdata":
			return true
		}
	}
	return false
}

// isComment reports whether a code line is a comment line.
func isComment(l string) bool {
	t := strings.TrimSpace(l)
	for _, p := range []string{"//", "#", "*", "/*", `"""`, "--", ";"} {
		if strings.HasPrefix(t, p) && !strings.HasPrefix(t, "#include") && !strings.HasPrefix(t, "#define") && !strings.HasPrefix(t, "#[") {
			return true
		}
	}
	return false
}

// hasWord reports whether l has a letter or digit (not just braces).
func hasWord(l string) bool {
	return strings.IndexFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func clip(n, lo, hi int) int {
	if n < lo {
		return lo
	}
	if n > hi {
		return hi
	}
	return n
}
