package skimmer

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prunekit/pruner/backbone"
	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/regfile"
	"github.com/prunekit/pruner/internal/safetensors"
)

// ErrCheckpoint is wrapped by every error about a checkpoint folder that
// cannot be used: missing files, a bad config.json, missing or mis-shaped
// tensors, config values that contradict the tensors or each other,
// non-finite weights, and files that are not regular files.
var ErrCheckpoint = errors.New("bad checkpoint")

// ModelType is the `model_type` of SWE-Pruner checkpoints and of the LaMR
// fork's exports.
const ModelType = "swepruner"

// maxConfigBytes bounds config.json (the published one is 1 KB).
const maxConfigBytes = 16 << 20

// fileConfig mirrors the fields of SWE-Pruner's config.json that change the
// computation. Pointers distinguish "absent" (use the reference default) from
// an explicit value.
type fileConfig struct {
	ModelType           string           `json:"model_type"`
	CompressionHeadType string           `json:"compression_head_type"`
	UseMultiLayerFusion *bool            `json:"use_multi_layer_fusion"`
	NumHeads            *int             `json:"num_heads"`
	Bottleneck          int              `json:"bottleneck"`
	EarlyLayerRatio     *float64         `json:"early_layer_ratio"`
	MiddleLayerRatio    *float64         `json:"middle_layer_ratio"`
	NumFusionLayers     *int             `json:"num_fusion_layers"`
	NumObjectives       int              `json:"num_objectives"`
	UseMoEGating        *bool            `json:"use_moe_gating"`
	GatingType          string           `json:"gating_type"`
	UseFinalCRF         *bool            `json:"use_final_crf"`
	ObjectiveNames      []string         `json:"objective_names"`
	TorchDType          string           `json:"torch_dtype"`
	BackboneConfig      *backbone.Config `json:"backbone_config"`

	// backbone holds the fields of backbone_config that backbone.Config
	// does not model but that would change the computation.
	backbone backboneExtras
}

// backboneExtras are Qwen3 config fields that this implementation does not
// support other than at their Qwen3 defaults: a checkpoint that sets them
// otherwise is refused rather than run with different semantics.
type backboneExtras struct {
	ModelType        *string         `json:"model_type"`
	HiddenAct        *string         `json:"hidden_act"`
	AttentionBias    *bool           `json:"attention_bias"`
	UseSlidingWindow *bool           `json:"use_sliding_window"`
	RopeScaling      json.RawMessage `json:"rope_scaling"`
	LayerTypes       []string        `json:"layer_types"`
	TorchDType       string          `json:"torch_dtype"`
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
	data, err := regfile.ReadFile(path, maxConfigBytes)
	if err != nil {
		return fc, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := json.Unmarshal(data, &fc); err != nil {
		return fc, fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	var extras struct {
		Backbone *backboneExtras `json:"backbone_config"`
	}
	if err := json.Unmarshal(data, &extras); err != nil {
		return fc, fmt.Errorf("%w: %s: backbone_config: %w", ErrCheckpoint, path, err)
	}
	if extras.Backbone != nil {
		fc.backbone = *extras.Backbone
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
	if err := fc.check(); err != nil {
		return fc, fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	return fc, nil
}

// check validates the config values that do not depend on the tensors: each
// error names the field and its value.
func (fc fileConfig) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if fc.NumHeads != nil && *fc.NumHeads <= 0 {
		bad("num_heads must be positive, got %d", *fc.NumHeads)
	}
	if fc.Bottleneck < 0 {
		bad("bottleneck must be positive, got %d", fc.Bottleneck)
	}
	ratio := func(field string, r *float64) {
		if r != nil && !(*r > 0 && *r <= 1) {
			bad("%s must be in (0, 1], got %g", field, *r)
		}
	}
	ratio("early_layer_ratio", fc.EarlyLayerRatio)
	ratio("middle_layer_ratio", fc.MiddleLayerRatio)
	if early, middle := orDefault(fc.EarlyLayerRatio, 0.25), orDefault(fc.MiddleLayerRatio, 0.5); early > middle {
		bad("early_layer_ratio %g is above middle_layer_ratio %g", early, middle)
	}
	if fc.NumFusionLayers != nil && *fc.NumFusionLayers <= 0 {
		bad("num_fusion_layers must be positive, got %d", *fc.NumFusionLayers)
	}
	if fc.NumObjectives < 0 {
		bad("num_objectives must be positive, got %d", fc.NumObjectives)
	}
	if fc.TorchDType != "" {
		if _, ok := torchDTypes[fc.TorchDType]; !ok {
			bad("torch_dtype %q is not a supported float dtype (%s)", fc.TorchDType, supportedTorchDTypes())
		}
	}
	bb := fc.backbone
	if bb.TorchDType != "" {
		if _, ok := torchDTypes[bb.TorchDType]; !ok {
			bad("backbone_config.torch_dtype %q is not a supported float dtype (%s)", bb.TorchDType, supportedTorchDTypes())
		}
	}
	if bb.ModelType != nil && *bb.ModelType != "qwen3" {
		bad("backbone_config.model_type %q is not supported (only \"qwen3\")", *bb.ModelType)
	}
	if bb.HiddenAct != nil && *bb.HiddenAct != "silu" {
		bad("backbone_config.hidden_act %q is not supported (only \"silu\")", *bb.HiddenAct)
	}
	if bb.AttentionBias != nil && *bb.AttentionBias {
		bad("backbone_config.attention_bias=true is not supported (Qwen3 projections have no bias)")
	}
	if bb.UseSlidingWindow != nil && *bb.UseSlidingWindow {
		bad("backbone_config.use_sliding_window=true is not supported (full attention only)")
	}
	if s := strings.TrimSpace(string(bb.RopeScaling)); s != "" && s != "null" {
		bad("backbone_config.rope_scaling %s is not supported (only null)", s)
	}
	for i, lt := range bb.LayerTypes {
		if lt != "full_attention" {
			bad("backbone_config.layer_types[%d] %q is not supported (only \"full_attention\")", i, lt)
			break
		}
	}
	return errors.Join(errs...)
}

// torchDTypes maps the torch_dtype spellings of Hugging Face configs to the
// safetensors dtype of tensors stored in that precision.
var torchDTypes = map[string]safetensors.DType{
	"bfloat16": safetensors.BF16,
	"float16":  safetensors.F16,
	"half":     safetensors.F16,
	"float32":  safetensors.F32,
	"float":    safetensors.F32,
}

func supportedTorchDTypes() string {
	names := make([]string, 0, len(torchDTypes))
	for k := range torchDTypes {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// allowedDTypes returns the tensor dtypes a checkpoint declaring torch_dtype
// may hold: F32 always (the heads are F32 in the published checkpoint, and
// the LaMR fork exports F32 backbones), plus the declared dtype; with no
// declaration, any float dtype that converts exactly to float32.
func allowedDTypes(torchDType string) []safetensors.DType {
	if dt, ok := torchDTypes[torchDType]; ok {
		if dt == safetensors.F32 {
			return []safetensors.DType{safetensors.F32}
		}
		return []safetensors.DType{safetensors.F32, dt}
	}
	return []safetensors.DType{safetensors.F32, safetensors.BF16, safetensors.F16}
}

// checkDTypes refuses tensors whose dtype contradicts the config's
// torch_dtype: a BF16 tensor relabelled F16 in the header has the right size
// and would load as garbage. Backbone tensors follow backbone_config's
// torch_dtype when it has one, the others the top-level torch_dtype.
func (fc fileConfig) checkDTypes(names []string, dtypeOf map[string]safetensors.DType) error {
	var errs []error
	for _, name := range names {
		dt := dtypeOf[name]
		field, declared := "torch_dtype", fc.TorchDType
		if strings.HasPrefix(name, "model.backbone.") && fc.backbone.TorchDType != "" {
			field, declared = "backbone_config.torch_dtype", fc.backbone.TorchDType
		}
		allowed := allowedDTypes(declared)
		if slices.Contains(allowed, dt) {
			continue
		}
		if declared == "" {
			errs = append(errs, fmt.Errorf("tensor %q has dtype %s, not a float dtype (want one of %v)", name, dt, allowed))
		} else {
			errs = append(errs, fmt.Errorf("tensor %q has dtype %s but config %s is %q (want one of %v)", name, dt, field, declared, allowed))
		}
		if len(errs) == 5 {
			errs = append(errs, errors.New("(further dtype errors omitted)"))
			break
		}
	}
	return errors.Join(errs...)
}

// maxObjectives bounds num_objectives: the papers use 2 (semantic and
// dependency rubrics); a head with more than this many is no checkpoint of
// theirs, and the count sizes work before the tensors are compared.
const maxObjectives = 64

func orDefault[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
