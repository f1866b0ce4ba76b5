package swecompat_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/swecompat"
)

func readJSON(t testing.TB, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, v))
}

// lineScoreMap converts a golden {"line": score} object to 1-based ints.
func lineScoreMap(t testing.TB, raw map[string]float64) map[int]float64 {
	t.Helper()
	out := make(map[int]float64, len(raw))
	for k, v := range raw {
		n, err := strconv.Atoi(k)
		require.NoError(t, err)
		out[n] = v
	}
	return out
}

// assertLineScores compares line scores key by key within atol.
func assertLineScores(t *testing.T, want, got map[int]float64, atol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for line, w := range want {
		g, ok := got[line]
		require.True(t, ok, "line %d missing", line)
		assert.InDelta(t, w, g, atol, "line %d", line)
	}
}

// orEmpty turns nil into an empty slice so that JSON [] compares equal.
func orEmpty(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

type lineCase struct {
	Name            string             `json:"name"`
	Code            string             `json:"code"`
	TokenOffsets    [][2]int           `json:"token_offsets"`
	TokenScores     []float64          `json:"token_scores"`
	Threshold       float64            `json:"threshold"`
	AlwaysKeepFirst bool               `json:"always_keep_first_frags"`
	LineScores      map[string]float64 `json:"line_scores"`
	KeptLines       []int              `json:"kept_lines"`
	PrunedCode      string             `json:"pruned_code"`
	Fork            struct {
		KeptLines  []int  `json:"kept_lines"`
		PrunedCode string `json:"pruned_code"`
	} `json:"fork_no_ast"`
	PythonSplitlines []string `json:"python_splitlines"`
}

func TestPostprocessGolden(t *testing.T) {
	var g struct {
		LineCases []lineCase `json:"line_cases"`
	}
	readJSON(t, "postprocess_golden.json", &g)
	require.Len(t, g.LineCases, 11)
	for _, c := range g.LineCases {
		t.Run(c.Name, func(t *testing.T) {
			assert.Equal(t, c.PythonSplitlines, orEmptyStrings(swecompat.SplitLines(c.Code)))

			scores := swecompat.AggregateLines(c.Code, c.TokenOffsets, c.TokenScores)
			assertLineScores(t, lineScoreMap(t, c.LineScores), scores, 1e-12)

			kept, pruned := swecompat.PruneLines(c.Code, scores, c.Threshold, c.AlwaysKeepFirst)
			assert.Equal(t, c.KeptLines, orEmpty(kept))
			assert.Equal(t, c.PrunedCode, pruned)

			forkKept, forkPruned := swecompat.PruneLinesFork(c.Code, scores, c.Threshold, c.AlwaysKeepFirst, false)
			assert.Equal(t, c.Fork.KeptLines, orEmpty(forkKept))
			assert.Equal(t, c.Fork.PrunedCode, forkPruned)
		})
	}
}

func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type modelCase struct {
	Name            string             `json:"name"`
	Code            string             `json:"code"`
	Threshold       float64            `json:"threshold"`
	AlwaysKeepFirst bool               `json:"always_keep_first_frags"`
	Merged          [][3]float64       `json:"merged_token_scores"`
	LineScores      map[string]float64 `json:"line_scores"`
	KeptLines       []int              `json:"kept_lines"`
	PrunedCode      string             `json:"pruned_code"`
	Response        struct {
		KeptFrags []int `json:"kept_frags"`
	} `json:"response"`
	ForkKeptLines  []int  `json:"kept_lines_fork_no_ast"`
	ForkPrunedCode string `json:"pruned_code_fork_no_ast"`
}

// TestModelGoldensEndToEnd feeds the goldens' merged token scores through
// the whole compat post-processing.
func TestModelGoldensEndToEnd(t *testing.T) {
	for _, file := range []string{"golden_swepruner.json", "golden_lamr.json"} {
		var g struct {
			Cases []modelCase `json:"cases"`
		}
		readJSON(t, file, &g)
		require.Len(t, g.Cases, 3)
		lamr := file == "golden_lamr.json"
		for _, c := range g.Cases {
			t.Run(file+"/"+c.Name, func(t *testing.T) {
				spans := make([][2]int, len(c.Merged))
				scores := make([]float64, len(c.Merged))
				for i, m := range c.Merged {
					spans[i] = [2]int{int(m[0]), int(m[1])}
					scores[i] = m[2]
				}
				lineScores := swecompat.AggregateLines(c.Code, spans, scores)
				want := lineScoreMap(t, c.LineScores)
				assertLineScores(t, want, lineScores, 1e-9)
				// A sequential sum, as CPython 3.11's sum(), reproduces the
				// golden line scores bit for bit.
				assert.Equal(t, want, lineScores)

				kept, pruned := swecompat.PruneLines(c.Code, lineScores, c.Threshold, c.AlwaysKeepFirst)
				assert.Equal(t, c.KeptLines, kept)
				assert.Equal(t, c.Response.KeptFrags, kept)
				assert.Equal(t, c.PrunedCode, pruned)
				assert.Equal(t, c.PrunedCode, swecompat.RenderLines(c.Code, c.KeptLines))

				if lamr {
					forkKept, forkPruned := swecompat.PruneLinesFork(c.Code, lineScores, c.Threshold, c.AlwaysKeepFirst, false)
					assert.Equal(t, c.ForkKeptLines, forkKept)
					assert.Equal(t, c.ForkPrunedCode, forkPruned)
				}
			})
		}
	}
}
