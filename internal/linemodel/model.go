package linemodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/prunekit/pruner/internal/safetensors"
	"github.com/prunekit/pruner/internal/syntax"
)

// Kind is the checkpoint kind written to config.json.
const Kind = "linemodel-mlp"

// Config describes a model; it is saved as config.json next to the weights.
type Config struct {
	Kind     string   `json:"kind"`
	Features []string `json:"features"`
	// Hidden lists the hidden layer widths (ReLU); the output is one score.
	Hidden []int `json:"hidden"`
	// Lambda is the weight of dependency-rubric lines in the targets.
	Lambda float64 `json:"lambda"`
	// Epochs is how many epochs the weights were trained for.
	Epochs int `json:"epochs"`
	// Step is the optimizer step count.
	Step int `json:"step"`
	// Smooth mixes a line's score with its best neighbour's:
	// s'ᵢ = sᵢ + Smooth·max(0, max(sᵢ₋₁, sᵢ₊₁) − sᵢ). Selected on val after
	// training (0 = off).
	Smooth float64 `json:"smooth,omitempty"`
	// Val holds the last validation numbers (for the record).
	Val map[string]float64 `json:"val,omitempty"`
}

// Model is a per-line MLP over standardised features.
type Model struct {
	Cfg  Config
	Mean []float32
	Std  []float32
	// W[l] is in×out row-major, B[l] has out entries.
	W [][]float32
	B [][]float32
}

// LayerDims returns the in/out sizes of each dense layer.
func (c Config) LayerDims() [][2]int {
	var d [][2]int
	in := len(c.Features)
	for _, h := range c.Hidden {
		d = append(d, [2]int{in, h})
		in = h
	}
	return append(d, [2]int{in, 1})
}

// NewModel returns a model with He-initialised weights from rnd (a function
// returning standard normal samples) and identity standardisation.
func NewModel(cfg Config, normal func() float64) *Model {
	cfg.Kind = Kind
	if cfg.Features == nil {
		cfg.Features = FeatureNames
	}
	m := &Model{Cfg: cfg}
	F := len(cfg.Features)
	m.Mean = make([]float32, F)
	m.Std = make([]float32, F)
	for i := range m.Std {
		m.Std[i] = 1
	}
	for _, d := range cfg.LayerDims() {
		w := make([]float32, d[0]*d[1])
		s := math.Sqrt(2 / float64(d[0]))
		for i := range w {
			w[i] = float32(normal() * s)
		}
		m.W = append(m.W, w)
		m.B = append(m.B, make([]float32, d[1]))
	}
	return m
}

// SetStandardisation computes feature means and deviations over exs.
func (m *Model) SetStandardisation(exs []Example) {
	F := len(m.Mean)
	sum := make([]float64, F)
	sq := make([]float64, F)
	cnt := 0.0
	for _, ex := range exs {
		for i := 0; i < ex.N; i++ {
			row := ex.X[i*F : (i+1)*F]
			for j, v := range row {
				sum[j] += float64(v)
				sq[j] += float64(v) * float64(v)
			}
		}
		cnt += float64(ex.N)
	}
	if cnt == 0 {
		return
	}
	for j := range sum {
		mu := sum[j] / cnt
		v := sq[j]/cnt - mu*mu
		m.Mean[j] = float32(mu)
		m.Std[j] = float32(math.Sqrt(math.Max(v, 1e-6)))
	}
}

// Standardise returns (X − mean) / std.
func (m *Model) Standardise(X []float32) []float32 {
	F := len(m.Mean)
	out := make([]float32, len(X))
	for i, v := range X {
		j := i % F
		out[i] = (v - m.Mean[j]) / m.Std[j]
	}
	return out
}

// ScoreFeatures returns one score per line of the raw feature matrix X
// (n×F).
func (m *Model) ScoreFeatures(X []float32, n int) []float32 {
	h := m.Standardise(X)
	in := len(m.Mean)
	for l, w := range m.W {
		out := len(m.B[l])
		next := make([]float32, n*out)
		for i := 0; i < n; i++ {
			row := h[i*in : (i+1)*in]
			dst := next[i*out : (i+1)*out]
			copy(dst, m.B[l])
			for k, x := range row {
				if x == 0 {
					continue
				}
				wk := w[k*out : (k+1)*out]
				for j := range dst {
					dst[j] += x * wk[j]
				}
			}
			if l+1 < len(m.W) {
				for j, v := range dst {
					if v < 0 {
						dst[j] = 0
					}
				}
			}
		}
		h, in = next, out
	}
	return SmoothScores(h, m.Cfg.Smooth)
}

// SmoothScores returns s with each score raised towards its best
// neighbour's by alpha (see Config.Smooth); alpha 0 returns s.
func SmoothScores(s []float32, alpha float64) []float32 {
	if alpha == 0 {
		return s
	}
	out := make([]float32, len(s))
	for i, v := range s {
		nb := float32(math.Inf(-1))
		if i > 0 {
			nb = s[i-1]
		}
		if i+1 < len(s) {
			nb = max(nb, s[i+1])
		}
		out[i] = v
		if nb > v {
			out[i] = v + float32(alpha)*(nb-v)
		}
	}
	return out
}

// Score returns one score per line of text (split as evalset.Lines) for
// query: higher means keep.
func (m *Model) Score(ctx context.Context, query, text string, lang syntax.Language) []float32 {
	X, n := Features(ctx, query, text, lang)
	return m.ScoreFeatures(X, n)
}

// Tensors returns the model's weights as safetensors tensors.
func (m *Model) Tensors() []safetensors.Tensor {
	ts := []safetensors.Tensor{
		safetensors.NewFloat32Tensor("feature_mean", []int{len(m.Mean)}, m.Mean),
		safetensors.NewFloat32Tensor("feature_std", []int{len(m.Std)}, m.Std),
	}
	for l, d := range m.Cfg.LayerDims() {
		ts = append(ts,
			safetensors.NewFloat32Tensor(fmt.Sprintf("layers.%d.weight", l), []int{d[0], d[1]}, m.W[l]),
			safetensors.NewFloat32Tensor(fmt.Sprintf("layers.%d.bias", l), []int{d[1]}, m.B[l]))
	}
	return ts
}

// Save writes dir/model.safetensors and dir/config.json.
func (m *Model) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), m.Tensors(), map[string]string{"kind": Kind}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m.Cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), append(b, '\n'), 0o644)
}

// Load reads a model saved by Save.
func Load(dir string) (*Model, error) {
	return LoadFS(os.DirFS(dir), dir)
}

// LoadFS reads a model saved by Save from the root of fsys (for instance the
// embedded weights); name labels errors.
func LoadFS(fsys fs.FS, name string) (*Model, error) {
	b, err := fs.ReadFile(fsys, "config.json")
	if err != nil {
		return nil, fmt.Errorf("linemodel: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("linemodel: %s/config.json: %w", name, err)
	}
	if cfg.Kind != Kind {
		return nil, fmt.Errorf("linemodel: %s: kind %q, want %q", name, cfg.Kind, Kind)
	}
	if fmt.Sprint(cfg.Features) != fmt.Sprint(FeatureNames) {
		return nil, errors.New("linemodel: checkpoint features differ from this build's features")
	}
	data, err := fs.ReadFile(fsys, "model.safetensors")
	if err != nil {
		return nil, fmt.Errorf("linemodel: %w", err)
	}
	f, err := safetensors.OpenBytes(name+"/model.safetensors", data)
	if err != nil {
		return nil, fmt.Errorf("linemodel: %w", err)
	}
	defer f.Close()
	m := &Model{Cfg: cfg}
	if m.Mean, err = f.Float32("feature_mean"); err != nil {
		return nil, err
	}
	if m.Std, err = f.Float32("feature_std"); err != nil {
		return nil, err
	}
	for l, d := range cfg.LayerDims() {
		w, err := f.Float32(fmt.Sprintf("layers.%d.weight", l))
		if err != nil {
			return nil, err
		}
		bias, err := f.Float32(fmt.Sprintf("layers.%d.bias", l))
		if err != nil {
			return nil, err
		}
		if len(w) != d[0]*d[1] || len(bias) != d[1] {
			return nil, fmt.Errorf("linemodel: layer %d: shape mismatch", l)
		}
		m.W = append(m.W, w)
		m.B = append(m.B, bias)
	}
	return m, nil
}
