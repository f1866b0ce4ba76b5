package bert

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/safetensors"
)

// copyTiny copies the tiny model folder into a temporary one.
func copyTiny(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(tinyDir)))
	return dir
}

// editJSON rewrites a JSON file of dir (an object) with edit.
func editJSON(t *testing.T, dir, name string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	edit(m)
	data, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// tinyTensor is one tensor of the tiny model as float32.
type tinyTensor struct {
	name  string
	shape []int
	data  []float32
}

func readTiny(t *testing.T) []tinyTensor {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(tinyDir, "model.safetensors"))
	require.NoError(t, err)
	defer f.Close()
	var out []tinyTensor
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		data, err := f.Float32(name)
		require.NoError(t, err)
		out = append(out, tinyTensor{name, info.Shape, data})
	}
	return out
}

// rewriteWeights writes dir/model.safetensors from the tiny model's tensors
// mapped by fn (nil drops a tensor).
func rewriteWeights(t *testing.T, dir string, fn func(tinyTensor) *safetensors.Tensor) {
	t.Helper()
	var ts []safetensors.Tensor
	for _, tt := range readTiny(t) {
		if out := fn(tt); out != nil {
			ts = append(ts, *out)
		}
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, nil))
}

func f32(tt tinyTensor) *safetensors.Tensor {
	x := safetensors.NewFloat32Tensor(tt.name, tt.shape, tt.data)
	return &x
}

// TestLoadRefuses: each damaged folder is refused with ErrCheckpoint and a
// message that names what is wrong.
func TestLoadRefuses(t *testing.T) {
	cfgEdit := func(edit func(map[string]any)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { editJSON(t, dir, "config.json", edit) }
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		msgs   []string
	}{
		{"model type", cfgEdit(func(m map[string]any) { m["model_type"] = "roberta" }), []string{`model_type "roberta"`}},
		{"heads", cfgEdit(func(m map[string]any) { m["num_attention_heads"] = 5 }), []string{"hidden_size 32 is not divisible by num_attention_heads 5"}},
		{"act", cfgEdit(func(m map[string]any) { m["hidden_act"] = "gelu_new" }), []string{`hidden_act "gelu_new" is not supported`}},
		{"no act", cfgEdit(func(m map[string]any) { delete(m, "hidden_act") }), []string{"hidden_act <missing>"}},
		{"no hidden", cfgEdit(func(m map[string]any) { delete(m, "hidden_size") }), []string{"hidden_size is missing"}},
		{"huge hidden", cfgEdit(func(m map[string]any) { m["hidden_size"] = 1 << 40 }), []string{"hidden_size must be in [1, 16384]"}},
		{"eps zero", cfgEdit(func(m map[string]any) { m["layer_norm_eps"] = 0 }), []string{"layer_norm_eps must be in (0, 1)"}},
		{"eps underflows", cfgEdit(func(m map[string]any) { m["layer_norm_eps"] = 1e-50 }), []string{"layer_norm_eps"}},
		{"relative positions", cfgEdit(func(m map[string]any) { m["position_embedding_type"] = "relative_key" }), []string{`position_embedding_type "relative_key"`}},
		{"decoder", cfgEdit(func(m map[string]any) { m["is_decoder"] = true }), []string{"is_decoder=true"}},
		{"vocab size", cfgEdit(func(m map[string]any) { m["vocab_size"] = 1000 }), []string{"vocab_size 1000 contradicts", "word_embeddings"}},
		{"positions", cfgEdit(func(m map[string]any) { m["max_position_embeddings"] = 128 }), []string{`"embeddings.position_embeddings.weight" has shape [64 32], want [128 32]`}},
		{"fewer layers", cfgEdit(func(m map[string]any) { m["num_hidden_layers"] = 1 }), []string{"belongs to layer 1 but num_hidden_layers is 1"}},
		{"more layers", cfgEdit(func(m map[string]any) { m["num_hidden_layers"] = 3 }), []string{
			`"encoder.layer.2.attention.self.query.weight" missing`, `"encoder.layer.2.output.LayerNorm.bias" missing`}},
		{"config not json", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte("{"), 0o644))
		}, []string{"config.json"}},
		{"no config", func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "config.json"))) }, []string{"config.json"}},
		{"no weights", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "model.safetensors")))
		}, []string{"model.safetensors"}},
		{"no vocab", func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "vocab.txt"))) }, []string{"vocab.txt"}},
		{"vocab too big", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "vocab.txt"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString(strings.Repeat("extra\n", 200))
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, []string{"vocab.txt has 338 tokens, the embeddings 138 rows"}},
		{"missing tensors", func(t *testing.T, dir string) {
			rewriteWeights(t, dir, func(tt tinyTensor) *safetensors.Tensor {
				if strings.Contains(tt.name, "layer.1.intermediate") || tt.name == "embeddings.LayerNorm.bias" {
					return nil
				}
				return f32(tt)
			})
		}, []string{`"embeddings.LayerNorm.bias" missing`, `"encoder.layer.1.intermediate.dense.bias" missing`, `"encoder.layer.1.intermediate.dense.weight" missing`}},
		{"transposed", func(t *testing.T, dir string) {
			rewriteWeights(t, dir, func(tt tinyTensor) *safetensors.Tensor {
				if tt.name == "encoder.layer.0.intermediate.dense.weight" {
					tt.shape = []int{tt.shape[1], tt.shape[0]}
				}
				return f32(tt)
			})
		}, []string{`"encoder.layer.0.intermediate.dense.weight" has shape [32 64], want [64 32]`}},
		{"nan", func(t *testing.T, dir string) {
			rewriteWeights(t, dir, func(tt tinyTensor) *safetensors.Tensor {
				if tt.name == "encoder.layer.1.output.dense.weight" {
					tt.data[7] = float32(math.NaN())
				}
				return f32(tt)
			})
		}, []string{`"encoder.layer.1.output.dense.weight" has NaN at index 7`}},
		{"truncated weights", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "model.safetensors")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data[:len(data)/2], 0o644))
		}, []string{"model.safetensors"}},
		{"dense module", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "modules.json"), []byte(`[
				{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
				{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
				{"idx":2,"name":"2","path":"2_Dense","type":"sentence_transformers.models.Dense"}]`), 0o644))
		}, []string{`type "sentence_transformers.models.Dense" is not supported`}},
		{"no pooling module", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "modules.json"), []byte(`[{"path":"","type":"sentence_transformers.models.Transformer"}]`), 0o644))
		}, []string{"no sentence_transformers.models.Pooling module"}},
		{"pooling outside", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "modules.json"), []byte(`[{"path":"../x","type":"sentence_transformers.models.Pooling"}]`), 0o644))
		}, []string{"outside the model folder"}},
		{"max pooling", func(t *testing.T, dir string) {
			editJSON(t, dir, "1_Pooling/config.json", func(m map[string]any) { m["pooling_mode_max_tokens"] = true })
		}, []string{"pooling modes [max_tokens mean_tokens] are not supported"}},
		{"max_seq_length", func(t *testing.T, dir string) {
			editJSON(t, dir, "sentence_bert_config.json", func(m map[string]any) { m["max_seq_length"] = 1 })
		}, []string{"max_seq_length 1 leaves no room"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTiny(t)
			tc.damage(t, dir)
			_, err := Load(context.Background(), dir)
			require.Error(t, err)
			if !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("error does not wrap ErrCheckpoint: %v", err)
			}
			for _, msg := range tc.msgs {
				assert.Contains(t, err.Error(), msg)
			}
		})
	}
}

func TestLoadFIFO(t *testing.T) {
	dir := copyTiny(t)
	path := filepath.Join(dir, "model.safetensors")
	require.NoError(t, os.Remove(path))
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	_, err := Load(context.Background(), dir)
	require.ErrorIs(t, err, ErrCheckpoint, "a FIFO is refused at once, not read forever")
}

func TestLoadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Load(ctx, tinyDir)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrCheckpoint)
}

// TestWeightVariants: the same weights stored with the "bert." prefix, with
// TensorFlow's gamma/beta LayerNorm names, with a pooler and position_ids
// beside them, give the same vectors; F16 and BF16 files give the vectors
// of their values widened.
func TestWeightVariants(t *testing.T) {
	g := readGolden[tinyGolden](t, "testdata/tiny_golden.json")
	ctx := context.Background()
	want, err := loadTiny(t).Embed(ctx, g.Texts)
	require.NoError(t, err)
	embed := func(t *testing.T, dir string) [][]float32 {
		m, err := Load(ctx, dir)
		require.NoError(t, err)
		got, err := m.Embed(ctx, g.Texts)
		require.NoError(t, err)
		return got
	}
	t.Run("prefix and aliases", func(t *testing.T) {
		dir := copyTiny(t)
		var extra []safetensors.Tensor
		rewriteWeights(t, dir, func(tt tinyTensor) *safetensors.Tensor {
			name := "bert." + tt.name
			name = strings.Replace(name, "LayerNorm.weight", "LayerNorm.gamma", 1)
			name = strings.Replace(name, "LayerNorm.bias", "LayerNorm.beta", 1)
			x := safetensors.NewFloat32Tensor(name, tt.shape, tt.data)
			return &x
		})
		// A pooler and the position_ids buffer are there and unused.
		f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
		require.NoError(t, err)
		for _, name := range f.Names() {
			tn, err := f.Tensor(name)
			require.NoError(t, err)
			tn.Data = append([]byte(nil), tn.Data...)
			extra = append(extra, tn)
		}
		require.NoError(t, f.Close())
		extra = append(extra, safetensors.NewFloat32Tensor("bert.pooler.dense.weight", []int{32, 32}, make([]float32, 32*32)),
			safetensors.Tensor{Name: "bert.embeddings.position_ids", DType: safetensors.I64, Shape: []int{1, 64}, Data: make([]byte, 8*64)})
		require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), extra, nil))
		assert.Equal(t, want, embed(t, dir))
	})
	for _, half := range []string{"BF16", "F16"} {
		t.Run(half, func(t *testing.T) {
			dirHalf, dirRef := copyTiny(t), copyTiny(t)
			var ref []safetensors.Tensor
			rewriteWeights(t, dirHalf, func(tt tinyTensor) *safetensors.Tensor {
				data := make([]byte, 2*len(tt.data))
				wide := make([]float32, len(tt.data))
				for i, v := range tt.data {
					var bits uint16
					if half == "BF16" {
						bits = safetensors.F32ToBF16(v)
						wide[i] = safetensors.BF16ToF32(bits)
					} else {
						bits = f32ToF16(v)
						wide[i] = safetensors.F16ToF32(bits)
					}
					data[2*i], data[2*i+1] = byte(bits), byte(bits>>8)
				}
				ref = append(ref, safetensors.NewFloat32Tensor(tt.name, tt.shape, wide))
				return &safetensors.Tensor{Name: tt.name, DType: safetensors.DType(half), Shape: tt.shape, Data: data}
			})
			require.NoError(t, safetensors.WriteFile(filepath.Join(dirRef, "model.safetensors"), ref, nil))
			got, wantHalf := embed(t, dirHalf), embed(t, dirRef)
			assert.Equal(t, wantHalf, got)
			for i := range got {
				d, _ := maxDiff(t, want[i], got[i])
				assert.Less(t, d, 0.1, "%s rounding moves the vectors a little", half)
			}
		})
	}
}

// f32ToF16 rounds f to a float16 bit pattern (nearest; normal range and
// zero are enough for weights of this size: tiny values flush to zero).
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	if exp <= 0 {
		return sign
	}
	h := uint32(exp)<<10 | mant>>13
	if mant&0x1fff > 0x1000 || mant&0x1fff == 0x1000 && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

func TestPoolingModes(t *testing.T) {
	g := readGolden[tinyGolden](t, "testdata/tiny_golden.json")
	ctx := context.Background()
	t.Run("cls", func(t *testing.T) {
		dir := copyTiny(t)
		editJSON(t, dir, "1_Pooling/config.json", func(m map[string]any) {
			m["pooling_mode_mean_tokens"], m["pooling_mode_cls_token"] = false, true
		})
		m, err := Load(ctx, dir)
		require.NoError(t, err)
		assert.Equal(t, PoolCLS, m.Config().Pooling)
		got, err := m.Embed(ctx, g.Texts)
		require.NoError(t, err)
		for i := range got {
			requireClose(t, g.CLS[i], got[i], tolerance, "CLS vector of "+g.Texts[i])
		}
	})
	t.Run("no sentence-transformers files", func(t *testing.T) {
		dir := copyTiny(t)
		for _, name := range []string{"modules.json", "sentence_bert_config.json"} {
			require.NoError(t, os.Remove(filepath.Join(dir, name)))
		}
		m, err := Load(ctx, dir)
		require.NoError(t, err)
		assert.Equal(t, PoolMean, m.Config().Pooling)
		assert.Equal(t, 64, m.MaxLength(), "max_position_embeddings bounds the length")
	})
	t.Run("long max_seq_length", func(t *testing.T) {
		dir := copyTiny(t)
		editJSON(t, dir, "sentence_bert_config.json", func(m map[string]any) { m["max_seq_length"] = 4096 })
		m, err := Load(ctx, dir)
		require.NoError(t, err)
		assert.Equal(t, 64, m.MaxLength())
	})
}
