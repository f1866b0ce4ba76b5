package bert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prunekit/pruner/internal/regfile"
)

// ErrCheckpoint is wrapped by every error about a model folder that cannot
// be used: missing files, a config.json or sentence-transformers module
// this encoder does not compute, missing or mis-shaped tensors, values that
// contradict each other, non-finite weights, and files that are not regular
// files.
var ErrCheckpoint = errors.New("bert: bad checkpoint")

// maxConfigBytes bounds each JSON file of a model folder (MiniLM's
// config.json is 612 bytes).
const maxConfigBytes = 1 << 20

// Pooling is how token states become a sentence vector.
type Pooling string

// The pooling modes of sentence-transformers' Pooling module that Embed
// computes.
const (
	// PoolMean averages the states of the sequence's tokens ([CLS] and
	// [SEP] included), as all-MiniLM-L6-v2 does.
	PoolMean Pooling = "mean"
	// PoolCLS takes the state of the [CLS] token.
	PoolCLS Pooling = "cls"
)

// Config is the validated description of a model folder.
type Config struct {
	VocabSize     int     // rows of the word embeddings
	Hidden        int     // hidden_size
	Layers        int     // num_hidden_layers
	Heads         int     // num_attention_heads
	Intermediate  int     // intermediate_size
	MaxPositions  int     // max_position_embeddings
	TypeVocabSize int     // type_vocab_size (only type 0 is used)
	LayerNormEps  float32 // layer_norm_eps
	// MaxLength is the longest sequence Embed reads, [CLS] and [SEP]
	// included: sentence_bert_config.json's max_seq_length (else
	// max_position_embeddings), at most max_position_embeddings.
	MaxLength int
	Pooling   Pooling
}

// HeadDim is the width of one attention head.
func (c Config) HeadDim() int { return c.Hidden / c.Heads }

// fileConfig mirrors the fields of a BERT config.json that change the
// computation. Pointers tell "absent" from an explicit value.
type fileConfig struct {
	ModelType             string   `json:"model_type"`
	VocabSize             *int     `json:"vocab_size"`
	HiddenSize            *int     `json:"hidden_size"`
	NumHiddenLayers       *int     `json:"num_hidden_layers"`
	NumAttentionHeads     *int     `json:"num_attention_heads"`
	IntermediateSize      *int     `json:"intermediate_size"`
	HiddenAct             *string  `json:"hidden_act"`
	MaxPositionEmbeddings *int     `json:"max_position_embeddings"`
	TypeVocabSize         *int     `json:"type_vocab_size"`
	LayerNormEps          *float64 `json:"layer_norm_eps"`
	PositionEmbeddingType *string  `json:"position_embedding_type"`
	IsDecoder             bool     `json:"is_decoder"`
	AddCrossAttention     bool     `json:"add_cross_attention"`
}

// Bounds that keep a hostile config.json from sizing allocations before the
// tensors are compared with it (MiniLM: 384, 6, 12, 1536, 512).
const (
	maxHidden       = 1 << 14
	maxLayers       = 1 << 10
	maxIntermediate = 1 << 16
	maxPositions    = 1 << 16
)

func readJSON(path string, v any) error {
	data, err := regfile.ReadFile(path, maxConfigBytes)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	return nil
}

// readConfig reads and validates config.json and the sentence-transformers
// files beside it (modules.json, the pooling module's config.json,
// sentence_bert_config.json). Values that depend on the tensors are
// checked by resolve.
func readConfig(dir string) (Config, error) {
	var fc fileConfig
	path := filepath.Join(dir, "config.json")
	if err := readJSON(path, &fc); err != nil {
		return Config{}, err
	}
	cfg, err := fc.check()
	if err != nil {
		return cfg, fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	if cfg.Pooling, err = readPooling(dir); err != nil {
		return cfg, err
	}
	cfg.MaxLength = cfg.MaxPositions
	path = filepath.Join(dir, "sentence_bert_config.json")
	var sb struct {
		MaxSeqLength *int `json:"max_seq_length"`
	}
	switch err := readJSON(path, &sb); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return cfg, err
	case sb.MaxSeqLength != nil:
		if *sb.MaxSeqLength < 2 {
			return cfg, fmt.Errorf("%w: %s: max_seq_length %d leaves no room for [CLS] and [SEP]", ErrCheckpoint, path, *sb.MaxSeqLength)
		}
		cfg.MaxLength = min(*sb.MaxSeqLength, cfg.MaxPositions)
	}
	return cfg, nil
}

// check validates config.json's values on their own: each error names the
// field and its value.
func (fc fileConfig) check() (Config, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if fc.ModelType != "bert" {
		bad("model_type %q is not supported (only \"bert\")", fc.ModelType)
	}
	need := func(field string, v *int, limit int) int {
		switch {
		case v == nil:
			bad("%s is missing", field)
		case *v <= 0 || *v > limit:
			bad("%s must be in [1, %d], got %d", field, limit, *v)
		default:
			return *v
		}
		return 0
	}
	cfg := Config{
		Hidden:       need("hidden_size", fc.HiddenSize, maxHidden),
		Layers:       need("num_hidden_layers", fc.NumHiddenLayers, maxLayers),
		Heads:        need("num_attention_heads", fc.NumAttentionHeads, maxHidden),
		Intermediate: need("intermediate_size", fc.IntermediateSize, maxIntermediate),
		MaxPositions: need("max_position_embeddings", fc.MaxPositionEmbeddings, maxPositions),
		LayerNormEps: 1e-12,
	}
	if fc.VocabSize != nil {
		cfg.VocabSize = need("vocab_size", fc.VocabSize, math.MaxInt32)
	}
	cfg.TypeVocabSize = 2
	if fc.TypeVocabSize != nil {
		cfg.TypeVocabSize = need("type_vocab_size", fc.TypeVocabSize, math.MaxInt32)
	}
	if cfg.Hidden > 0 && cfg.Heads > 0 && cfg.Hidden%cfg.Heads != 0 {
		bad("hidden_size %d is not divisible by num_attention_heads %d", cfg.Hidden, cfg.Heads)
	}
	if cfg.MaxPositions > 0 && cfg.MaxPositions < 2 {
		bad("max_position_embeddings %d leaves no room for [CLS] and [SEP]", cfg.MaxPositions)
	}
	if fc.LayerNormEps != nil {
		// float32 LayerNorm adds eps to a variance: it must be a positive
		// float32 (1e-12 is).
		if e := *fc.LayerNormEps; !(e > 0 && e < 1 && float32(e) > 0) {
			bad("layer_norm_eps must be in (0, 1) and representable as a float32, got %g", e)
		} else {
			cfg.LayerNormEps = float32(e)
		}
	}
	if fc.HiddenAct == nil || *fc.HiddenAct != "gelu" {
		act := "<missing>"
		if fc.HiddenAct != nil {
			act = fmt.Sprintf("%q", *fc.HiddenAct)
		}
		bad("hidden_act %s is not supported (only \"gelu\", the erf form)", act)
	}
	if p := fc.PositionEmbeddingType; p != nil && *p != "absolute" {
		bad("position_embedding_type %q is not supported (only \"absolute\")", *p)
	}
	if fc.IsDecoder {
		bad("is_decoder=true is not supported (an encoder attends both ways)")
	}
	if fc.AddCrossAttention {
		bad("add_cross_attention=true is not supported")
	}
	return cfg, errors.Join(errs...)
}

// Sentence-transformers module types.
const (
	stTransformer = "sentence_transformers.models.Transformer"
	stPooling     = "sentence_transformers.models.Pooling"
	stNormalize   = "sentence_transformers.models.Normalize"
)

// readPooling finds the pooling mode: modules.json's Pooling module's
// config.json, or mean pooling for a folder without modules.json. Modules
// this encoder does not compute (Dense, a second Transformer, ...) are
// refused.
func readPooling(dir string) (Pooling, error) {
	path := filepath.Join(dir, "modules.json")
	var modules []struct {
		Path string `json:"path"`
		Type string `json:"type"`
	}
	switch err := readJSON(path, &modules); {
	case errors.Is(err, fs.ErrNotExist):
		return PoolMean, nil
	case err != nil:
		return "", err
	}
	var pooling string
	var errs []error
	for i, m := range modules {
		switch m.Type {
		case stTransformer:
			if m.Path != "" && m.Path != "." {
				errs = append(errs, fmt.Errorf("module %d: a Transformer in %q (only the folder's own model is read)", i, m.Path))
			}
		case stPooling:
			if pooling != "" {
				errs = append(errs, fmt.Errorf("module %d: a second Pooling module", i))
			}
			pooling = m.Path
		case stNormalize:
			// Embed always normalises.
		default:
			errs = append(errs, fmt.Errorf("module %d: type %q is not supported (only Transformer, Pooling, Normalize)", i, m.Type))
		}
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, errors.Join(errs...))
	}
	if pooling == "" {
		return "", fmt.Errorf("%w: %s: no %s module", ErrCheckpoint, path, stPooling)
	}
	if filepath.IsAbs(pooling) || strings.Contains(filepath.ToSlash(pooling), "..") {
		return "", fmt.Errorf("%w: %s: Pooling path %q is outside the model folder", ErrCheckpoint, path, pooling)
	}
	path = filepath.Join(dir, pooling, "config.json")
	var pc map[string]json.RawMessage
	if err := readJSON(path, &pc); err != nil {
		return "", err
	}
	var on []string
	for k, v := range pc {
		if strings.HasPrefix(k, "pooling_mode_") && string(v) == "true" {
			on = append(on, strings.TrimPrefix(k, "pooling_mode_"))
		}
	}
	slices.Sort(on)
	switch {
	case len(on) == 1 && on[0] == "mean_tokens":
		return PoolMean, nil
	case len(on) == 1 && on[0] == "cls_token":
		return PoolCLS, nil
	}
	return "", fmt.Errorf("%w: %s: pooling modes %v are not supported (exactly one of mean_tokens, cls_token)", ErrCheckpoint, path, on)
}
