package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// snip is a top-level declaration block; err lists the 0-based lines where
// the injected fault must be reported (empty for healthy code).
type snip struct {
	lines   []string
	imports []string
	err     []int
	cat     string
	phase   string // "build", "vet" or ""
	fn      string
}

// goFault is an injected fault placed in a file.
type goFault struct {
	snip
	pkg, file string // package dir and path relative to the module root
	lo, hi    int    // 1-based line range of the snippet in the file
	errAt     map[int]bool
	found     []int // output lines (1-based) that report it
	echo      []int // vet's re-reports of a build error (buildvet mode)
}

type gctx struct {
	r  *rand.Rand
	nm *namer
	d  domain
}

func (g *gctx) noun() string  { return family.Pick(g.r, g.d.nouns) }
func (g *gctx) field() string { return family.Pick(g.r, g.d.fields) }
func (g *gctx) fn(exp bool) string {
	return g.nm.fresh(func() string { return camel(exp, family.Pick(g.r, verbs), g.noun()) })
}
func (g *gctx) typ() string {
	return g.nm.fresh(func() string {
		return camel(true, g.noun(), family.Pick(g.r, []string{"", "Set", "Info", "Entry", "Spec", "Stats", "Cache", "Index"}))
	})
}

func lines(s string, kv ...string) []string {
	return strings.Split(strings.Trim(fill(s, kv...), "\n"), "\n")
}

// errLine finds the 0-based line marked with "//ERR" and strips the marker.
func marked(ls []string) ([]string, []int) {
	var at []int
	for i, l := range ls {
		if strings.HasSuffix(l, "//ERR") {
			ls[i] = strings.TrimRight(strings.TrimSuffix(l, "//ERR"), " \t")
			at = append(at, i)
		}
	}
	return ls, at
}

func mk(cat, phase, fn string, imports []string, src string, kv ...string) snip {
	ls, at := marked(lines(src, kv...))
	return snip{lines: ls, imports: imports, err: at, cat: cat, phase: phase, fn: fn}
}

// ---- healthy code ----

func goFiller(g *gctx) snip {
	fn, n, f := g.fn(g.r.IntN(3) > 0), g.noun(), g.field()
	switch g.r.IntN(8) {
	case 0:
		t := g.typ()
		return mk("", "", t, nil, `
// {T} describes one {n}.
type {T} struct {
	ID    string
	{F}   int
	Ratio float64
}

// New{T} returns a {T} with the given name.
func New{T}(name string, v int) *{T} {
	return &{T}{ID: name, {F}: v}
}`, "T", t, "n", n, "F", capitalize(f))
	case 1:
		return mk("", "", fn, nil, `
func {fn}(xs []int) int {
	total := 0
	for _, x := range xs {
		if x > 0 {
			total += x
		}
	}
	return total
}`, "fn", fn)
	case 2:
		return mk("", "", fn, []string{"strings"}, `
// {fn} joins the trimmed {n} names.
func {fn}(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strings.TrimSpace(p))
	}
	return b.String()
}`, "fn", fn, "n", n)
	case 3:
		return mk("", "", fn, []string{"fmt", "strconv", "strings"}, `
func {fn}(raw string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil {
		return 0, fmt.Errorf("parse {n} {f} %q: %w", raw, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative {f}: %d", n)
	}
	return n, nil
}`, "fn", fn, "n", n, "f", f)
	case 4:
		return mk("", "", fn, nil, `
// {fn} maps each {n} key to its first position.
func {fn}(keys []string) map[string]int {
	idx := make(map[string]int, len(keys))
	for i, k := range keys {
		if _, ok := idx[k]; !ok {
			idx[k] = i
		}
	}
	return idx
}`, "fn", fn, "n", n)
	case 5:
		return mk("", "", fn, []string{"sort"}, `
func {fn}(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}`, "fn", fn)
	case 6:
		return mk("", "", fn, nil, `
func {fn}(kind string) int {
	switch kind {
	case "{n}":
		return 1
	case "{n}/{f}":
		return 2
	default:
		return 0
	}
}`, "fn", fn, "n", n, "f", f)
	default:
		e := "Err" + capitalize(n) + "Missing"
		e = g.nm.fresh(func() string { return e })
		return mk("", "", fn, []string{"errors"}, `
var {E} = errors.New("{n} not found")

func {fn}(m map[string]int, k string) (int, error) {
	v, ok := m[k]
	if !ok {
		return 0, {E}
	}
	return v, nil
}`, "fn", fn, "n", n, "E", e)
	}
}

// ---- compile errors ----

var buildCats = []string{"unused-var", "mismatch", "concat", "argcount", "missing-return", "undefined", "assign-count", "return-type", "return-count", "no-method", "unknown-field", "not-impl"}

func goBuildFault(g *gctx, cat string) snip {
	n, f := g.noun(), g.field()
	switch cat {
	case "unused-var":
		fn := g.fn(true)
		v := g.nm.fresh(func() string {
			return camel(false, family.Pick(g.r, []string{"last", "max", "prev", "first", "count"}), capitalize(n))
		})
		return mk(cat, "build", fn, nil, `
func {fn}(xs []int) int {
	total := 0
	{v} := len(xs) //ERR
	for _, x := range xs {
		total += x
	}
	return total
}`, "fn", fn, "v", v)
	case "mismatch":
		fn := g.fn(true)
		return mk(cat, "build", fn, nil, `
func {fn}({f} int, rate float64) float64 {
	adjusted := {f} * rate //ERR
	return adjusted
}`, "fn", fn, "f", f)
	case "concat":
		fn := g.fn(true)
		return mk(cat, "build", fn, nil, `
func {fn}(id int) string {
	label := "{n}-" + id //ERR
	return label
}`, "fn", fn, "n", n)
	case "argcount":
		h, c := g.fn(false), g.fn(true)
		call := "{h}(x)"
		if g.r.IntN(2) == 0 {
			call = "{h}(x, 8, true)"
		}
		return mk(cat, "build", c, nil, `
func {h}(name string, limit int) string {
	if len(name) > limit {
		return name[:limit]
	}
	return name
}

func {c}(names []string) []string {
	out := make([]string, 0, len(names))
	for _, x := range names {
		out = append(out, `+call+`) //ERR
	}
	return out
}`, "h", h, "c", c)
	case "missing-return":
		fn := g.fn(true)
		return mk(cat, "build", fn, nil, `
func {fn}({f} int) string {
	switch {
	case {f} < 0:
		return "negative"
	case {f} == 0:
		return "empty"
	}
} //ERR`, "fn", fn, "f", f)
	case "undefined":
		fn := g.fn(true)
		u := g.nm.fresh(func() string { return camel(false, family.Pick(g.r, verbs), capitalize(f)) })
		return mk(cat, "build", fn, []string{"strings"}, `
func {fn}(s string) string {
	v := strings.TrimSpace(s)
	return {u}(v) //ERR
}`, "fn", fn, "u", u)
	case "assign-count":
		fn := g.fn(true)
		return mk(cat, "build", fn, []string{"strconv"}, `
func {fn}(raw string) int {
	{f} := strconv.Atoi(raw) //ERR
	return {f} * 2
}`, "fn", fn, "f", f)
	case "return-type":
		fn := g.fn(true)
		return mk(cat, "build", fn, []string{"strconv"}, `
func {fn}({f} int) int {
	s := strconv.Itoa({f})
	return s //ERR
}`, "fn", fn, "f", f)
	case "return-count":
		fn := g.fn(true)
		return mk(cat, "build", fn, []string{"errors"}, `
func {fn}(raw string) (int, error) {
	if raw == "" {
		return 0, errors.New("empty {n}")
	}
	return len(raw) //ERR
}`, "fn", fn, "n", n)
	case "no-method":
		t, m, o, fn := g.typ(), g.fn(true), g.fn(true), g.fn(true)
		return mk(cat, "build", fn, nil, `
type {T} struct {
	ID  string
	{F} int
}

func (x *{T}) {m}() int { return x.{F} }

func {fn}(x *{T}) int {
	return x.{o}() //ERR
}`, "T", t, "m", m, "o", o, "fn", fn, "F", capitalize(f))
	case "unknown-field":
		t, fn := g.typ(), g.fn(true)
		return mk(cat, "build", fn, nil, `
type {T} struct {
	ID  string
	{F} int
}

func {fn}(name string) {T} {
	return {T}{ID: name, {G}: 3} //ERR
}`, "T", t, "fn", fn, "F", capitalize(f), "G", capitalize(f)+"Count")
	default: // not-impl
		i := g.nm.fresh(func() string { return capitalize(n) + family.Pick(g.r, []string{"er", "Source", "Store", "Sink"}) })
		t, m1, m2 := g.typ(), g.fn(true), g.fn(true)
		return mk("not-impl", "build", t, nil, `
type {I} interface {
	{m1}() string
	{m2}(n int) error
}

type {T} struct{ n int }

func (t *{T}) {m1}() string { return "{n}" }

var _ {I} = (*{T})(nil) //ERR`, "I", i, "T", t, "m1", m1, "m2", m2, "n", n)
	}
}

// ---- vet findings ----

var vetCats = []string{"copylocks", "printf", "unreachable", "structtag", "lostcancel", "timeformat", "selfassign", "bools", "unmarshal", "stringintconv", "shift", "defers", "unusedresult", "atomic", "appends", "waitgroup", "nilfunc", "errorsas"}

func goVetFault(g *gctx, cat string) snip {
	n, f := g.noun(), g.field()
	switch cat {
	case "copylocks":
		t, m := g.typ(), g.fn(true)
		if g.r.IntN(2) == 0 {
			return mk(cat, "vet", t, []string{"sync"}, `
type {T} struct {
	mu    sync.Mutex
	{f}s map[string]int
}

func (c {T}) {m}(k string) int { //ERR
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.{f}s[k]
}`, "T", t, "m", m, "f", f)
		}
		return mk(cat, "vet", m, []string{"sync"}, `
type {T} struct {
	sync.Mutex
	{F} int
}

func {m}(all []{T}) int {
	sum := 0
	for _, c := range all { //ERR
		sum += c.{F}
	}
	return sum
}`, "T", t, "m", m, "F", capitalize(f))
	case "printf":
		fn := g.fn(true)
		switch g.r.IntN(3) {
		case 0:
			return mk(cat, "vet", fn, []string{"fmt"}, `
func {fn}(id string, {f} string) string {
	return fmt.Sprintf("{n} %s has %d {f}", id, {f}) //ERR
}`, "fn", fn, "n", n, "f", f)
		case 1:
			return mk(cat, "vet", fn, []string{"fmt"}, `
func {fn}(id string, {f} int) error {
	if {f} < 0 {
		return fmt.Errorf("{n} %s: {f} %d out of range", id) //ERR
	}
	return nil
}`, "fn", fn, "n", n, "f", f)
		default:
			return mk(cat, "vet", fn, []string{"fmt"}, `
func {fn}(xs []string) int {
	fmt.Println("loaded %d {n}s", len(xs)) //ERR
	return len(xs)
}`, "fn", fn, "n", n)
		}
	case "unreachable":
		fn := g.fn(true)
		return mk(cat, "vet", fn, []string{"fmt"}, `
func {fn}(xs []string) int {
	for i, x := range xs {
		if x == "" {
			return i
			fmt.Println("empty {n} at", i) //ERR
		}
	}
	return -1
}`, "fn", fn, "n", n)
	case "structtag":
		t := g.typ()
		a, b := f, g.field()
		if a == b {
			b += "2"
		}
		switch g.r.IntN(3) {
		case 0:
			return mk(cat, "vet", t, nil, "type {T} struct {\n\tID    string `json:\"id\"`\n\t{A} string `json:{a}` //ERR\n\tNote  string `json:\"note,omitempty\"`\n}", "T", t, "A", capitalize(a), "a", a)
		case 1:
			return mk(cat, "vet", t, nil, "type {T} struct {\n\tID    string `json:\"id\"`\n\t{B} int `json:\"{b}\"xml:\"{b}\"` //ERR\n}", "T", t, "B", capitalize(b), "b", b)
		default:
			return mk(cat, "vet", t, nil, "type {T} struct {\n\t{A} string `json:\"{a}\"`\n\t{B} string `json:\"{a}\"` //ERR\n}", "T", t, "A", capitalize(a), "a", a, "B", capitalize(b))
		}
	case "lostcancel":
		fn := g.fn(true)
		if g.r.IntN(2) == 0 {
			return mk(cat, "vet", fn, []string{"context", "time"}, `
func {fn}(parent context.Context) context.Context {
	ctx, _ := context.WithTimeout(parent, 5*time.Second) //ERR
	return ctx
}`, "fn", fn)
		}
		return mk(cat, "vet", fn, []string{"context", "errors"}, `
func {fn}(parent context.Context, ok bool) error {
	ctx, cancel := context.WithCancel(parent) //ERR
	if !ok {
		return errors.New("{n} not ready") //ERR
	}
	defer cancel()
	return ctx.Err()
}`, "fn", fn, "n", n)
	case "timeformat":
		fn := g.fn(true)
		layout := family.Pick(g.r, []string{"2006-02-01", "2006-02-01 15:04", "2006-02-01T15:04:05"})
		return mk(cat, "vet", fn, []string{"time"}, `
func {fn}(t time.Time) string {
	return t.Format("{l}") //ERR
}`, "fn", fn, "l", layout)
	case "selfassign":
		fn := g.fn(true)
		return mk(cat, "vet", fn, nil, `
func {fn}(cfg map[string]string) string {
	{f} := cfg["{f}"]
	{f} = {f} //ERR
	return {f}
}`, "fn", fn, "f", f)
	case "bools":
		fn := g.fn(true)
		return mk(cat, "vet", fn, nil, `
func {fn}(kind string) bool {
	return kind == "{n}" || kind == "{n}" //ERR
}`, "fn", fn, "n", n)
	case "unmarshal":
		fn := g.fn(true)
		return mk(cat, "vet", fn, []string{"encoding/json"}, `
func {fn}(data []byte) (map[string]any, error) {
	var out map[string]any
	err := json.Unmarshal(data, out) //ERR
	return out, err
}`, "fn", fn)
	case "stringintconv":
		fn := g.fn(true)
		return mk(cat, "vet", fn, nil, `
func {fn}(id int) string {
	return "{n}-" + string(id) //ERR
}`, "fn", fn, "n", n)
	case "shift":
		fn := g.fn(true)
		return mk(cat, "vet", fn, nil, `
func {fn}({f} int32) int32 {
	return {f} << 40 //ERR
}`, "fn", fn, "f", f)
	case "defers":
		fn := g.fn(true)
		return mk(cat, "vet", fn, []string{"log", "time"}, `
func {fn}(xs []int) int {
	start := time.Now()
	defer log.Printf("{fn} took %s", time.Since(start)) //ERR
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}`, "fn", fn)
	case "unusedresult":
		fn := g.fn(true)
		return mk(cat, "vet", fn, []string{"fmt"}, `
func {fn}(id int) string {
	key := "{n}"
	fmt.Sprintf("%s-%d", key, id) //ERR
	return key
}`, "fn", fn, "n", n)
	case "atomic":
		fn := g.fn(true)
		v := g.nm.fresh(func() string { return n + "Count" })
		return mk(cat, "vet", fn, []string{"sync/atomic"}, `
var {v} int64

func {fn}() int64 {
	{v} = atomic.AddInt64(&{v}, 1) //ERR
	return {v}
}`, "fn", fn, "v", v)
	case "appends":
		fn := g.fn(true)
		return mk(cat, "vet", fn, nil, `
func {fn}(xs []string, extra string) []string {
	xs = append(xs) //ERR
	return xs
}`, "fn", fn)
	case "waitgroup":
		fn := g.fn(true)
		return mk(cat, "vet", fn, []string{"sync"}, `
func {fn}(items []string) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for _, it := range items {
		go func() {
			wg.Add(1) //ERR
			defer wg.Done()
			mu.Lock()
			n += len(it)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return n
}`, "fn", fn)
	case "nilfunc":
		h, fn := g.fn(false), g.fn(true)
		return mk(cat, "vet", fn, nil, `
func {h}(s string) string { return s }

func {fn}() bool {
	return {h} == nil //ERR
}`, "h", h, "fn", fn)
	default: // errorsas
		fn := g.fn(true)
		return mk("errorsas", "vet", fn, []string{"errors", "os"}, `
func {fn}(err error) bool {
	var pe *os.PathError
	return errors.As(err, pe) //ERR
}`, "fn", fn)
	}
}

var catQuestions = map[string][]string{
	"unused-var":     {"Which local variables does the compiler say are declared but never used?", "Are there any variables the build rejects because nothing reads them? Where?"},
	"unused-import":  {"Which imports are unused according to the build, and in which files?", "The build complains about packages that are imported but never referenced — which files?"},
	"mismatch":       {"Where does the build fail because an integer is combined with a float?", "Which arithmetic expressions mix int and float64 and break the build?"},
	"concat":         {"Where is a string concatenated with a number, breaking compilation?", "Which lines try to glue a string prefix onto an int?"},
	"argcount":       {"Which calls pass the wrong number of arguments, and what signature was expected?", "Where is a helper called with too few or too many arguments?"},
	"missing-return": {"Which functions can reach the end without returning a value?", "Where does the compiler report a missing return?"},
	"undefined":      {"Which names does the build say are undefined?", "Is something referenced that does not exist anywhere? Where?"},
	"assign-count":   {"Where is a two-value function result assigned to a single variable?", "Which lines ignore the error result of a conversion and fail to compile?"},
	"return-type":    {"Where does a function return a value of the wrong type?", "Which return statements have a type the function signature doesn't allow?"},
	"return-count":   {"Which return statements return too few values?", "Where does a function forget to return the error value too?"},
	"no-method":      {"Which method calls fail because the type has no such method?", "Where is a method called that the struct doesn't define?"},
	"unknown-field":  {"Which struct literals set a field that doesn't exist?", "Where does the build reject a composite literal because of an unknown field?"},
	"not-impl":       {"Which type fails to satisfy an interface, and which method is missing?", "The compile-time interface assertion fails somewhere — which type and which method is missing?"},
	"copylocks":      {"At which spot is a sync.Mutex passed or assigned by value, per the analyzer?", "Point me to the lock that gets duplicated instead of shared."},
	"printf":         {"Which format strings does vet flag, and what is wrong with each?", "Where do printf-style calls have verbs that don't match their arguments?"},
	"unreachable":    {"Does vet find any unreachable code? Where?", "Which statements can never run according to vet?"},
	"structtag":      {"Which struct tags are malformed according to vet?", "What does vet say about the JSON field tags, and on which lines?"},
	"lostcancel":     {"Where does vet warn about a context that may leak because its cancel function isn't called?", "Which functions drop or forget a context's cancel function?"},
	"timeformat":     {"Some time layout string uses a bogus reference date — where, and what is the fix the analyzer suggests?", "Show me the date-layout warning and its line."},
	"selfassign":     {"Where does vet report a variable assigned to itself?", "Which line contains a self-assignment?"},
	"bools":          {"Which boolean expressions are redundant according to vet?", "Where does vet find a condition that repeats the same comparison?"},
	"unmarshal":      {"Where is JSON decoded into a non-pointer?", "Which call to the JSON decoder passes a value instead of a pointer?"},
	"stringintconv":  {"Where is an int converted to string in a way that yields a rune instead of digits?", "Which conversion does vet say produces a one-rune string?"},
	"shift":          {"Which shift is too large for its operand according to vet?", "Where does vet report a shift count that exceeds the integer's width?"},
	"defers":         {"Which deferred log call evaluates the elapsed time too early?", "Where does vet say a time.Since call is not deferred?"},
	"unusedresult":   {"Where is the result of a formatting call thrown away?", "Which call's result is computed but never used according to vet?"},
	"atomic":         {"Where is the result of an atomic add assigned back to the same variable?", "What does vet say about the atomic counter update?"},
	"appends":        {"Where is append called without any values to add?", "Which append call does nothing according to vet?"},
	"waitgroup":      {"Where is WaitGroup.Add called from inside the goroutine it is supposed to wait for?", "Which goroutine-spawning code registers with the WaitGroup too late?"},
	"nilfunc":        {"Which comparison of a function to nil is always false?", "Where does vet say a nil check on a function can never be true?"},
	"errorsas":       {"Which errors.As call has a bad second argument?", "Where is errors.As given a target that isn't a pointer to an error type?"},
}

// ---- project assembly and run ----

type goFile struct {
	pkg, rel string
	snips    []snip
	unused   string // extra unused import
	faults   []*goFault
}

func assembleGo(gf *goFile) string {
	imps := map[string]bool{}
	for _, s := range gf.snips {
		for _, i := range s.imports {
			imps[i] = true
		}
	}
	if gf.unused != "" {
		imps[gf.unused] = true
	}
	var il []string
	for i := range imps {
		il = append(il, i)
	}
	sort.Strings(il)
	out := []string{"package " + filepath.Base(gf.pkg), ""}
	if len(il) > 0 {
		out = append(out, "import (")
		for _, i := range il {
			if i == gf.unused {
				gf.faults = append(gf.faults, &goFault{snip: snip{cat: "unused-import", phase: "build", fn: i}, pkg: gf.pkg, file: gf.rel, lo: len(out) + 1, hi: len(out) + 1, errAt: map[int]bool{len(out) + 1: true}})
			}
			out = append(out, "\t\""+i+"\"")
		}
		out = append(out, ")", "")
	}
	for _, s := range gf.snips {
		lo := len(out) + 1
		out = append(out, s.lines...)
		if s.phase != "" {
			f := &goFault{snip: s, pkg: gf.pkg, file: gf.rel, lo: lo, hi: len(out), errAt: map[int]bool{}}
			for _, e := range s.err {
				f.errAt[lo+e] = true
			}
			gf.faults = append(gf.faults, f)
		}
		out = append(out, "")
	}
	return strings.Join(out[:len(out)-1], "\n") + "\n"
}

func goBin() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// goLangVersion is the running toolchain's language version ("1.N") for the
// scratch go.mod, so that an older local go never refuses the module.
func goLangVersion() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) >= 2 {
		minor := parts[1]
		if i := strings.IndexFunc(minor, func(c rune) bool { return c < '0' || c > '9' }); i >= 0 {
			minor = minor[:i]
		}
		if parts[0] != "" && minor != "" {
			return parts[0] + "." + minor
		}
	}
	return "1.22"
}

func runCmd(dir string, env []string, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

var goEnv = []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off", "GONOSUMDB=*", "GOFLAGS=-mod=mod"}

var diagRe = regexp.MustCompile(`^(?:vet: )?([\w./-]+\.go):(\d+):\d+: `)
var posnRe = regexp.MustCompile(`"posn": "` + regexp.QuoteMeta(homeDir) + `/([\w./-]+\.go):(\d+):\d+"`)

func genGo(r *rand.Rand, idx int, dir string) (*scenario, error) {
	d := pickDomain(r)
	mode := family.Pick(r, []string{"build", "build", "vet", "vet", "buildvet", "buildvet", "vetjson"})
	mod := "example.com/" + d.project
	pkgs := append([]string(nil), d.pkgs...)
	r.Shuffle(len(pkgs), func(i, j int) { pkgs[i], pkgs[j] = pkgs[j], pkgs[i] })
	pkgs = pkgs[:3+r.IntN(3)]
	// roles: "build", "vet" or "" per package
	roles := map[string]string{}
	switch mode {
	case "build":
		for i, p := range pkgs {
			if i < 1+r.IntN(3) {
				roles[p] = "build"
			}
		}
	case "vet", "vetjson":
		for i, p := range pkgs {
			if i < 2+r.IntN(3) {
				roles[p] = "vet"
			}
		}
	default:
		nb := 1 + r.IntN(2)
		for i, p := range pkgs {
			if i < nb {
				roles[p] = "build"
			} else if i < nb+1+r.IntN(3) {
				roles[p] = "vet"
			}
		}
	}
	var files []*goFile
	for _, p := range pkgs {
		g := &gctx{r: r, nm: newNamer(r), d: d}
		nf := 1 + r.IntN(3)
		fnm := newNamer(r)
		var pf []*goFile
		for i := 0; i < nf; i++ {
			name := fnm.fresh(func() string { return family.Pick(r, d.nouns) })
			gf := &goFile{pkg: p, rel: p + "/" + name + ".go"}
			for k := 0; k < 2+r.IntN(4); k++ {
				gf.snips = append(gf.snips, goFiller(g))
			}
			pf = append(pf, gf)
			files = append(files, gf)
		}
		switch roles[p] {
		case "build":
			nfault := 2 + r.IntN(4)
			used := map[string]bool{}
			for k := 0; k < nfault; k++ {
				gf := family.Pick(r, pf)
				if r.IntN(6) == 0 && gf.unused == "" {
					gf.unused = family.Pick(r, []string{"os", "bytes", "io", "unicode", "math", "net/url", "bufio"})
					continue
				}
				c := family.Pick(r, buildCats)
				if used[c] && r.IntN(2) == 0 {
					c = family.Pick(r, buildCats)
				}
				used[c] = true
				s := goBuildFault(g, c)
				pos := r.IntN(len(gf.snips) + 1)
				gf.snips = append(gf.snips[:pos], append([]snip{s}, gf.snips[pos:]...)...)
			}
		case "vet":
			nfault := 1 + r.IntN(4)
			for k := 0; k < nfault; k++ {
				gf := family.Pick(r, pf)
				s := goVetFault(g, family.Pick(r, vetCats))
				pos := r.IntN(len(gf.snips) + 1)
				gf.snips = append(gf.snips[:pos], append([]snip{s}, gf.snips[pos:]...)...)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+mod+"\n\ngo "+goLangVersion()+"\n"), 0o644); err != nil {
		return nil, err
	}
	var faults []*goFault
	for _, gf := range files {
		src := assembleGo(gf)
		if gf.unused != "" {
			// the unused import must not be used by any snippet of the file
			for _, s := range gf.snips {
				for _, i := range s.imports {
					if i == gf.unused {
						return nil, fmt.Errorf("unused import collides")
					}
				}
			}
		}
		_ = os.MkdirAll(filepath.Join(dir, gf.pkg), 0o755)
		if err := os.WriteFile(filepath.Join(dir, gf.rel), []byte(src), 0o644); err != nil {
			return nil, err
		}
		faults = append(faults, gf.faults...)
	}
	gob := goBin()
	var text string
	buildEnd := 0
	switch mode {
	case "build":
		text = runCmd(dir, goEnv, gob, "build", "./...")
		buildEnd = len(family.SplitLines(text))
	case "vet":
		text = runCmd(dir, goEnv, gob, "vet", "./...")
	case "vetjson":
		text = runCmd(dir, goEnv, gob, "vet", "-json", "./...")
	default:
		b := runCmd(dir, goEnv, gob, "build", "./...")
		buildEnd = len(family.SplitLines(b))
		text = b + runCmd(dir, goEnv, gob, "vet", "./...")
	}
	text = family.Clean(text, dir)
	ls := family.SplitLines(text)
	// attribute diagnostics to faults
	byLoc := func(file string, line int) *goFault {
		for _, f := range faults {
			if f.file == file && line >= f.lo && line <= f.hi {
				return f
			}
		}
		return nil
	}
	var cur *[]int
	for i, l := range ls {
		section := "vet"
		if i < buildEnd {
			section = "build"
		}
		if m := diagRe.FindStringSubmatch(l); m != nil {
			ln, _ := strconv.Atoi(m[2])
			f := byLoc(m[1], ln)
			if f == nil {
				return nil, fmt.Errorf("unexpected diagnostic %q", l)
			}
			cur = nil
			if f.phase == section {
				f.found = append(f.found, i+1)
				cur = &f.found
			} else if section == "vet" && f.phase == "build" {
				// vet re-reports the build error ("vet: file:line: ...")
				f.echo = append(f.echo, i+1)
				cur = &f.echo
			}
			continue
		}
		if m := posnRe.FindStringSubmatch(l); m != nil {
			ln, _ := strconv.Atoi(m[2])
			f := byLoc(m[1], ln)
			if f == nil {
				return nil, fmt.Errorf("unexpected json diagnostic %q", l)
			}
			f.found = append(f.found, i+1)
			for j := i + 1; j < len(ls) && j <= i+3; j++ {
				if strings.Contains(ls[j], `"message":`) {
					f.found = append(f.found, j+1)
					break
				}
			}
			continue
		}
		if cur != nil && strings.HasPrefix(l, "\t") {
			*cur = append(*cur, i+1)
			continue
		}
		cur = nil
	}
	for _, f := range faults {
		if len(f.found) == 0 {
			return nil, fmt.Errorf("fault %s in %s not reported", f.cat, f.file)
		}
	}
	if len(ls) > 800 {
		return nil, fmt.Errorf("output too long")
	}
	// questions
	var qs []question
	group := func(sel func(f *goFault) bool) []int {
		var g []int
		for _, f := range faults {
			if sel(f) {
				g = append(g, f.found...)
			}
		}
		return g
	}
	// groupAll also includes vet's echoes of build errors: gold for questions
	// about every message of a package, file or the whole output.
	groupAll := func(sel func(f *goFault) bool) []int {
		var g []int
		for _, f := range faults {
			if sel(f) {
				g = append(g, f.found...)
				g = append(g, f.echo...)
			}
		}
		return g
	}
	for _, p := range pkgs {
		switch roles[p] {
		case "build":
			qs = append(qs, question{ask(r, []string{
				"Compiling {p} breaks; show me each complaint from the compiler, with positions.",
				"Enumerate the compiler output lines belonging to directory {p}.",
				"Give me the full set of build failures for {p}.",
				"{p} is red in the build — every message please.",
			}, nil, "p", p), groupAll(func(f *goFault) bool { return f.pkg == p && f.phase == "build" })})
		case "vet":
			qs = append(qs, question{ask(r, []string{
				"Show every static-analysis finding emitted for {p}.",
				"Enumerate the analyzer warnings under {p} with their positions.",
				"Give me the go vet output that concerns {p}.",
			}, nil, "p", p), group(func(f *goFault) bool { return f.pkg == p && f.phase == "vet" })})
		}
	}
	fileFaults := map[string]int{}
	for _, f := range faults {
		fileFaults[f.file]++
	}
	for _, file := range sortedKeys(fileFaults) {
		if fileFaults[file] >= 2 {
			qs = append(qs, question{ask(r, []string{
				"Show me every message that points into {f}.",
				"Collect the diagnostics whose position is in {f}.",
				"I'm editing {b}; which diagnostics point at it?",
			}, nil, "f", file, "b", filepath.Base(file)), groupAll(func(f *goFault) bool { return f.file == file })})
		}
	}
	cats := map[string]bool{}
	for _, f := range faults {
		cats[f.cat] = true
	}
	for _, c := range sortedKeys(cats) {
		if tq, ok := catQuestions[c]; ok {
			qs = append(qs, question{family.Pick(r, tq), group(func(f *goFault) bool { return f.cat == c })})
		}
	}
	for _, f := range faults {
		if f.cat == "unused-import" || r.IntN(3) > 0 {
			continue
		}
		tool := "compile"
		if f.phase == "vet" {
			tool = "vet"
		}
		ff := f
		qs = append(qs, question{ask(r, []string{
			"What's wrong with {fn} according to {tool}?",
			"Why does {tool} flag {fn}, and on which line?",
		}, nil, "fn", f.fn, "tool", tool), group(func(x *goFault) bool { return x == ff })})
	}
	if mode != "vetjson" {
		all := groupAll(func(f *goFault) bool { return true })
		if len(all) <= 20 {
			qs = append(qs, question{family.Pick(r, []string{"What are all the problems reported here, with file and line?", "Give me every diagnostic in this output."}), all})
		}
	}
	path := map[string]string{"build": "go-build.txt", "vet": "go-vet.txt", "buildvet": "go-build-vet.txt", "vetjson": "go-vet-json.txt"}[mode]
	return &scenario{name: fmt.Sprintf("%s-%04d-%s", d.project, idx, mode), path: path, text: text, qs: chooseQs(r, qs, 24)}, nil
}
