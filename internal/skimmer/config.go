package skimmer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prunekit/pruner/backbone"
	"github.com/prunekit/pruner/crf"
)

// ErrCheckpoint is wrapped by every error about a checkpoint folder that
// cannot be used: missing files, a bad config.json, missing or mis-shaped
// tensors.
var ErrCheckpoint = errors.New("bad checkpoint")

// ModelType is the `model_type` of SWE-Pruner checkpoints and of the LaMR
// fork's exports.
const ModelType = "swepruner"

// fileConfig mirrors the fields of SWE-Pruner's config.json that change the
// computation. Pointers distinguish "absent" (use the reference default) from
// an explicit value.
type fileConfig struct {
	ModelType           string           `json:"model_type"`
	CompressionHeadType string           `json:"compression_head_type"`
	UseMultiLayerFusion *bool            `json:"use_multi_layer_fusion"`
	NumHeads            int              `json:"num_heads"`
	Bottleneck          int              `json:"bottleneck"`
	EarlyLayerRatio     *float64         `json:"early_layer_ratio"`
	MiddleLayerRatio    *float64         `json:"middle_layer_ratio"`
	NumFusionLayers     *int             `json:"num_fusion_layers"`
	NumObjectives       int              `json:"num_objectives"`
	UseMoEGating        *bool            `json:"use_moe_gating"`
	GatingType          string           `json:"gating_type"`
	UseFinalCRF         *bool            `json:"use_final_crf"`
	ObjectiveNames      []string         `json:"objective_names"`
	BackboneConfig      *backbone.Config `json:"backbone_config"`
}

// Config is the validated description of a checkpoint: backbone dimensions,
// fusion and head sizes, and the rubric layout.
type Config struct {
	Backbone        backbone.Config
	LayerIndices    [3]int // hidden-state indices fused: early, middle, final
	FusionHeads     int
	FusionLayers    int
	Bottleneck      int
	NumRubrics      int            // K: 1 = SWE-Pruner, 2 = LaMR (semantic, dependency)
	RubricNames     []string       // len K
	Gating          crf.GatingType // "" when K = 1
	HasFinalCRF     bool
	LegacyCRFPrefix string // tensor prefix of the K=1 CRF: "compression_head.crf" or "compression_head.crf_layers.0"
}

// FusedDim is the width of the fused features (3 × hidden size).
func (c Config) FusedDim() int { return 3 * c.Backbone.HiddenSize }

func readFileConfig(dir string) (fileConfig, error) {
	var fc fileConfig
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return fc, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := json.Unmarshal(data, &fc); err != nil {
		return fc, fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	if fc.ModelType != ModelType {
		return fc, fmt.Errorf("%w: %s: model_type %q, want %q", ErrCheckpoint, path, fc.ModelType, ModelType)
	}
	if fc.CompressionHeadType != "" && fc.CompressionHeadType != "crf" {
		return fc, fmt.Errorf("%w: %s: compression_head_type %q is not supported (only \"crf\")",
			ErrCheckpoint, path, fc.CompressionHeadType)
	}
	if fc.UseMultiLayerFusion != nil && !*fc.UseMultiLayerFusion {
		return fc, fmt.Errorf("%w: %s: use_multi_layer_fusion=false is not supported", ErrCheckpoint, path)
	}
	return fc, nil
}

func orDefault[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
