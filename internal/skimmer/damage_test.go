package skimmer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/golden"
	"github.com/prunekit/pruner/internal/safetensors"
)

// rewrite copies tiny-swepruner into a temp folder, letting edit change the
// tensor list and config before it is written.
func rewrite(t *testing.T, edit func(ts []safetensors.Tensor) []safetensors.Tensor, config func(string) string) string {
	t.Helper()
	src := filepath.Join(golden.Dir(), "tiny-swepruner")
	f, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	require.NoError(t, err)
	defer f.Close()
	var ts []safetensors.Tensor
	for _, name := range f.Names() {
		tensor, err := f.Tensor(name)
		require.NoError(t, err)
		tensor.Data = append([]byte(nil), tensor.Data...)
		ts = append(ts, tensor)
	}
	dir := t.TempDir()
	if edit != nil {
		ts = edit(ts)
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}))
	cfg, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	s := string(cfg)
	if config != nil {
		s = config(s)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(s), 0o644))
	return dir
}

func without(names ...string) func([]safetensors.Tensor) []safetensors.Tensor {
	return func(ts []safetensors.Tensor) []safetensors.Tensor {
		var out []safetensors.Tensor
		for _, t := range ts {
			drop := false
			for _, n := range names {
				drop = drop || t.Name == n
			}
			if !drop {
				out = append(out, t)
			}
		}
		return out
	}
}

func TestLoadDamagedCheckpoints(t *testing.T) {
	backend, err := simplego.New("")
	require.NoError(t, err)
	reshape := func(name string, shape []int, values int) func([]safetensors.Tensor) []safetensors.Tensor {
		return func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i := range ts {
				if ts[i].Name == name {
					ts[i] = safetensors.NewFloat32Tensor(name, shape, make([]float32, values))
				}
			}
			return ts
		}
	}
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		wantErr []string
	}{
		{"missing folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, []string{"config.json"}},
		{"missing tensor", func(t *testing.T) string {
			return rewrite(t, without("model.backbone.layers.2.mlp.up_proj.weight", "model.fusion_norms.0.bias"), nil)
		}, []string{`"layers.2.mlp.up_proj.weight" missing`}},
		{"missing head tensor", func(t *testing.T) string {
			return rewrite(t, without("model.fusion_norms.0.bias"), nil)
		}, []string{`"model.fusion_norms.0.bias" missing`}},
		{"wrong shape", func(t *testing.T) string {
			return rewrite(t, reshape("model.compression_head.feature_extractor.4.weight", []int{3, 16}, 48), nil)
		}, []string{`"model.compression_head.feature_extractor.4.weight" has shape [3 16], want [2 16]`}},
		{"wrong backbone shape", func(t *testing.T) string {
			return rewrite(t, reshape("model.backbone.layers.1.self_attn.k_norm.weight", []int{4}, 4), nil)
		}, []string{`layers.1.self_attn.k_norm.weight" has shape [4], want [8]`}},
		{"config contradicts shapes", func(t *testing.T) string {
			return rewrite(t, nil, func(s string) string { return strings.Replace(s, `"hidden_size": 16`, `"hidden_size": 32`, 1) })
		}, []string{"hidden_size=32 contradicts"}},
		{"wrong model type", func(t *testing.T) string {
			return rewrite(t, nil, func(s string) string { return strings.Replace(s, `"swepruner"`, `"bert"`, 1) })
		}, []string{`model_type "bert"`}},
		{"config not json", func(t *testing.T) string {
			return rewrite(t, nil, func(string) string { return "{not json" })
		}, []string{"config.json"}},
		{"truncated weights", func(t *testing.T) string {
			dir := rewrite(t, nil, nil)
			p := filepath.Join(dir, "model.safetensors")
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, data[:len(data)/2], 0o644))
			return dir
		}, []string{"model.safetensors"}},
		{"unknown dtype", func(t *testing.T) string {
			dir := rewrite(t, nil, nil)
			p := filepath.Join(dir, "model.safetensors")
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			s := strings.Replace(string(data), `"F32"`, `"Q4"`, 1)
			require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
			return dir
		}, []string{"Q4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(tc.dir(t), backend)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, ErrCheckpoint)
			for _, w := range tc.wantErr {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The LaMR fork renames the K=1 CRF to crf_layers.0; both names must load.
func TestLoadLegacyCRFName(t *testing.T) {
	dir := rewrite(t, func(ts []safetensors.Tensor) []safetensors.Tensor {
		for i := range ts {
			ts[i].Name = strings.Replace(ts[i].Name, "compression_head.crf.", "compression_head.crf_layers.0.", 1)
		}
		return ts
	}, nil)
	backend, err := simplego.New("")
	require.NoError(t, err)
	m, err := Load(dir, backend)
	require.NoError(t, err)
	ref := loadTiny(t, "tiny-swepruner")
	assert.Equal(t, ref.FinalCRF, m.FinalCRF)
	assert.Equal(t, "compression_head.crf_layers.0", m.Config().LegacyCRFPrefix)
}

// Padding to a bucket and batching with longer rows must not change a row's
// outputs: the backbone is causal and the fusion masks padded keys.
func TestPaddingInvariance(t *testing.T) {
	m := loadTiny(t, "tiny-lamr")
	g, err := golden.Load("golden_lamr.json")
	require.NoError(t, err)
	long := g.Cases[0].Chunks[0].InputIDs // 755 tokens
	short := g.Cases[1].Chunks[0].InputIDs
	tiny := short[:20]
	alone, err := m.Run(context.Background(), [][]int32{tiny})
	require.NoError(t, err)
	batched, err := m.Run(context.Background(), [][]int32{long, tiny, short})
	require.NoError(t, err)
	require.Equal(t, BucketLen(len(long)), BucketLen(755))
	a, b := alone[0], batched[1]
	require.Equal(t, a.N, b.N)
	for i := range a.Emissions {
		require.InDelta(t, a.Emissions[i], b.Emissions[i], 1e-5, "emission %d", i)
	}
	for i := range a.Gates {
		require.InDelta(t, a.Gates[i], b.Gates[i], 1e-6, "gate %d", i)
	}
	require.InDelta(t, a.LYes, b.LYes, 1e-5)
	require.InDelta(t, a.LNo, b.LNo, 1e-5)
}

func TestRunRejectsBadRows(t *testing.T) {
	m := loadTiny(t, "tiny-swepruner")
	_, err := m.Run(context.Background(), [][]int32{{}})
	require.ErrorContains(t, err, "empty")
	_, err = m.Run(context.Background(), [][]int32{{1, 2, 151669}})
	require.ErrorContains(t, err, "outside vocabulary")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.Run(ctx, [][]int32{{1, 2}})
	require.ErrorIs(t, err, context.Canceled)
}

func TestBuckets(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{1, 16}, {16, 16}, {17, 32}, {33, 48}, {49, 64}, {755, 768}, {8192, 8192}, {8193, 12288}} {
		assert.Equal(t, tc.want, BucketLen(tc.n), "BucketLen(%d)", tc.n)
	}
	for _, tc := range []struct{ n, want int }{{1, 1}, {2, 2}, {3, 4}, {9, 16}} {
		assert.Equal(t, tc.want, BucketBatch(tc.n))
	}
}
