package backbone

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Qwen3 defaults that the released SWE-Pruner checkpoint does not spell out in
// its config.json (it only names Qwen/Qwen3-Reranker-0.6B).
const (
	DefaultRopeTheta  = 1e6
	DefaultRMSNormEps = 1e-6
)

// ErrConfig is wrapped by every configuration validation error.
var ErrConfig = errors.New("invalid backbone config")

// Config holds the dimensions of a Qwen3 decoder. Dimensions are normally
// inferred from tensor shapes with [InferConfig]; the JSON tags follow the
// HuggingFace Qwen3 config names so a `backbone_config` object can override them.
type Config struct {
	HiddenSize        int     `json:"hidden_size"`
	NumLayers         int     `json:"num_hidden_layers"`
	NumHeads          int     `json:"num_attention_heads"`
	NumKVHeads        int     `json:"num_key_value_heads"`
	HeadDim           int     `json:"head_dim"`
	IntermediateSize  int     `json:"intermediate_size"`
	VocabSize         int     `json:"vocab_size"`
	RopeTheta         float64 `json:"rope_theta"`
	RMSNormEps        float64 `json:"rms_norm_eps"`
	TieWordEmbeddings *bool   `json:"tie_word_embeddings,omitempty"`
}

// Validate reports the first inconsistency in c with a message naming the field.
func (c Config) Validate() error {
	check := func(name string, v int) error {
		if v <= 0 {
			return fmt.Errorf("%w: %s must be positive, got %d", ErrConfig, name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.NumLayers},
		{"num_attention_heads", c.NumHeads}, {"num_key_value_heads", c.NumKVHeads},
		{"head_dim", c.HeadDim}, {"intermediate_size", c.IntermediateSize},
		{"vocab_size", c.VocabSize},
	} {
		if err := check(f.name, f.v); err != nil {
			return err
		}
	}
	if c.NumHeads%c.NumKVHeads != 0 {
		return fmt.Errorf("%w: num_attention_heads %d is not a multiple of num_key_value_heads %d",
			ErrConfig, c.NumHeads, c.NumKVHeads)
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("%w: head_dim %d must be even for rotary embeddings", ErrConfig, c.HeadDim)
	}
	// Both are used as float32: a value float32 cannot hold would silently
	// become Inf (Qwen3 uses 1e6 and 1e-6).
	if !(c.RopeTheta > 1 && c.RopeTheta <= math.MaxFloat32) {
		return fmt.Errorf("%w: rope_theta must be in (1, %g], got %g", ErrConfig, math.MaxFloat32, c.RopeTheta)
	}
	if !(c.RMSNormEps > 0 && c.RMSNormEps < 1) {
		return fmt.Errorf("%w: rms_norm_eps must be in (0, 1), got %g", ErrConfig, c.RMSNormEps)
	}
	if c.TieWordEmbeddings != nil && !*c.TieWordEmbeddings {
		return fmt.Errorf("%w: tie_word_embeddings=false is not supported (the document score uses the embedding rows)", ErrConfig)
	}
	return nil
}

// LayerIndices returns the hidden-state indices that SWE-Pruner's fusion reads:
// early = max(1, int(L*0.25)), middle = max(1, int(L*0.5)) and final = L, where
// index L is the final-normed output.
func (c Config) LayerIndices(earlyRatio, middleRatio float64) [3]int {
	idx := func(r float64) int { return max(1, int(float64(c.NumLayers)*r)) }
	return [3]int{idx(earlyRatio), idx(middleRatio), c.NumLayers}
}

// TensorShapes maps tensor names (relative to the backbone prefix, e.g.
// "layers.0.self_attn.q_proj.weight") to their shapes.
type TensorShapes map[string][]int

// InferConfig derives the decoder dimensions from tensor shapes, then applies
// the non-zero fields of override (a checkpoint's `backbone_config`). Shapes
// are the source of truth: an override that contradicts them is an error, so a
// mismatched config.json cannot silently mis-read the weights.
func InferConfig(shapes TensorShapes, override *Config) (Config, error) {
	get := func(name string, rank int) ([]int, error) {
		s, ok := shapes[name]
		if !ok {
			return nil, fmt.Errorf("%w: tensor %q missing", ErrConfig, name)
		}
		if len(s) != rank {
			return nil, fmt.Errorf("%w: tensor %q has rank %d, want %d", ErrConfig, name, len(s), rank)
		}
		return s, nil
	}
	var c Config
	emb, err := get("embed_tokens.weight", 2)
	if err != nil {
		return c, err
	}
	c.VocabSize, c.HiddenSize = emb[0], emb[1]
	for {
		if _, ok := shapes[fmt.Sprintf("layers.%d.input_layernorm.weight", c.NumLayers)]; !ok {
			break
		}
		c.NumLayers++
	}
	if c.NumLayers == 0 {
		return c, fmt.Errorf("%w: no decoder layers found (tensor %q missing)", ErrConfig, "layers.0.input_layernorm.weight")
	}
	qn, err := get("layers.0.self_attn.q_norm.weight", 1)
	if err != nil {
		return c, err
	}
	c.HeadDim = qn[0]
	q, err := get("layers.0.self_attn.q_proj.weight", 2)
	if err != nil {
		return c, err
	}
	k, err := get("layers.0.self_attn.k_proj.weight", 2)
	if err != nil {
		return c, err
	}
	if c.HeadDim > 0 {
		c.NumHeads, c.NumKVHeads = q[0]/c.HeadDim, k[0]/c.HeadDim
	}
	g, err := get("layers.0.mlp.gate_proj.weight", 2)
	if err != nil {
		return c, err
	}
	c.IntermediateSize = g[0]
	c.RopeTheta, c.RMSNormEps = DefaultRopeTheta, DefaultRMSNormEps
	if override != nil {
		for _, f := range []struct {
			name      string
			got, want int
		}{
			{"hidden_size", override.HiddenSize, c.HiddenSize},
			{"num_hidden_layers", override.NumLayers, c.NumLayers},
			{"num_attention_heads", override.NumHeads, c.NumHeads},
			{"num_key_value_heads", override.NumKVHeads, c.NumKVHeads},
			{"head_dim", override.HeadDim, c.HeadDim},
			{"intermediate_size", override.IntermediateSize, c.IntermediateSize},
			{"vocab_size", override.VocabSize, c.VocabSize},
		} {
			if f.got != 0 && f.got != f.want {
				return c, fmt.Errorf("%w: backbone_config %s=%d contradicts the tensor shapes (%d)",
					ErrConfig, f.name, f.got, f.want)
			}
		}
		if override.RopeTheta != 0 {
			c.RopeTheta = override.RopeTheta
		}
		if override.RMSNormEps != 0 {
			c.RMSNormEps = override.RMSNormEps
		}
		c.TieWordEmbeddings = override.TieWordEmbeddings
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, c.checkShapes(shapes)
}

// ExpectedShapes lists every backbone tensor the decoder reads with its shape.
func (c Config) ExpectedShapes() TensorShapes {
	h, q, kv := c.HiddenSize, c.NumHeads*c.HeadDim, c.NumKVHeads*c.HeadDim
	s := TensorShapes{
		"embed_tokens.weight": {c.VocabSize, h},
		"norm.weight":         {h},
	}
	for i := 0; i < c.NumLayers; i++ {
		p := fmt.Sprintf("layers.%d.", i)
		s[p+"self_attn.q_proj.weight"] = []int{q, h}
		s[p+"self_attn.k_proj.weight"] = []int{kv, h}
		s[p+"self_attn.v_proj.weight"] = []int{kv, h}
		s[p+"self_attn.o_proj.weight"] = []int{h, q}
		s[p+"self_attn.q_norm.weight"] = []int{c.HeadDim}
		s[p+"self_attn.k_norm.weight"] = []int{c.HeadDim}
		s[p+"mlp.gate_proj.weight"] = []int{c.IntermediateSize, h}
		s[p+"mlp.up_proj.weight"] = []int{c.IntermediateSize, h}
		s[p+"mlp.down_proj.weight"] = []int{h, c.IntermediateSize}
		s[p+"input_layernorm.weight"] = []int{h}
		s[p+"post_attention_layernorm.weight"] = []int{h}
	}
	return s
}

// checkShapes names every missing or mis-shaped tensor at once, so a damaged
// checkpoint is diagnosed in one run.
func (c Config) checkShapes(shapes TensorShapes) error {
	var errs []error
	want := c.ExpectedShapes()
	names := slices.Sorted(maps.Keys(want))
	for _, name := range names {
		got, ok := shapes[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("tensor %q missing", name))
		case !slices.Equal(got, want[name]):
			errs = append(errs, fmt.Errorf("tensor %q has shape %v, want %v", name, got, want[name]))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
	}
	return nil
}
