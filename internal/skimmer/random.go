package skimmer

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prunekit/pruner/backbone"
	"github.com/prunekit/pruner/internal/safetensors"
)

// WriteRandom writes to dir (model.safetensors and config.json) a
// SWE-Pruner-layout checkpoint with random weights for the given backbone
// dimensions, in the released model's dtypes: the backbone in BF16, the
// fusion layers and the head in F32 (8 fusion heads, bottleneck 64,
// numRubrics CRF objectives). Benchmarks use it to load models of real size
// without the real weights.
func WriteRandom(dir string, bb backbone.Config, numRubrics int, seed int64) error {
	r := rand.New(rand.NewSource(seed))
	want := map[string][]int{}
	for name, s := range bb.ExpectedShapes() {
		want["model.backbone."+name] = s
	}
	heads8 := 8
	cfg := fileConfig{ModelType: ModelType, NumHeads: &heads8, Bottleneck: 64, NumObjectives: numRubrics}
	_, all, err := resolve(cfg, withHead(want, bb, 64, numRubrics))
	if all == nil {
		return fmt.Errorf("skimmer: random checkpoint: %w", err)
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	var ts []safetensors.Tensor
	for _, n := range names {
		s := all[n]
		size := 1
		for _, d := range s {
			size *= d
		}
		v := make([]float32, size)
		offset := 0.0
		if strings.HasSuffix(n, "norm.weight") { // also the layernorm gains
			offset = 1 // RMSNorm gains near 1, as in trained models
		}
		for i := range v {
			v[i] = float32(offset + r.NormFloat64()*0.05)
		}
		if strings.HasPrefix(n, "model.backbone.") {
			ts = append(ts, safetensors.NewBFloat16Tensor(n, s, v))
		} else {
			ts = append(ts, safetensors.NewFloat32Tensor(n, s, v))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("skimmer: random checkpoint: %w", err)
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("skimmer: random checkpoint: %w", err)
	}
	data, _ := json.Marshal(map[string]any{"model_type": ModelType, "num_heads": 8, "num_objectives": numRubrics})
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		return fmt.Errorf("skimmer: random checkpoint: %w", err)
	}
	return nil
}

// withHead adds the head tensor shapes resolve expects, so resolve can list
// every tensor of a complete checkpoint.
func withHead(shapes map[string][]int, bb backbone.Config, bottleneck, k int) map[string][]int {
	out := map[string][]int{}
	for n, s := range shapes {
		out[n] = s
	}
	e := 3 * bb.HiddenSize
	out["model.compression_head.feature_extractor.1.weight"] = []int{bottleneck, e}
	if k == 1 {
		out["model.compression_head.crf.transitions"] = []int{2, 2}
	}
	return out
}
