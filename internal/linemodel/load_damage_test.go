package linemodel

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/safetensors"
)

// A damaged line-model folder (the kind examples/train writes) is refused
// at load, naming what is wrong, instead of loading and scoring every line
// 0 or NaN: non-finite weights, a zero standard deviation, a transposed
// matrix, score scales past float32, and files far larger than the config
// allows (refused before they are read).
func TestLoadDamagedLineModel(t *testing.T) {
	base, err := Embedded()
	require.NoError(t, err)
	save := func(t *testing.T, m *Model, edit func(ts []safetensors.Tensor) []safetensors.Tensor) string {
		dir := t.TempDir()
		require.NoError(t, m.Save(dir))
		if edit != nil {
			ts := edit(m.Tensors())
			require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"kind": Kind}))
		}
		return dir
	}
	clone := func() *Model {
		c := *base
		c.P = make([][]float32, len(base.P))
		for i, p := range base.P {
			c.P[i] = append([]float32(nil), p...)
		}
		c.Mean = append([]float32(nil), base.Mean...)
		c.Std = append([]float32(nil), base.Std...)
		return &c
	}
	tests := []struct {
		name string
		dir  func(t *testing.T) string
		want string
	}{
		{"NaN in a weight", func(t *testing.T) string {
			m := clone()
			m.P[ParamW2][7] = float32(math.NaN())
			return save(t, m, nil)
		}, "non-finite"},
		{"+Inf in a bias", func(t *testing.T) string {
			m := clone()
			m.P[ParamBH][0] = float32(math.Inf(1))
			return save(t, m, nil)
		}, "non-finite"},
		{"zero standard deviation", func(t *testing.T) string {
			m := clone()
			m.Std[3] = 0
			return save(t, m, nil)
		}, "feature_std[3]"},
		{"transposed matrix", func(t *testing.T) string {
			m := clone()
			return save(t, m, func(ts []safetensors.Tensor) []safetensors.Tensor {
				sh := m.Cfg.ParamShapes()[ParamW2]
				for i := range ts {
					if ts[i].Name == paramNames[ParamW2] {
						ts[i] = safetensors.NewFloat32Tensor(ts[i].Name, []int{sh[1], sh[0]}, m.P[ParamW2])
					}
				}
				return ts
			})
		}, "shape"},
		{"rank_mix past float32", func(t *testing.T) string {
			m := clone()
			m.Cfg.RankMix = 1e300
			return save(t, m, nil)
		}, "rank_mix"},
		{"weights file far over the config's size", func(t *testing.T) string {
			dir := save(t, clone(), nil)
			f, err := os.OpenFile(filepath.Join(dir, "model.safetensors"), os.O_WRONLY, 0)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(3<<30)) // sparse: no disk used
			require.NoError(t, f.Close())
			return dir
		}, "over the"},
		{"config.json of 2 MB", func(t *testing.T) string {
			dir := save(t, clone(), nil)
			b, err := json.Marshal(map[string]any{"kind": Kind, "pad": string(make([]byte, 2<<20))})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644))
			return dir
		}, "config.json has"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			start := time.Now()
			_, err := Load(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, time.Since(start), 10*time.Second)
		})
	}
	_, err = Load(save(t, clone(), nil))
	require.NoError(t, err, "an undamaged copy loads")
}
