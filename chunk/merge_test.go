package chunk_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
)

type mergeCase struct {
	Name   string `json:"name"`
	Code   string `json:"code"`
	Chunks []struct {
		TokenScores [][2]any `json:"token_scores"`
		Offsets     [][2]int `json:"offsets"`
		StartChar   int      `json:"start_char"`
	} `json:"chunk_results"`
	Merged        [][2]any `json:"merged_token_scores"`
	MergedOffsets [][2]int `json:"merged_offsets"`
}

func TestMergeTokenScoresPostprocessGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "postprocess_golden.json"))
	require.NoError(t, err)
	var g struct {
		MergeCases []mergeCase `json:"merge_cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	require.NotEmpty(t, g.MergeCases)
	for _, c := range g.MergeCases {
		t.Run(c.Name, func(t *testing.T) {
			var ws []chunk.WindowScores
			for _, ch := range c.Chunks {
				w := chunk.WindowScores{Start: ch.StartChar}
				for i, o := range ch.Offsets {
					w.Tokens = append(w.Tokens, chunk.Token{Start: o[0], End: o[1]})
					w.Scores = append(w.Scores, ch.TokenScores[i][1].(float64))
				}
				ws = append(ws, w)
			}
			got := chunk.MergeTokenScores(chunk.CodePointLen(c.Code), ws...)
			require.Len(t, got, len(c.Merged))
			for i, s := range got {
				assert.Equal(t, c.MergedOffsets[i], [2]int{s.Start, s.End})
				assert.Equal(t, c.Merged[i][1].(float64), s.Score, "span %d", i)
			}
		})
	}
}

// goldenWindowScores returns the per-window token scores the reference fed to
// its merge: keep probabilities (float32) for SWE-Pruner, the Viterbi path
// for the LaMR fork.
func goldenWindowScores(c goldenCase, lamr bool) []chunk.WindowScores {
	ws := make([]chunk.WindowScores, len(c.Chunks))
	for i, ch := range c.Chunks {
		w := chunk.WindowScores{Start: ch.StartChar}
		for _, o := range ch.CodeTokenOffsets {
			w.Tokens = append(w.Tokens, chunk.Token{Start: o[0], End: o[1]})
		}
		if lamr {
			w.Scores = ch.ViterbiPath
		} else {
			for _, p := range ch.KeepProbs {
				w.Scores = append(w.Scores, float64(p))
			}
		}
		ws[i] = w
	}
	return ws
}

func TestMergeModelGoldens(t *testing.T) {
	for _, file := range []string{"golden_swepruner.json", "golden_lamr.json"} {
		g := loadGolden(t, file)
		lamr := file == "golden_lamr.json"
		for _, c := range g.Cases {
			t.Run(file+"/"+c.Name, func(t *testing.T) {
				got := chunk.Merge(chunk.CodePointLen(c.Code), goldenWindowScores(c, lamr)...)
				require.Len(t, got, len(c.Merged))
				for i, s := range got {
					want := c.Merged[i]
					require.Equal(t, [2]int{int(want[0]), int(want[1])}, [2]int{s.Start, s.End}, "span %d", i)
					require.InDelta(t, want[2], s.Score, 1e-9*math.Max(1, math.Abs(want[2])), "span %d", i)
					if lamr {
						// 0/1 inputs: sums and one division are exact.
						require.Equal(t, want[2], s.Score, "span %d", i)
					}
				}
				if c.Chunked {
					// Merging the windows' scores must equal merging their
					// spans in any window order (averaging is per key).
					ws := goldenWindowScores(c, lamr)
					for i, j := 0, len(ws)-1; i < j; i, j = i+1, j-1 {
						ws[i], ws[j] = ws[j], ws[i]
					}
					rev := chunk.MergeTokenScores(chunk.CodePointLen(c.Code), ws...)
					require.Len(t, rev, len(got))
					for i := range rev {
						require.InDelta(t, got[i].Score, rev[i].Score, 1e-12)
					}
				}
			})
		}
	}
}

func TestMergeSingleWindowKeepsTokensAsIs(t *testing.T) {
	// A byte-split character gives two tokens with one span: the single
	// window path keeps both (the line aggregation lets the last one win),
	// MergeTokenScores averages them.
	w := chunk.WindowScores{
		Start:  2,
		Tokens: []chunk.Token{{Start: 1, End: 2}, {Start: 0, End: 1}, {Start: 0, End: 1}, {Start: 5, End: 9}},
		Scores: []float64{0.5, 0.2, 0.4, 1},
	}
	got := chunk.Merge(4, w)
	assert.Equal(t, []chunk.ScoredSpan{{3, 4, 0.5}, {2, 3, 0.2}, {2, 3, 0.4}, {7, 11, 1}}, got)

	merged := chunk.MergeTokenScores(4, w)
	a, b := w.Scores[1], w.Scores[2]
	require.Len(t, merged, 2)
	assert.Equal(t, chunk.ScoredSpan{Start: 2, End: 3, Score: (a + b) / 2}, merged[0])
	assert.Equal(t, chunk.ScoredSpan{Start: 3, End: 4, Score: 0.5}, merged[1])
}

func TestMergeEdges(t *testing.T) {
	assert.Empty(t, chunk.Merge(10))
	assert.Empty(t, chunk.MergeTokenScores(10))
	// More scores than tokens and the reverse: the extra ones are ignored.
	got := chunk.MergeTokenScores(10,
		chunk.WindowScores{Tokens: []chunk.Token{{Start: 0, End: 1}}, Scores: []float64{0.1, 0.9}},
		chunk.WindowScores{Start: 1, Tokens: []chunk.Token{{Start: -2, End: 0}, {Start: 0, End: 1}, {Start: 1, End: 2}}, Scores: []float64{0.3, 0.7}},
	)
	assert.Equal(t, []chunk.ScoredSpan{{0, 1, 0.1}, {1, 2, 0.7}}, got)
}

func TestDocumentScore(t *testing.T) {
	tests := []struct {
		name   string
		scores []float64
		want   float64
	}{
		{"none", nil, 0},
		{"one", []float64{0.3}, 0.3},
		{"max", []float64{0.3, 0.77, 0.5}, 0.77},
		{"NaN ignored", []float64{math.NaN(), 0.2, math.NaN()}, 0.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, chunk.DocumentScore(tt.scores...))
		})
	}
	assert.True(t, math.IsNaN(chunk.DocumentScore(math.NaN())))

	g := loadGolden(t, "golden_swepruner.json")
	for _, c := range g.Cases {
		var s []float64
		for _, ch := range c.Chunks {
			s = append(s, float64(ch.Score))
		}
		assert.InDelta(t, c.Score, chunk.DocumentScore(s...), 1e-9, c.Name)
	}
}
