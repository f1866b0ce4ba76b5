package evalset_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/evalset"
)

// devDir is the shared dev set, next to the checkout.
func devDir() string {
	if d := os.Getenv("PRUNER_EVALSETS"); d != "" {
		return filepath.Join(d, "dev")
	}
	return filepath.Join("..", "..", "..", "shared", "evalsets", "dev")
}

func loadDev(t *testing.T) []evalset.File {
	t.Helper()
	if _, err := os.Stat(devDir()); err != nil {
		t.Skipf("dev set not found at %s (set PRUNER_EVALSETS)", devDir())
	}
	files, err := evalset.Load(devDir())
	require.NoError(t, err)
	return files
}

func TestLinesAndCount(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\n", []string{"a", ""}},
		{"a\r\nb\r\n", []string{"a\r", "b\r"}},
		{"a\rb\x0bc\u2028d\n", []string{"a\rb\x0bc\u2028d"}},
		{"\n\nx", []string{"", "", "x"}},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.text), func(t *testing.T) {
			got := evalset.Lines(tt.text)
			if tt.want == nil {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, tt.want, got)
			}
			assert.Equal(t, len(tt.want), evalset.CountLines(tt.text))
			assert.Len(t, chunk.SplitLines(tt.text), len(tt.want))
		})
	}
}

func TestRead(t *testing.T) {
	good := `{"id":"o/r@1:a.py","lang":"python","query":"q","text":"a\nb\n","gold_lines":[2],"window_start":1,"insert_only":true,"file_lines":2}` + "\n\n" +
		`{"id":"o/r@2:a.py","text":"x","gold_lines":[1]}`
	cases, err := evalset.Read(strings.NewReader(good))
	require.NoError(t, err)
	require.Len(t, cases, 2)
	assert.Equal(t, "o/r@1:a.py", cases[0].ID)
	assert.Equal(t, []int{2}, cases[0].GoldLines)
	assert.True(t, cases[0].InsertOnly)
	assert.Equal(t, 2, cases[0].FileLines)
	assert.Equal(t, []string{"a", "b"}, cases[0].Lines())

	for name, bad := range map[string]string{
		"not json":     "{",
		"no id":        `{"text":"a","gold_lines":[1]}`,
		"gold too far": `{"id":"x","text":"a\n","gold_lines":[2]}`,
		"gold zero":    `{"id":"x","text":"a\n","gold_lines":[0]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := evalset.Read(strings.NewReader(bad))
			assert.ErrorIs(t, err, evalset.ErrFormat)
		})
	}
	_, err = evalset.Load(filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
	_, err = evalset.Load(t.TempDir())
	assert.Error(t, err, "a directory without *.jsonl")
}

func TestScore(t *testing.T) {
	lines := []string{"ab", "", "héllo", "x\r"} // chars+newline: 3 1 6 3 = 13
	tests := []struct {
		name string
		gold []int
		kept []int
		want evalset.Metrics
	}{
		{"nothing kept", []int{1}, nil, evalset.Metrics{LineComp: 1, CharComp: 1}},
		{"all gold", []int{1, 3}, []int{3, 1}, evalset.Metrics{Recall: 1, Hit: 1, Precision: 1, F1: 1, LineComp: 0.5, CharComp: 1 - 9.0/13}},
		{"half", []int{1, 3}, []int{1, 2}, evalset.Metrics{Recall: 0.5, Precision: 0.5, F1: 0.5, LineComp: 0.5, CharComp: 1 - 4.0/13}},
		{"duplicates and out of range", []int{4}, []int{4, 4, 0, 9, -1}, evalset.Metrics{Recall: 1, Hit: 1, Precision: 1, F1: 1, LineComp: 0.75, CharComp: 1 - 3.0/13}},
		{"everything", []int{2}, []int{1, 2, 3, 4}, evalset.Metrics{Recall: 1, Hit: 1, Precision: 0.25, F1: 0.4, LineComp: 0, CharComp: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := evalset.Score(lines, tt.gold, tt.kept)
			assert.InDelta(t, tt.want.Recall, got.Recall, 1e-12)
			assert.InDelta(t, tt.want.Hit, got.Hit, 1e-12)
			assert.InDelta(t, tt.want.Precision, got.Precision, 1e-12)
			assert.InDelta(t, tt.want.F1, got.F1, 1e-12)
			assert.InDelta(t, tt.want.LineComp, got.LineComp, 1e-12)
			assert.InDelta(t, tt.want.CharComp, got.CharComp, 1e-12)
		})
	}
	assert.Equal(t, evalset.Metrics{Hit: 1, CharComp: 1}, evalset.Score(nil, nil, nil), "empty text: Python's 0.0 line_comp, 1-0/1 char_comp")
}

func TestSummarize(t *testing.T) {
	obs := []evalset.Observation{
		{Metrics: evalset.Metrics{Recall: 1, Hit: 1}, Parse: evalset.ParseClean, Tokens: 1000, Elapsed: 30 * time.Millisecond},
		{Metrics: evalset.Metrics{Recall: 0.5}, Parse: evalset.ParseErrors, Tokens: 3000, Elapsed: 50 * time.Millisecond},
		{Metrics: evalset.Metrics{}, Parse: evalset.ParseUnchecked},
		{Metrics: evalset.Metrics{Recall: 0.5, LineComp: 0.8}, Parse: evalset.ParseClean},
	}
	s := evalset.Summarize(obs)
	assert.Equal(t, 4, s.Cases)
	assert.InDelta(t, 0.5, s.Mean.Recall, 1e-12)
	assert.InDelta(t, 0.25, s.Mean.Hit, 1e-12)
	assert.InDelta(t, 0.2, s.Mean.LineComp, 1e-12)
	assert.Equal(t, 3, s.ParseChecked)
	assert.InDelta(t, 2.0/3, s.ParseClean, 1e-12)
	assert.Equal(t, 4000, s.Tokens)
	assert.Equal(t, 80*time.Millisecond, s.Elapsed)
	assert.InDelta(t, 20.0, s.MsPer1KTokens, 1e-9)

	empty := evalset.Summarize(nil)
	assert.Zero(t, empty.Cases)
	assert.Zero(t, empty.ParseClean)
	assert.Zero(t, empty.MsPer1KTokens)
}

func TestBudgetFirst(t *testing.T) {
	tests := []struct {
		r    float64
		n, k int
	}{
		{0.1, 45, 4}, // 4.5 rounds to even
		{0.1, 55, 6}, // 5.5 rounds to even
		{0.2, 40, 8},
		{0.01, 40, 1}, // at least one line
		{2, 10, 10},   // at most n
		{0.2, 0, 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.k, evalset.Budget(tt.r, tt.n), "r=%v n=%d", tt.r, tt.n)
	}
	assert.Equal(t, []int{1, 2, 3}, evalset.First(10, 3))
	assert.Equal(t, []int{1, 2}, evalset.First(2, 5))
	assert.Empty(t, evalset.First(5, -1))
}

func TestRandomMatchesCPython(t *testing.T) {
	var ref struct {
		Sample []struct {
			ID   string  `json:"id"`
			R    float64 `json:"r"`
			N    int     `json:"n"`
			K    int     `json:"k"`
			Want []int   `json:"want"`
		} `json:"sample"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "random_ref.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ref))
	require.NotEmpty(t, ref.Sample)
	for _, s := range ref.Sample {
		t.Run(s.ID+"|"+strconv.FormatFloat(s.R, 'g', -1, 64), func(t *testing.T) {
			assert.Equal(t, s.K, evalset.Budget(s.R, s.N))
			assert.Equal(t, s.Want, evalset.Random(s.ID, s.R, s.N, s.K))
		})
	}
	assert.Len(t, evalset.Random("x", 0.5, 3, 9), 3, "k is clamped to n")
}

// devRef is baselines.py's evaluate() per dev file and overall, keyed
// "method@r" (testdata/dev_metrics.json).
type devRef map[string]map[string]map[string]float64

func evaluate(cases []evalset.Case, method string, r float64) evalset.Summary {
	obs := make([]evalset.Observation, len(cases))
	for i, c := range cases {
		n := evalset.CountLines(c.Text)
		k := evalset.Budget(r, n)
		var kept []int
		switch method {
		case "bm25":
			kept = evalset.BM25(c.Query, c.Text, k)
		case "first":
			kept = evalset.First(n, k)
		case "random":
			kept = evalset.Random(c.ID, r, n, k)
		}
		obs[i].Metrics = c.Score(kept)
	}
	return evalset.Summarize(obs)
}

func metricMap(m evalset.Metrics) map[string]float64 {
	return map[string]float64{
		"recall": m.Recall, "hit": m.Hit, "precision": m.Precision,
		"f1": m.F1, "line_comp": m.LineComp, "char_comp": m.CharComp,
	}
}

// TestBaselinesMatchReferenceOnDev runs the three baselines over the whole
// dev set and compares every metric, per file and overall, with
// baselines.py's numbers at full precision: the selections are the same
// lines, so only summation rounding may differ.
func TestBaselinesMatchReferenceOnDev(t *testing.T) {
	files := loadDev(t)
	var ref devRef
	b, err := os.ReadFile(filepath.Join("testdata", "dev_metrics.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ref))
	var all []evalset.Case
	groups := map[string][]evalset.Case{}
	for _, f := range files {
		groups[f.Name] = f.Cases
		all = append(all, f.Cases...)
	}
	groups["overall"] = all
	require.Len(t, ref, len(groups))
	for name, cases := range groups {
		for _, method := range []string{"bm25", "first", "random"} {
			for _, r := range []float64{0.1, 0.2, 0.3} {
				key := method + "@" + strconv.FormatFloat(r, 'g', -1, 64)
				want, ok := ref[name][key]
				require.True(t, ok, "%s %s", name, key)
				got := metricMap(evaluate(cases, method, r).Mean)
				for m, w := range want {
					assert.InDelta(t, w, got[m], 1e-12, "%s %s %s", name, key, m)
				}
			}
		}
	}
}

// TestBM25MatchesPrintedTable is the cross-check against the overall table
// baselines.py prints (and shared/evalsets/README.md publishes).
func TestBM25MatchesPrintedTable(t *testing.T) {
	files := loadDev(t)
	var all []evalset.Case
	for _, f := range files {
		all = append(all, f.Cases...)
	}
	require.Len(t, all, 350)
	printed := []struct {
		method string
		r      float64
		want   evalset.Metrics
	}{
		{"bm25", 0.1, evalset.Metrics{Recall: 0.419, Hit: 0.240, Precision: 0.063, F1: 0.088, LineComp: 0.900, CharComp: 0.856}},
		{"bm25", 0.2, evalset.Metrics{Recall: 0.493, Hit: 0.297, Precision: 0.040, F1: 0.063, LineComp: 0.800, CharComp: 0.729}},
		{"bm25", 0.3, evalset.Metrics{Recall: 0.542, Hit: 0.337, Precision: 0.032, F1: 0.053, LineComp: 0.700, CharComp: 0.620}},
		{"first", 0.1, evalset.Metrics{Recall: 0.088, Hit: 0.049, Precision: 0.017, F1: 0.022, LineComp: 0.900, CharComp: 0.907}},
		{"first", 0.2, evalset.Metrics{Recall: 0.171, Hit: 0.114, Precision: 0.018, F1: 0.026, LineComp: 0.800, CharComp: 0.804}},
		{"first", 0.3, evalset.Metrics{Recall: 0.248, Hit: 0.174, Precision: 0.019, F1: 0.029, LineComp: 0.700, CharComp: 0.700}},
		{"random", 0.1, evalset.Metrics{Recall: 0.092, Hit: 0.026, Precision: 0.022, F1: 0.026, LineComp: 0.900, CharComp: 0.898}},
		{"random", 0.2, evalset.Metrics{Recall: 0.181, Hit: 0.046, Precision: 0.026, F1: 0.034, LineComp: 0.800, CharComp: 0.798}},
		{"random", 0.3, evalset.Metrics{Recall: 0.316, Hit: 0.094, Precision: 0.024, F1: 0.038, LineComp: 0.700, CharComp: 0.699}},
	}
	for _, p := range printed {
		got := metricMap(evaluate(all, p.method, p.r).Mean)
		for m, w := range metricMap(p.want) {
			// The table rounds to 3 decimals.
			assert.InDelta(t, w, got[m], 0.0005+1e-9, "%s r=%v %s", p.method, p.r, m)
		}
	}
}

func TestShuffleQueries(t *testing.T) {
	files := []evalset.File{
		{Name: "a", Cases: []evalset.Case{{ID: "1", Repo: "x", Query: "qx1"}, {ID: "2", Repo: "x", Query: "qx2"}}},
		{Name: "b", Cases: []evalset.Case{{ID: "3", Repo: "y", Query: "qy1"}, {ID: "4", Repo: "z", Query: "qz1"}}},
	}
	got := evalset.ShuffleQueries(files)
	repoOf := map[string]string{"qx1": "x", "qx2": "x", "qy1": "y", "qz1": "z"}
	require.Len(t, got, 2)
	for fi, f := range got {
		require.Len(t, f.Cases, len(files[fi].Cases))
		for ci, c := range f.Cases {
			assert.Equal(t, files[fi].Cases[ci].ID, c.ID)
			assert.NotEqual(t, c.Repo, repoOf[c.Query], "case %s keeps a query of its own repository", c.ID)
		}
	}
	assert.Equal(t, "qx1", files[0].Cases[0].Query, "the input is not modified")
	assert.Equal(t, got, evalset.ShuffleQueries(files), "deterministic")

	one := []evalset.File{{Cases: []evalset.Case{{Repo: "x", Query: "q"}}}}
	assert.Equal(t, "q", evalset.ShuffleQueries(one)[0].Cases[0].Query, "no other repository: the query stays")
}
