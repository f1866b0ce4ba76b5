package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
)

const goSrc = `package retry

import (
	"math"
	"time"
)

// Backoff returns the delay before the given attempt.
func Backoff(attempt int) time.Duration {
	d := math.Pow(2, float64(attempt))
	if d > 30 {
		d = 30
	}
	return time.Duration(d) * time.Second
}

// Unrelated does something else entirely.
func Unrelated(a, b int) int {
	s := 0
	for i := a; i < b; i++ {
		s += i
	}
	return s
}
`

const pySrc = `import time


class Client:
    def __init__(self, retries):
        self.retries = retries

    def backoff(self, attempt):
        delay = min(30, 2 ** attempt)
        return delay

    def unrelated(self):
        total = 0
        for i in range(10):
            total += i
        return total
`

// writeSet writes a small eval file and returns its path and cases.
func writeSet(t *testing.T) (string, []evalset.Case) {
	t.Helper()
	cases := []evalset.Case{
		{ID: "o/r@1:retry.go", Lang: "go", Path: "retry.go", Query: "Cap the backoff delay at 30 seconds", Text: goSrc, GoldLines: []int{11, 12}},
		{ID: "o/r@2:client.py", Lang: "python", Path: "client.py", Query: "compute backoff delay per attempt", Text: pySrc, GoldLines: []int{9}},
		{ID: "o/r@3:retry.go", Lang: "go", Path: "retry.go", Query: "sum the numbers in Unrelated", Text: goSrc, GoldLines: []int{21}},
	}
	return writeCases(t, "mini.jsonl", cases), cases
}

// writeCases writes cases as an eval file named name and returns its path.
func writeCases(t *testing.T, name string, cases []evalset.Case) string {
	t.Helper()
	var b bytes.Buffer
	for _, c := range cases {
		line, err := json.Marshal(c)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path
}

// runReport runs the command with args and -json, and returns the report
// it wrote and what it printed.
func runReport(t *testing.T, args ...string) (report, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"-json", out}, args...), &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(data, &rep))
	return rep, stdout.String()
}

func TestRunReport(t *testing.T) {
	path, cases := writeSet(t)
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-lines", "0.2,0.3", "-json", out, "-workers", "2", path}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	for _, m := range []string{"bm25", "first", "random", "lex+repair", "lex-raw", "line+repair", "line-raw", "recall", "parse_ok", "ms/1Ktok", "== mini  (3 cases, 3 parse-checked)"} {
		assert.Contains(t, stdout.String(), m)
	}
	assert.NotContains(t, stdout.String(), "overall", "one file: no overall table")

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Len(t, rep.Files, 1)
	assert.Equal(t, 3, rep.Overall.Cases)
	assert.Len(t, rep.Overall.Rows, 14, "7 rows × 2 ratios")
	assert.Len(t, rep.Cases, 3*14)
	require.Len(t, rep.Langs, 2, "go and python cases: a table per language")
	assert.Equal(t, []string{"lang go", "lang python"}, []string{rep.Langs[0].Name, rep.Langs[1].Name})
	assert.Equal(t, []int{2, 1}, []int{rep.Langs[0].Cases, rep.Langs[1].Cases})

	byID := map[string]evalset.Case{}
	for _, c := range cases {
		byID[c.ID] = c
	}
	for _, r := range rep.Cases {
		c := byID[r.ID]
		n := evalset.CountLines(c.Text)
		require.Equal(t, evalset.Budget(r.Ratio, n), r.K)
		want := c.Score(r.Kept)
		assert.GreaterOrEqual(t, want.LineComp, r.Metrics.OutComp, "placeholder lines are output lines too")
		if r.Method == "bm25" || r.Method == "first" || r.Method == "random" {
			assert.InDelta(t, want.LineComp, r.Metrics.OutComp, 1e-12, "a baseline's output is its kept lines")
		}
		want.OutComp = r.Metrics.OutComp
		assert.Equal(t, want, r.Metrics, "%s %s", r.Method, r.ID)
		assert.Positive(t, r.Tokens)
		switch r.Method {
		case "bm25":
			assert.Equal(t, evalset.BM25(c.Query, c.Text, r.K), r.Kept)
		case "first":
			assert.Equal(t, evalset.First(n, r.K), r.Kept)
		case "random":
			assert.Equal(t, evalset.Random(c.ID, r.Ratio, n, r.K), r.Kept)
		case "lex+repair", "line+repair":
			// Repaired output of valid code is valid code.
			assert.Equal(t, evalset.ParseClean, r.Parse, r.ID)
			assert.LessOrEqual(t, len(r.Kept), r.K+1, "budget (the library rounds half up)")
		case "lex-raw", "line-raw":
			assert.LessOrEqual(t, len(r.Kept), r.K+1)
		}
		if r.Method != "lex+repair" && r.Method != "line+repair" {
			assert.NotEqual(t, evalset.ParseUnchecked, r.Parse, "every original parses")
		}
		switch r.Method {
		case "bm25", "first", "random":
			assert.Nil(t, r.Score, "a baseline has no document score")
		default:
			// The library's Result.Score: the relevance gate's probability
			// (line rows) or the query's coverage (lexical rows).
			require.NotNil(t, r.Score, "%s %s", r.Method, r.ID)
			assert.True(t, *r.Score >= 0 && *r.Score <= 1, "%s %s: score %v", r.Method, r.ID, *r.Score)
		}
	}
	// The summary rows are the means of the per-case metrics.
	var recall float64
	var nb int
	for _, r := range rep.Cases {
		if r.Method == "bm25" && r.Ratio == 0.2 {
			recall += r.Metrics.Recall
			nb++
		}
	}
	require.Equal(t, 3, nb)
	for _, row := range rep.Overall.Rows {
		if row.Method == "bm25" && row.Ratio == 0.2 {
			assert.InDelta(t, recall/3, row.Summary.Mean.Recall, 1e-12)
		}
	}
}

func TestRunKindsAndDefaultBM25(t *testing.T) {
	cases := []evalset.Case{
		{ID: "q#1", Lang: "go", Path: "retry.go", Kind: "explain", Query: "how is the backoff delay capped?", Text: goSrc, GoldLines: []int{11, 12}},
		{ID: "q#2", Lang: "go", Path: "retry.go", Kind: "locate", Query: "where are the numbers summed?", Text: goSrc, GoldLines: []int{21}},
		{ID: "q#3", Lang: "python", Path: "client.py", Kind: "explain", Query: "what does the client compute per attempt?", Text: pySrc, GoldLines: []int{9}},
	}
	path := writeCases(t, "questions.jsonl", cases)
	rep, _ := runReport(t, "-lines", "default", "-methods", "bm25,line+repair", "-workers", "2", path)
	require.Len(t, rep.Kinds, 2)
	assert.Equal(t, []string{"kind locate", "kind explain"}, []string{rep.Kinds[0].Name, rep.Kinds[1].Name}, "README order")
	assert.Equal(t, []int{1, 2}, []int{rep.Kinds[0].Cases, rep.Kinds[1].Cases})
	// Without a budget, bm25 keeps as many lines as line+repair did.
	kept := map[string]map[string][]int{}
	for _, r := range rep.Cases {
		if kept[r.ID] == nil {
			kept[r.ID] = map[string][]int{}
		}
		kept[r.ID][r.Method] = r.Kept
	}
	require.Len(t, kept, 3)
	for id, m := range kept {
		require.Contains(t, m, "bm25", id)
		require.Contains(t, m, "line+repair", id)
		assert.Len(t, m["bm25"], len(m["line+repair"]), id)
	}
}

func TestRunModelRow(t *testing.T) {
	tiny := filepath.Join("..", "..", "testdata", "tiny-lamr")
	if _, err := os.Stat(tiny); err != nil {
		t.Skip("tiny checkpoint not found")
	}
	path, _ := writeSet(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-model", tiny, "-methods", "bm25,model+repair", "-workers", "1", path}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "lamr+repair")
	assert.Contains(t, stdout.String(), "bm25")
	assert.NotContains(t, stdout.String(), "first")
}

func TestRunErrors(t *testing.T) {
	path, _ := writeSet(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"bad share of lines", []string{"-lines", "0", path}, exitUsage, "-lines"},
		{"share of lines not a number", []string{"-lines", "0.2,x", path}, exitUsage, "-lines"},
		{"ratio is gone", []string{"-ratio", "0.2", path}, exitUsage, "-ratio is gone"},
		{"unknown method", []string{"-methods", "bm26", path}, exitUsage, "unknown row"},
		{"model row excluded", []string{"-model", "x", "-methods", "bm25", path}, exitUsage, "-model given"},
		{"bad workers", []string{"-workers", "0", path}, exitUsage, "-workers"},
		{"unknown flag", []string{"-bogus", path}, exitUsage, "bogus"},
		{"missing file", []string{filepath.Join(t.TempDir(), "none.jsonl")}, exitRuntime, "none.jsonl"},
		{"bad model", []string{"-model", t.TempDir(), path}, exitRuntime, "bad checkpoint"},
		{"json out is an eval set", []string{"-json", path}, exitUsage, "would overwrite"},
		{"json out is an input", []string{"-json", strings.TrimSuffix(path, ".jsonl") + ".json", strings.TrimSuffix(path, ".jsonl") + ".json"}, exitUsage, "is also an input"},
		{"bad json out", []string{"-methods", "first", "-json", filepath.Join(t.TempDir(), "no", "such", "dir.json"), path}, exitRuntime, "json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, stderr.String(), tc.msg)
			if tc.code == exitUsage {
				assert.Equal(t, 1, strings.Count(stderr.String(), tc.msg), "reported once: %s", stderr.String())
			}
		})
	}
}

func TestJoinKept(t *testing.T) {
	text := "a\r\nb\nc"
	assert.Equal(t, "a\r\nc", joinKept(text, []int{3, 1, 1, 9}))
	assert.Equal(t, "", joinKept(text, nil))
	assert.True(t, strings.HasSuffix(joinKept("x\ny\n", []int{2}), "y\n"))
}

// The oracle row is the bound a perfect ranking reaches through the same
// budget and repair: with a budget the gold lines and their repair fit,
// it keeps every gold line and nothing it was not made to, and its output
// parses; it runs only when named.
func TestRunOracleRow(t *testing.T) {
	path, cases := writeSet(t)
	rep, _ := runReport(t, "-methods", "oracle+repair,line+repair", "-lines", "0.6,default", path)
	byID := map[string]evalset.Case{}
	for _, c := range cases {
		byID[c.ID] = c
	}
	n := 0
	for _, r := range rep.Cases {
		if r.Method != "oracle+repair" {
			continue
		}
		n++
		assert.Equal(t, 1.0, r.Metrics.Recall, "%s at %v", r.ID, r.Ratio)
		assert.Equal(t, evalset.ParseClean, r.Parse, r.ID)
		assert.Subset(t, r.Kept, byID[r.ID].GoldLines)
		if r.Ratio > 0 {
			// (At the default a text this small comes back whole: folding
			// it would not shorten it.)
			assert.Less(t, len(r.Kept), evalset.CountLines(byID[r.ID].Text), "%s: the oracle keeps what repair needs, not everything", r.ID)
		}
	}
	assert.Equal(t, 2*len(cases), n)

	_, stdout := runReport(t, "-lines", "0.6", path)
	assert.NotContains(t, stdout, "oracle", "all rows but the bound")
}

// Tool cases get a table per family, named by their source or, in the
// trainer's dumps, by their ID's prefix, even when they come in one file;
// code cases get none.
func TestRunFamilies(t *testing.T) {
	log := "INFO start\nINFO step 1\nERROR retry budget exhausted after 5 attempts\nINFO stop\n"
	cases := []evalset.Case{
		{ID: "tool:job-log#1", Lang: "text", Path: "job.log", Kind: "tool", Source: "tool:job-log", Query: "why did the job stop retrying?", Text: log, GoldLines: []int{3}},
		{ID: "tool:grep/x-1#1", Lang: "text", Path: "grep.txt", Kind: "tool", Query: "where is the retry budget?", Text: log, GoldLines: []int{3}},
		{ID: "tool:grep/x-2#1", Lang: "text", Path: "grep.txt", Kind: "tool", Query: "when does it start?", Text: log, GoldLines: []int{1}},
		{ID: "q#1", Lang: "go", Path: "retry.go", Kind: "explain", Query: "how is the backoff delay capped?", Text: goSrc, GoldLines: []int{11, 12}},
	}
	path := writeCases(t, "mixed.jsonl", cases)
	rep, stdout := runReport(t, "-lines", "0.5", "-methods", "bm25", path)
	require.Len(t, rep.Families, 2)
	assert.Equal(t, []string{"family grep", "family job-log"}, []string{rep.Families[0].Name, rep.Families[1].Name})
	assert.Equal(t, []int{2, 1}, []int{rep.Families[0].Cases, rep.Families[1].Cases})
	assert.Contains(t, stdout, "== family grep  (2 cases", "printed though the cases come in one file")
}

// -column adds a row that ranks lines by one feature column: named after
// the column, run through the same budget, and ranking by how many query
// words a line holds keeps a line that holds them.
func TestRunColumnRow(t *testing.T) {
	cases := []evalset.Case{
		{ID: "q#1", Lang: "go", Path: "retry.go", Kind: "locate", Query: "where is the Backoff delay returned?", Text: goSrc, GoldLines: []int{8, 9}},
	}
	path := writeCases(t, "col.jsonl", cases)
	rep, stdout := runReport(t, "-lines", "0.3", "-methods", "bm25", "-column", "qcount", path)
	n := 0
	for _, r := range rep.Cases {
		if r.Method != "column+repair" {
			continue
		}
		n++
		assert.Greater(t, r.Metrics.Recall, 0.0)
	}
	assert.Equal(t, 1, n)
	assert.Contains(t, stdout, "qcount+repair")

	var stderr bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-column", "no_such_column", path}, io.Discard, &stderr))
	assert.Contains(t, stderr.String(), "not a feature column")
}
