package skimmer

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/prunekit/pruner/backbone"
	"github.com/prunekit/pruner/internal/fastcpu"
	"github.com/prunekit/pruner/internal/safetensors"
)

// writeRandomCheckpoint writes a SWE-Pruner-layout checkpoint with random
// weights for the given backbone dimensions (fusion and head as in the
// released model: 8 fusion heads, bottleneck 256).
func writeRandomCheckpoint(tb testing.TB, bb backbone.Config, numRubrics int) string {
	tb.Helper()
	r := rand.New(rand.NewSource(1))
	want := map[string][]int{}
	for name, s := range bb.ExpectedShapes() {
		want["model.backbone."+name] = s
	}
	heads8 := 8
	cfg := fileConfig{ModelType: ModelType, NumHeads: &heads8, Bottleneck: 64, NumObjectives: numRubrics}
	_, heads, err := resolve(cfg, withHead(want, bb, 64, numRubrics))
	if heads == nil {
		tb.Fatal(err)
	}
	names := make([]string, 0, len(heads))
	for n := range heads {
		names = append(names, n)
	}
	sort.Strings(names)
	var ts []safetensors.Tensor
	for _, n := range names {
		s := heads[n]
		size := 1
		for _, d := range s {
			size *= d
		}
		v := make([]float32, size)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 0.05)
		}
		ts = append(ts, safetensors.NewFloat32Tensor(n, s, v))
	}
	dir := tb.TempDir()
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}); err != nil {
		tb.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"model_type": ModelType, "num_heads": 8, "num_objectives": numRubrics})
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
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

func BenchmarkForward(b *testing.B) {
	configs := []struct {
		name string
		cfg  backbone.Config
	}{
		{"tiny", backbone.Config{HiddenSize: 16, NumLayers: 4, NumHeads: 4, NumKVHeads: 2, HeadDim: 8, IntermediateSize: 48, VocabSize: 151669}},
		{"h256x4", backbone.Config{HiddenSize: 256, NumLayers: 4, NumHeads: 4, NumKVHeads: 2, HeadDim: 64, IntermediateSize: 768, VocabSize: 151669}},
	}
	simple, err := simplego.New("ops_sequential")
	if err != nil {
		b.Fatal(err)
	}
	fast, err := fastcpu.New("")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range configs {
		c.cfg.RopeTheta, c.cfg.RMSNormEps = backbone.DefaultRopeTheta, backbone.DefaultRMSNormEps
		dir := writeRandomCheckpoint(b, c.cfg, 1)
		for _, be := range []struct {
			name    string
			backend backends.Backend
		}{{"simplego", simple}, {"fastgo", fast}} {
			m, err := Load(dir, be.backend)
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range []int{512, 2048} {
				ids := make([]int32, n)
				for i := range ids {
					ids[i] = int32(i % 50000)
				}
				b.Run(fmt.Sprintf("%s/%s/tokens=%d", be.name, c.name, n), func(b *testing.B) {
					if _, err := m.Run(context.Background(), [][]int32{ids}); err != nil { // compile outside the timing
						b.Fatal(err)
					}
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if _, err := m.Run(context.Background(), [][]int32{ids}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
