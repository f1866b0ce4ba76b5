package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/linemodel"
	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

func writeCases(t *testing.T, path string, n int, split bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "linemodel", "testdata", "range.go.txt"))
	require.NoError(t, err)
	src := string(data)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := 0; i < n; i++ {
		c := map[string]any{"id": fmt.Sprintf("x/y@%d:main.go", i), "repo": "x/y", "lang": "go", "path": "main.go",
			"query": "Handle bad range headers in parseRange", "text": src, "gold_lines": []int{12}}
		if i%2 == 1 {
			c["query"], c["gold_lines"] = "atoi: multiply digits correctly", []int{21}
		}
		if split {
			c["split"] = []string{"train", "train", "train", "val"}[i%4]
		}
		b, err := json.Marshal(c)
		require.NoError(t, err)
		zw.Write(append(b, '\n'))
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// TestTrainAndEval runs the command end to end on a tiny data set: train,
// resume, evaluate on an eval directory.
func TestTrainAndEval(t *testing.T) {
	data, evalDir, out := t.TempDir(), t.TempDir(), t.TempDir()
	writeCases(t, filepath.Join(data, "go_x.jsonl.gz"), 16, true)
	writeCases(t, filepath.Join(evalDir, "go_x.jsonl.gz"), 4, false)
	ctx := context.Background()
	small := []string{"-data", data, "-out", out, "-batch", "4", "-hidden", "8,6,5", "-embed", "4", "-lr", "1e-2"}
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(ctx, append(small, "-epochs", "2"), &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "val r=0.20")
	m, err := linemodel.Load(out)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Cfg.Epochs)
	assert.Equal(t, 6, m.Cfg.Step)

	require.NoError(t, run(ctx, append(small, "-epochs", "3", "-resume"), &stdout, &stderr), stderr.String())
	m, err = linemodel.Load(out)
	require.NoError(t, err)
	assert.Equal(t, 9, m.Cfg.Step)

	stdout.Reset()
	require.NoError(t, run(ctx, []string{"-out", out, "-eval", evalDir}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "per language")
	assert.True(t, strings.Contains(stdout.String(), "\ngo "), stdout.String())
}

// TestToolData checks the committed tool-output training cases
// (examples/toolgen wrote them): every case well formed, its gold lines
// non-blank lines of its text, each scenario in one split only.
func TestToolData(t *testing.T) {
	cases, err := lmtrain.LoadDir("tooldata")
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	splitOf := map[string]string{}
	for _, c := range cases {
		require.NotEmpty(t, c.ID)
		assert.Equal(t, "text", c.Lang, c.ID)
		assert.Equal(t, "tool", c.Kind, c.ID)
		assert.NotEmpty(t, strings.TrimSpace(c.Query), c.ID)
		require.Contains(t, []string{"train", "val"}, c.Split, c.ID)
		lines := c.Lines()
		require.NotEmpty(t, c.GoldLines, c.ID)
		for i, g := range c.GoldLines {
			require.True(t, g >= 1 && g <= len(lines), "%s: gold %d of %d", c.ID, g, len(lines))
			assert.NotEmpty(t, strings.TrimSpace(lines[g-1]), "%s: gold line %d is blank", c.ID, g)
			if i > 0 {
				require.Less(t, c.GoldLines[i-1], g, c.ID)
			}
		}
		scenario, _, _ := strings.Cut(c.ID, "#")
		if s, ok := splitOf[scenario]; ok {
			assert.Equal(t, s, c.Split, "%s: one scenario, one split", c.ID)
		}
		splitOf[scenario] = c.Split
	}
}

// TestQuestionData checks the hand-labelled question cases of
// questiondata (the shipped model's) and agentdata (labelled since, not in
// the shipped mix): code of the training repositories only (none an eval
// case's source), a question kind of the question sets, gold lines that are
// non-blank lines of the text, the split of the training file the text
// comes from, and no question copied from the public question set.
// agentdata's tool-output cases ask about the texts of tooldata and take
// their split.
func TestQuestionData(t *testing.T) {
	train, err := lmtrain.LoadDir(filepath.Join("..", "..", "..", "shared", "traindata"))
	if err != nil {
		t.Logf("traindata absent (%v): the split and text checks of code cases are skipped", err)
	}
	tools, err := lmtrain.LoadDir("tooldata")
	require.NoError(t, err)
	// The traindata split is by commit; a labelled case takes the split
	// of the training case whose text it asks about.
	splitsOf := map[string]map[string]bool{}
	for _, c := range append(train, tools...) {
		if splitsOf[c.Text] == nil {
			splitsOf[c.Text] = map[string]bool{}
		}
		splitsOf[c.Text][c.Split] = true
	}
	evalRepos := map[string]bool{}
	var evalQueries []string
	for _, dir := range []string{"dev", "questions"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "evalsets", dir, "*.jsonl"))
		for _, f := range files {
			ev, err := evalset.ReadFile(f)
			require.NoError(t, err)
			for _, c := range ev.Cases {
				evalRepos[c.Repo] = true
				if src, _, ok := strings.Cut(c.Source, "@"); ok {
					evalRepos[src] = true
				}
				evalQueries = append(evalQueries, strings.ToLower(c.Query))
			}
		}
	}
	for _, tc := range []struct {
		dir              string
		minCode, minTool int
	}{
		{"questiondata", 300, 0},
		{"agentdata", 1500, 250},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			cases, err := lmtrain.LoadDir(tc.dir)
			require.NoError(t, err)
			kinds := map[string]int{}
			ids := map[string]bool{}
			code, tool := 0, 0
			for _, c := range cases {
				require.NotEmpty(t, c.ID)
				assert.False(t, ids[c.ID], "%s: duplicate id", c.ID)
				ids[c.ID] = true
				assert.True(t, strings.HasPrefix(c.Source, "labelled "), c.ID)
				require.Contains(t, []string{"train", "val"}, c.Split, c.ID)
				if c.Lang == "text" {
					tool++
					assert.Equal(t, "tool", c.Kind, c.ID)
					assert.True(t, strings.HasPrefix(c.Repo, "tool:"), c.ID)
					assert.True(t, splitsOf[c.Text][c.Split], "%s: text and split are a tooldata case's", c.ID)
				} else {
					code++
					assert.Contains(t, []string{"locate", "explain", "debug", "change", "usage"}, c.Kind, c.ID)
					assert.False(t, evalRepos[c.Repo], "%s: repository %s is an eval source", c.ID, c.Repo)
					if len(train) > 0 {
						assert.True(t, splitsOf[c.Text][c.Split], "%s: text and split are a training case's", c.ID)
					}
				}
				lines := c.Lines()
				require.NotEmpty(t, c.GoldLines, c.ID)
				assert.LessOrEqual(t, len(c.GoldLines), 25, c.ID)
				for i, g := range c.GoldLines {
					require.True(t, g >= 1 && g <= len(lines), "%s: gold %d of %d", c.ID, g, len(lines))
					assert.NotEmpty(t, strings.TrimSpace(lines[g-1]), "%s: gold line %d is blank", c.ID, g)
					if i > 0 {
						require.Less(t, c.GoldLines[i-1], g, c.ID)
					}
				}
				assert.NotContains(t, evalQueries, strings.ToLower(c.Query), c.ID)
				kinds[c.Kind]++
			}
			assert.GreaterOrEqual(t, code, tc.minCode)
			assert.GreaterOrEqual(t, tool, tc.minTool)
			t.Logf("%d cases, kinds %v", len(cases), kinds)
		})
	}
}

// TestToolDataDecontaminated fails when a training question (tooldata,
// questiondata, agentdata) equals a question of the public question sets or
// shares 8 words in a row with one.
func TestToolDataDecontaminated(t *testing.T) {
	evalFiles, _ := filepath.Glob("../../../shared/evalsets/questions/*.jsonl")
	if len(evalFiles) == 0 {
		t.Skip("the question eval sets are absent")
	}
	var evalCases []evalset.Case
	for _, f := range evalFiles {
		ev, err := evalset.ReadFile(f)
		require.NoError(t, err)
		evalCases = append(evalCases, ev.Cases...)
	}
	require.NotEmpty(t, evalCases)
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	const n = 8
	exact, runs := map[string]string{}, map[string]string{}
	for _, c := range evalCases {
		ws := words(c.Query)
		exact[strings.Join(ws, " ")] = c.ID
		for i := 0; i+n <= len(ws); i++ {
			runs[strings.Join(ws[i:i+n], " ")] = c.ID
		}
	}
	var cases []lmtrain.Case
	for _, dir := range []string{"tooldata", "questiondata", "agentdata", "suitedata", "suitenatural", "vcsnatural"} {
		cs, err := lmtrain.LoadDir(dir)
		require.NoError(t, err)
		require.NotEmpty(t, cs, dir)
		cases = append(cases, cs...)
	}
	for _, c := range cases {
		ws := words(c.Query)
		if id, ok := exact[strings.Join(ws, " ")]; ok {
			t.Errorf("%s: query %q equals eval query %s", c.ID, c.Query, id)
			continue
		}
		for i := 0; i+n <= len(ws); i++ {
			if id, ok := runs[strings.Join(ws[i:i+n], " ")]; ok {
				t.Errorf("%s: query %q shares %q with eval query %s", c.ID, c.Query, strings.Join(ws[i:i+n], " "), id)
				break
			}
		}
	}
}

func TestExtraSpec(t *testing.T) {
	for _, c := range []struct {
		spec    string
		dir     string
		repeat  int
		wantErr bool
	}{
		{"examples/train/tooldata", "examples/train/tooldata", 1, false},
		{"examples/train/questiondata:4", "examples/train/questiondata", 4, false},
		{"d:1", "d", 1, false},
		{"d:0", "", 0, true},
		{"d:x", "", 0, true},
		{"d:101", "", 0, true},
	} {
		dir, repeat, err := extraSpec(c.spec)
		if c.wantErr {
			assert.Error(t, err, c.spec)
			continue
		}
		require.NoError(t, err, c.spec)
		assert.Equal(t, c.dir, dir, c.spec)
		assert.Equal(t, c.repeat, repeat, c.spec)
	}
}

// TestNegativeCases: -negatives pairs a share of the train cases with
// another repository's query and no gold lines, deterministically.
func TestNegativeCases(t *testing.T) {
	var tr []lmtrain.Case
	for i := range 40 {
		repo := []string{"a/a", "b/b", "c/c"}[i%3]
		var c lmtrain.Case
		c.ID, c.Repo, c.Query, c.Text, c.GoldLines = fmt.Sprintf("%s#%d", repo, i), repo, "query of "+repo, "x\ny\n", []int{1}
		tr = append(tr, c)
	}
	neg := negativeCases(tr, 0.5, 1)
	require.Len(t, neg, 20)
	ids := map[string]bool{}
	for _, c := range neg {
		assert.Empty(t, c.GoldLines, c.ID)
		assert.True(t, strings.HasSuffix(c.ID, " off-topic"), c.ID)
		assert.NotEqual(t, "query of "+c.Repo, c.Query, "another repository's query")
		assert.True(t, strings.HasPrefix(c.Query, "query of "), c.Query)
		ids[c.ID] = true
	}
	assert.Len(t, ids, 20, "each case drawn once")
	assert.Equal(t, neg, negativeCases(tr, 0.5, 1), "deterministic")
	assert.NotEqual(t, neg, negativeCases(tr, 0.5, 2), "the seed draws")
	one := tr[:5]
	for i := range one {
		one[i].Repo = "a/a"
	}
	assert.Empty(t, negativeCases(one, 1, 1), "no other repository: nothing drawn")
	assert.Equal(t, []int{1}, tr[0].GoldLines, "the train cases are not changed")
	twice := append(append([]lmtrain.Case(nil), tr...), tr...)
	assert.Len(t, negativeCases(twice, 1, 1), len(tr), "a repeated case is drawn once")
}

// TestDumpVal writes the val split of a mix with every kind of case and
// checks that each lands in its own eval file: commits, labelled code
// questions and labelled tool questions (agentdata), generated tool output
// (tooldata), each read back as an eval set with all its val cases.
func TestDumpVal(t *testing.T) {
	data, dump := t.TempDir(), t.TempDir()
	writeCases(t, filepath.Join(data, "go_x.jsonl.gz"), 16, true)
	var stderr bytes.Buffer
	args := []string{"-data", data, "-out", t.TempDir(), "-extra", "tooldata,agentdata", "-dump-val", dump}
	require.NoError(t, run(context.Background(), args, io.Discard, &stderr), stderr.String())

	want := map[string]int{"commits": 4}
	for _, dir := range []string{"tooldata", "agentdata"} {
		cases, err := lmtrain.LoadDir(dir)
		require.NoError(t, err)
		for _, c := range lmtrain.Split(cases, "val") {
			switch {
			case c.Lang == "text" && strings.HasPrefix(c.Source, "labelled"):
				want["tool_labelled"]++
			case c.Lang == "text":
				want["tool"]++
			default:
				want["labelled"]++
			}
		}
	}
	require.Len(t, want, 4)
	for name, n := range want {
		ev, err := evalset.ReadFile(filepath.Join(dump, "val_"+name+".jsonl"))
		require.NoError(t, err, name)
		assert.Len(t, ev.Cases, n, name)
	}
	files, err := filepath.Glob(filepath.Join(dump, "*.jsonl"))
	require.NoError(t, err)
	assert.Len(t, files, len(want))
}
