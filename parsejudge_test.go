package pruner

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/syntax"
)

// Parse validity judged by each language's own front end (issue 11, item
// 5): Go with go/parser (in process, what gofmt -e uses), Python with
// ast.parse in one python3 process per batch, JavaScript with V8 through
// one node process per batch (vm.compileFunction with the CommonJS
// wrapper's parameters, which is what `node --check` does for a .js file;
// a file node rejects is confirmed with `node --check` itself), and
// tree-sitter (no ERROR or MISSING node) for TypeScript, Rust and Java,
// which have no front end on this machine.
//
// Every case of the in-repository corpus and of the dev set (where
// ../shared is beside the repository) whose input the judge accepts is
// pruned with the default pipeline (Load(ctx, ""), the file name as
// language hint) at the default threshold and at line budgets, and its output must be accepted too. The
// default run checks the threshold and a 20% line budget; -long adds 10%
// and 30%, and whole files from ../shared/traindata (20 cases per Go,
// Python and JavaScript repository).

// parseJudge names the front end that judges a language.
func parseJudge(lang syntax.Language) string {
	switch lang {
	case syntax.Go:
		return "go/parser"
	case syntax.Python:
		return "python3 ast.parse"
	case syntax.JavaScript:
		return "node (V8, CommonJS wrapper)"
	}
	return "tree-sitter"
}

// judgeItem is one source text to judge; err is filled in by judgeAll
// ("" when the judge accepts it).
type judgeItem struct {
	lang syntax.Language
	src  string
	err  string
}

// judgeAll judges every item with its language's front end, one process
// per external front end. It returns the languages whose front end is
// missing (those items are left with err == "" and must be skipped).
func judgeAll(t *testing.T, items []*judgeItem) map[syntax.Language]string {
	t.Helper()
	missing := map[syntax.Language]string{}
	byLang := map[syntax.Language][]*judgeItem{}
	for _, it := range items {
		byLang[it.lang] = append(byLang[it.lang], it)
	}
	for lang, its := range byLang {
		switch lang {
		case syntax.Go:
			for _, it := range its {
				it.err = judgeGo(it.src)
			}
		case syntax.Python:
			if why := judgePython(t, its); why != "" {
				missing[lang] = why
			}
		case syntax.JavaScript:
			if why := judgeJS(t, its); why != "" {
				missing[lang] = why
			}
		default:
			for _, it := range its {
				it.err = judgeTreeSitter(lang, it.src)
			}
		}
	}
	return missing
}

func judgeGo(src string) string {
	_, err := parser.ParseFile(token.NewFileSet(), "out.go", src, parser.ParseComments|parser.AllErrors)
	if err != nil {
		return firstLine(err.Error())
	}
	return ""
}

func judgeTreeSitter(lang syntax.Language, src string) string {
	tree, err := syntax.Parse(context.Background(), lang, []byte(src))
	if err != nil {
		return err.Error()
	}
	if tree.Errors > 0 {
		for i := range tree.Nodes {
			if n := &tree.Nodes[i]; n.IsError() || n.IsMissing() {
				return fmt.Sprintf("%d ERROR/MISSING nodes, first at line %d", tree.Errors, n.StartRow+1)
			}
		}
		return fmt.Sprintf("%d ERROR/MISSING nodes", tree.Errors)
	}
	return ""
}

// writeBatch writes the items' sources as dir/<index><ext>.
func writeBatch(t *testing.T, its []*judgeItem, ext string) string {
	dir := t.TempDir()
	for i, it := range its {
		require.NoError(t, os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+ext), []byte(it.src), 0o600))
	}
	return dir
}

// readVerdicts parses "<index>\t<error>" lines into the items.
func readVerdicts(t *testing.T, its []*judgeItem, out []byte) {
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		k, msg, ok := strings.Cut(line, "\t")
		i, err := strconv.Atoi(k)
		require.True(t, ok && err == nil && i >= 0 && i < len(its), "bad verdict line %q", line)
		if msg == "" {
			msg = "rejected"
		}
		its[i].err = msg
	}
}

const pythonJudge = `
import ast, os, sys
d = sys.argv[1]
for name in sorted(os.listdir(d), key=lambda n: int(n.split('.')[0])):
    with open(os.path.join(d, name), 'rb') as f:
        src = f.read()
    try:
        ast.parse(src)
    except (SyntaxError, ValueError) as e:
        msg = '%s: %s (line %s)' % (type(e).__name__, getattr(e, 'msg', e), getattr(e, 'lineno', '?'))
        print('%s\t%s' % (name.split('.')[0], msg.replace('\n', ' ').replace('\t', ' ')))
`

func judgePython(t *testing.T, its []*judgeItem) string {
	py, err := exec.LookPath("python3")
	if err != nil {
		return "python3 not found: " + err.Error()
	}
	dir := writeBatch(t, its, ".py")
	out, err := exec.Command(py, "-c", pythonJudge, dir).Output()
	require.NoError(t, err, "python3 judge: %s", stderrOf(err))
	readVerdicts(t, its, out)
	return ""
}

// jsJudge compiles each file as `node --check` does for a CommonJS .js
// file: vm.compileFunction with the module wrapper's parameters.
const jsJudge = `
const fs = require('fs'), path = require('path'), vm = require('vm');
const d = process.argv[process.argv.length - 1];
const names = fs.readdirSync(d).sort((a, b) => parseInt(a) - parseInt(b));
for (const name of names) {
  const src = fs.readFileSync(path.join(d, name), 'utf8');
  try {
    vm.compileFunction(src, ['exports', 'require', 'module', '__filename', '__dirname'], {filename: name});
  } catch (e) {
    process.stdout.write(parseInt(name) + '\t' + String(e).replace(/[\t\n]/g, ' ') + '\n');
  }
}
`

func judgeJS(t *testing.T, its []*judgeItem) string {
	node, err := exec.LookPath("node")
	if err != nil {
		return "node not found: " + err.Error()
	}
	dir := writeBatch(t, its, ".js")
	out, err := exec.Command(node, "-e", jsJudge, dir).Output()
	require.NoError(t, err, "node judge: %s", stderrOf(err))
	readVerdicts(t, its, out)
	// Confirm each rejection with node --check itself (few files).
	for i, it := range its {
		if it.err == "" {
			continue
		}
		cmd := exec.Command(node, "--check", filepath.Join(dir, strconv.Itoa(i)+".js"))
		msg, err := cmd.CombinedOutput()
		if err == nil {
			if esmOnly(it.err) {
				// An ES module: the CommonJS wrapper rejects import and
				// export, while node --check detects module syntax (Node
				// 20.19 and later) and checks it as a module.
				t.Logf("node --check accepts an ES module (%s)", it.err)
			} else {
				t.Errorf("node --check accepts a file the batch judge rejects (%s); trusting node --check", it.err)
			}
			it.err = ""
		} else if len(msg) == 0 {
			it.err += " (node --check: " + err.Error() + ")"
		}
	}
	return ""
}

// esmOnly reports whether a batch judge's error is one that only module
// syntax under the CommonJS wrapper gives.
func esmOnly(msg string) bool {
	return strings.Contains(msg, "Cannot use import statement outside a module") ||
		strings.Contains(msg, "Unexpected token 'export'") ||
		strings.Contains(msg, "Cannot use 'import.meta' outside a module")
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func firstLine(s string) string {
	if k := strings.IndexByte(s, '\n'); k >= 0 {
		return s[:k]
	}
	return s
}

// parseSetting is one way of running the pipeline.
type parseSetting struct {
	name string
	opts []Option
}

func TestParseValidityByFrontEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("prunes the dev set")
	}
	settings := []parseSetting{{"default", nil}, {"lines=0.2", []Option{WithLineBudget(0.2)}}}
	if *long {
		settings = append(settings,
			parseSetting{"lines=0.1", []Option{WithLineBudget(0.1)}},
			parseSetting{"lines=0.3", []Option{WithLineBudget(0.3)}})
	}
	files := corpusFiles(t, "evalsets/dev")
	if *long {
		files = append(files, trainSample(t, 20, "go_", "python_", "javascript_")...)
	}
	type devCase struct {
		c    evalset.Case
		lang syntax.Language
		in   *judgeItem
	}
	var cases []devCase
	var inputs []*judgeItem
	for _, f := range files {
		for _, c := range f.Cases {
			lang := syntax.Detect(c.Text, c.Path)
			if !lang.IsCode() {
				continue
			}
			in := &judgeItem{lang: lang, src: c.Text}
			cases = append(cases, devCase{c, lang, in})
			inputs = append(inputs, in)
		}
	}
	missing := judgeAll(t, inputs)
	for lang, why := range missing {
		t.Logf("SKIP %s: %s", lang, why)
	}

	ctx := context.Background()
	base, err := Load(ctx, "")
	require.NoError(t, err)
	type outItem struct {
		setting string
		c       *devCase
		res     *Result
		item    *judgeItem
	}
	var outs []*outItem
	var outputs []*judgeItem
	for _, s := range settings {
		for i := range cases {
			dc := &cases[i]
			if _, skip := missing[dc.lang]; skip || dc.in.err != "" {
				continue
			}
			p, err := base.With(append([]Option{WithFileName(dc.c.Path)}, s.opts...)...)
			require.NoError(t, err)
			res, err := p.Prune(ctx, dc.c.Query, dc.c.Text)
			require.NoError(t, err, dc.c.ID)
			it := &judgeItem{lang: dc.lang, src: res.Text}
			outs = append(outs, &outItem{s.name, dc, res, it})
			outputs = append(outputs, it)
		}
	}
	judgeAll(t, outputs)

	// Rates per language and setting.
	type key struct {
		lang    syntax.Language
		setting string
	}
	checked, ok := map[key]int{}, map[key]int{}
	inCases, inParse := map[syntax.Language]int{}, map[syntax.Language]int{}
	for _, dc := range cases {
		inCases[dc.lang]++
		if dc.in.err == "" {
			inParse[dc.lang]++
		}
	}
	dump := os.Getenv("PARSECHECK_DUMP")
	var failures []string
	for _, o := range outs {
		k := key{o.c.lang, o.setting}
		checked[k]++
		if o.item.err == "" {
			ok[k]++
			continue
		}
		failures = append(failures, fmt.Sprintf("%s [%s] %s: %s", o.c.lang, o.setting, o.c.c.ID, o.item.err))
		if dump != "" {
			name := strings.NewReplacer("/", "_", ":", "_", "@", "_").Replace(o.c.c.ID) + "." + o.setting + ".txt"
			body := fmt.Sprintf("%s\n%s\n----\n%s", o.c.c.ID, o.item.err, o.res.Text)
			require.NoError(t, os.MkdirAll(dump, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dump, name), []byte(body), 0o644))
		}
	}
	var langs []syntax.Language
	for l := range inCases {
		langs = append(langs, l)
	}
	sort.Slice(langs, func(i, j int) bool { return langs[i] < langs[j] })
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "language\tjudge\tinputs parsing\t")
	for _, s := range settings {
		fmt.Fprintf(tw, "%s\t", s.name)
	}
	fmt.Fprintln(tw)
	for _, l := range langs {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t", l, parseJudge(l), inParse[l], inCases[l])
		for _, s := range settings {
			k := key{l, s.name}
			if checked[k] == 0 {
				fmt.Fprint(tw, "-\t")
				continue
			}
			fmt.Fprintf(tw, "%d/%d\t", ok[k], checked[k])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	t.Logf("outputs accepted by the language's own front end:\n%s", b.String())
	sort.Strings(failures)
	for _, f := range failures {
		t.Errorf("output rejected: %s", f)
	}
}

// TestParseValidityRandomMasks goes beyond the model's choices: random keep
// masks (a few lines to most of the file) over every dev input the judge
// accepts, repaired with astrepair at 0 and 1 dependency hops and
// rendered, must be accepted by the same front ends.
func TestParseValidityRandomMasks(t *testing.T) {
	if testing.Short() {
		t.Skip("judges many files")
	}
	masks := 4
	if *long {
		masks = 16
	}
	files := corpusFiles(t, "evalsets/dev")
	if *long {
		// Whole files from the training data in the languages with their
		// own front end: the dev set's JavaScript and Python texts are
		// mostly windows that do not parse.
		files = append(files, trainSample(t, 30, "go_", "python_", "javascript_")...)
	}
	var inputs []*judgeItem
	var ids []string
	for _, f := range files {
		for _, c := range f.Cases {
			if lang := syntax.Detect(c.Text, c.Path); lang.IsCode() {
				inputs = append(inputs, &judgeItem{lang: lang, src: c.Text})
				ids = append(ids, c.ID)
			}
		}
	}
	missing := judgeAll(t, inputs)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(11, 12))
	type out struct {
		id, what string
		item     *judgeItem
	}
	var outs []out
	var items []*judgeItem
	densities := []float64{0.02, 0.1, 0.3, 0.6}
	for k, in := range inputs {
		if _, skip := missing[in.lang]; skip || in.err != "" {
			continue
		}
		a, err := astrepair.Analyze(ctx, in.src, in.lang)
		require.NoError(t, err)
		for m := 0; m < masks; m++ {
			d := densities[m%len(densities)]
			keep := make([]bool, a.Lines())
			for i := range keep {
				keep[i] = r.Float64() < d
			}
			hops := m / len(densities) % 2
			rep, err := a.Repair(ctx, keep, astrepair.WithMaxHops(hops))
			require.NoError(t, err)
			if !slices.Contains(rep.Keep, true) {
				// What a caller does with an empty mask: keep what the
				// front end needs (Go's package clause).
				for _, r := range a.Required() {
					rep.Keep[r] = true
				}
			}
			rend, err := a.Render(ctx, rep.Keep)
			require.NoError(t, err)
			it := &judgeItem{lang: in.lang, src: rend.Text}
			outs = append(outs, out{ids[k], fmt.Sprintf("mask %d density %.2f hops %d", m, d, hops), it})
			items = append(items, it)
		}
	}
	judgeAll(t, items)
	dump := os.Getenv("PARSECHECK_DUMP")
	bad := map[syntax.Language]int{}
	total := map[syntax.Language]int{}
	for i, o := range outs {
		total[o.item.lang]++
		if o.item.err == "" {
			continue
		}
		bad[o.item.lang]++
		t.Errorf("%s %s (%s): %s", o.item.lang, o.id, o.what, o.item.err)
		if dump != "" {
			require.NoError(t, os.MkdirAll(dump, 0o755))
			body := fmt.Sprintf("%s %s\n%s\n----\n%s", o.id, o.what, o.item.err, o.item.src)
			require.NoError(t, os.WriteFile(filepath.Join(dump, fmt.Sprintf("mask-%04d.txt", i)), []byte(body), 0o644))
		}
	}
	for l, n := range total {
		t.Logf("%s (%s): %d/%d random-mask outputs accepted", l, parseJudge(l), n-bad[l], n)
	}
}

// trainSample reads the first n cases of each ../shared/traindata file
// whose name starts with one of prefixes.
func trainSample(t *testing.T, n int, prefixes ...string) []evalset.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "shared", "traindata", "*.jsonl.gz"))
	require.NoError(t, err)
	var out []evalset.File
	for _, p := range paths {
		base := filepath.Base(p)
		if !slices.ContainsFunc(prefixes, func(pre string) bool { return strings.HasPrefix(base, pre) }) {
			continue
		}
		fh, err := os.Open(p)
		require.NoError(t, err)
		zr, err := gzip.NewReader(fh)
		require.NoError(t, err)
		var cases []evalset.Case
		dec := json.NewDecoder(zr)
		for len(cases) < n && dec.More() {
			var c evalset.Case
			require.NoError(t, dec.Decode(&c), p)
			cases = append(cases, c)
		}
		require.NoError(t, fh.Close())
		out = append(out, evalset.File{Path: p, Name: base, Cases: cases})
	}
	if len(out) == 0 {
		t.Logf("no training data under ../shared/traindata")
	}
	return out
}
