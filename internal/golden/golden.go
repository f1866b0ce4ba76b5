// Package golden reads the PyTorch reference goldens under testdata/ (see
// the reference README for their layout). It is used by tests only.
package golden

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// File is golden_swepruner.json or golden_lamr.json.
type File struct {
	Checkpoint   string         `json:"checkpoint"`
	TokenYesID   int            `json:"token_yes_id"`
	TokenNoID    int            `json:"token_no_id"`
	LayerIndices map[string]int `json:"layer_indices"`
	Cases        []Case         `json:"cases"`
}

// Case is one end-to-end golden case.
type Case struct {
	Name                      string   `json:"name"`
	Query                     string   `json:"query"`
	Code                      string   `json:"code"`
	Instruction               string   `json:"instruction"`
	InstructionForChunkBudget string   `json:"instruction_for_chunk_budget"`
	MaxLength                 int      `json:"max_length"`
	Threshold                 float64  `json:"threshold"`
	ChunkOverlapTokens        int      `json:"chunk_overlap_tokens"`
	AlwaysKeepFirstFrags      bool     `json:"always_keep_first_frags"`
	PrefixText                string   `json:"prefix_text"`
	SuffixText                string   `json:"suffix_text"`
	PrefixIDs                 []int32  `json:"prefix_ids"`
	SuffixIDs                 []int32  `json:"suffix_ids"`
	QueryTokensForBudget      int      `json:"query_tokens_for_budget"`
	CodeMaxTokens             int      `json:"code_max_tokens"`
	CodeTokenIDs              []int32  `json:"code_token_ids"`
	CodeTokenOffsets          [][2]int `json:"code_token_offsets"`
	Chunked                   bool     `json:"chunked"`
	Chunks                    []Chunk  `json:"chunks"`

	Score               float64            `json:"score"`
	MergedTokenScores   [][3]float64       `json:"merged_token_scores"`
	LineScores          map[string]float64 `json:"line_scores"`
	KeptLines           []int              `json:"kept_lines"`
	PrunedCode          string             `json:"pruned_code"`
	Response            Response           `json:"response"`
	KeptLinesForkNoAST  []int              `json:"kept_lines_fork_no_ast"`
	PrunedCodeForkNoAST string             `json:"pruned_code_fork_no_ast"`
	F64                 map[string]any     `json:"f64"`
}

// Response is the SWE-Pruner HTTP response the reference service would send.
type Response struct {
	Score              float64 `json:"score"`
	KeptFrags          []int   `json:"kept_frags"`
	OriginTokenCnt     int     `json:"origin_token_cnt"`
	LeftTokenCnt       int     `json:"left_token_cnt"`
	ModelInputTokenCnt int     `json:"model_input_token_cnt"`
}

// Chunk is one model window of a case.
type Chunk struct {
	StartChar              int                    `json:"start_char"`
	EndChar                int                    `json:"end_char"`
	FormattedQuery         string                 `json:"formatted_query"`
	QueryIDs               []int32                `json:"query_ids"`
	InputIDs               []int32                `json:"input_ids"`
	DocStart               int                    `json:"doc_start"`
	DocEnd                 int                    `json:"doc_end"`
	CodeTruncated          bool                   `json:"code_truncated"`
	CodeTokenOffsets       [][2]int               `json:"code_token_offsets"`
	PerPositionArraysCover string                 `json:"per_position_arrays_cover"`
	Emissions              json.RawMessage        `json:"emissions"` // [n][2] or [n][K][2]
	KeepProbs              []float64              `json:"keep_probs"`
	LYes                   float64                `json:"l_yes"`
	LNo                    float64                `json:"l_no"`
	ScoreLogit             float64                `json:"score_logit"`
	Score                  float64                `json:"score"`
	TokenLogits            []float64              `json:"token_logits"`
	HiddenStates           map[string][][]float64 `json:"hidden_states"`
	FusedFeatures          [][]float64            `json:"fused_features"`
	GatingWeights          [][]float64            `json:"gating_weights"`
	FusedEmissions         [][]float64            `json:"fused_emissions"`
	ViterbiPath            []int                  `json:"viterbi_path"`
	ViterbiScore           float64                `json:"viterbi_score"`
	ViterbiPathTraining    []int                  `json:"viterbi_path_training_convention"`
}

// AllPositions reports whether per-position arrays cover the whole input
// (case a) rather than only the code positions [DocStart, DocEnd).
func (c Chunk) AllPositions() bool { return c.PerPositionArraysCover == "all positions" }

// EmissionsFlat returns the emissions flattened to [n*K*2] and K.
func (c Chunk) EmissionsFlat() ([]float64, int, error) {
	var two [][2]float64
	if err := json.Unmarshal(c.Emissions, &two); err == nil {
		out := make([]float64, 0, 2*len(two))
		for _, e := range two {
			out = append(out, e[0], e[1])
		}
		return out, 1, nil
	}
	var multi [][][2]float64
	if err := json.Unmarshal(c.Emissions, &multi); err != nil {
		return nil, 0, fmt.Errorf("golden: emissions: %w", err)
	}
	k := 0
	var out []float64
	for _, pos := range multi {
		k = len(pos)
		for _, e := range pos {
			out = append(out, e[0], e[1])
		}
	}
	return out, k, nil
}

// Dir returns the repository's testdata folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Load reads one golden file from testdata by base name.
func Load(name string) (*File, error) {
	data, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("golden: %s: %w", name, err)
	}
	return &f, nil
}
