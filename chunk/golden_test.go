package chunk_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// goldenFile is the part of golden_swepruner.json / golden_lamr.json these
// tests read.
type goldenFile struct {
	Cases []goldenCase `json:"cases"`
}

type goldenCase struct {
	Name                 string             `json:"name"`
	Code                 string             `json:"code"`
	Query                string             `json:"query"`
	Instruction          string             `json:"instruction"`
	BudgetInstruction    string             `json:"instruction_for_chunk_budget"`
	MaxLength            int                `json:"max_length"`
	Overlap              int                `json:"chunk_overlap_tokens"`
	PrefixText           string             `json:"prefix_text"`
	SuffixText           string             `json:"suffix_text"`
	PrefixIDs            []int32            `json:"prefix_ids"`
	SuffixIDs            []int32            `json:"suffix_ids"`
	QueryTokensForBudget int                `json:"query_tokens_for_budget"`
	CodeMaxTokens        int                `json:"code_max_tokens"`
	CodeTokenIDs         []int32            `json:"code_token_ids"`
	CodeTokenOffsets     [][2]int           `json:"code_token_offsets"`
	Chunked              bool               `json:"chunked"`
	Chunks               []goldenChunk      `json:"chunks"`
	Score                float64            `json:"score"`
	Merged               [][3]float64       `json:"merged_token_scores"`
	RawLineScores        map[string]float64 `json:"line_scores"`
}

type goldenChunk struct {
	StartChar        int       `json:"start_char"`
	EndChar          int       `json:"end_char"`
	FormattedQuery   string    `json:"formatted_query"`
	QueryIDs         []int32   `json:"query_ids"`
	InputIDs         []int32   `json:"input_ids"`
	DocStart         int       `json:"doc_start"`
	DocEnd           int       `json:"doc_end"`
	CodeTruncated    bool      `json:"code_truncated"`
	CodeTokenOffsets [][2]int  `json:"code_token_offsets"`
	KeepProbs        []float32 `json:"keep_probs"`
	ViterbiPath      []float64 `json:"viterbi_path"`
	Score            float32   `json:"score"`
}

func loadGolden(t testing.TB, name string) goldenFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", name))
	require.NoError(t, err)
	var g goldenFile
	require.NoError(t, json.Unmarshal(raw, &g))
	require.Len(t, g.Cases, 3)
	return g
}

// lineScoreMap converts the golden {"line": score} object to 1-based ints.
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
