package bert

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prunekit/pruner/internal/safetensors"
)

// layer holds one encoder layer's weights, the matrices transposed to
// [in, out] so that products read them row by row in place.
type layer struct {
	qkvW       []float32 // [H, 3H]: query | key | value
	qkvB       []float32 // [3H]
	outW, outB []float32 // [H, H], [H]
	ln1G, ln1B []float32 // [H]
	inW, inB   []float32 // [H, I], [I]
	ffW, ffB   []float32 // [I, H], [H]
	ln2G, ln2B []float32 // [H]
}

type weights struct {
	word     []float32 // [V, H]
	position []float32 // [P, H]
	tokType  []float32 // [H]: token type 0, the only one used
	embG     []float32 // [H]
	embB     []float32 // [H]
	layers   []layer
}

// tensorNames resolves the checkpoint's names for the model's tensors:
// Hugging Face BERT names, with or without the "bert." prefix
// (BertForMaskedLM and some sentence-transformers exports have it), and
// "gamma"/"beta" for LayerNorm weights in older TensorFlow conversions.
type tensorNames struct {
	prefix string
	shapes map[string][]int
}

func (n tensorNames) name(rel string) string {
	full := n.prefix + rel
	if _, ok := n.shapes[full]; ok {
		return full
	}
	for _, alias := range [][2]string{{"LayerNorm.weight", "LayerNorm.gamma"}, {"LayerNorm.bias", "LayerNorm.beta"}} {
		if base, ok := strings.CutSuffix(full, alias[0]); ok {
			if _, ok := n.shapes[base+alias[1]]; ok {
				return base + alias[1]
			}
		}
	}
	return full
}

// resolve checks the tensors' names and shapes against cfg (filling
// VocabSize from the embeddings when config.json does not give it) and
// returns every tensor to read with its expected shape, by role. All
// missing or mis-shaped tensors are named in one error.
func resolve(cfg *Config, shapes map[string][]int) (tensorNames, map[string][]int, error) {
	n := tensorNames{shapes: shapes}
	if _, ok := shapes["embeddings.word_embeddings.weight"]; !ok {
		if _, ok := shapes["bert.embeddings.word_embeddings.weight"]; ok {
			n.prefix = "bert."
		}
	}
	if s, ok := shapes[n.prefix+"embeddings.word_embeddings.weight"]; ok && len(s) == 2 {
		if cfg.VocabSize == 0 {
			cfg.VocabSize = s[0]
		} else if s[0] != cfg.VocabSize {
			return n, nil, fmt.Errorf("%w: vocab_size %d contradicts %q with %d rows",
				ErrCheckpoint, cfg.VocabSize, n.prefix+"embeddings.word_embeddings.weight", s[0])
		}
	}
	h, in := cfg.Hidden, cfg.Intermediate
	want := map[string][]int{}
	add := func(rel string, shape ...int) { want[n.name(rel)] = shape }
	add("embeddings.word_embeddings.weight", cfg.VocabSize, h)
	add("embeddings.position_embeddings.weight", cfg.MaxPositions, h)
	add("embeddings.token_type_embeddings.weight", cfg.TypeVocabSize, h)
	add("embeddings.LayerNorm.weight", h)
	add("embeddings.LayerNorm.bias", h)
	for i := 0; i < cfg.Layers; i++ {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		for _, proj := range []string{"query", "key", "value"} {
			add(p+"attention.self."+proj+".weight", h, h)
			add(p+"attention.self."+proj+".bias", h)
		}
		add(p+"attention.output.dense.weight", h, h)
		add(p+"attention.output.dense.bias", h)
		add(p+"attention.output.LayerNorm.weight", h)
		add(p+"attention.output.LayerNorm.bias", h)
		add(p+"intermediate.dense.weight", in, h)
		add(p+"intermediate.dense.bias", in)
		add(p+"output.dense.weight", h, in)
		add(p+"output.dense.bias", h)
		add(p+"output.LayerNorm.weight", h)
		add(p+"output.LayerNorm.bias", h)
	}
	var errs []error
	for _, name := range sortedKeys(want) {
		got, ok := shapes[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("tensor %q missing", name))
		case !slices.Equal(got, want[name]):
			errs = append(errs, fmt.Errorf("tensor %q has shape %v, want %v", name, got, want[name]))
		}
	}
	// A layer the config does not count would be silently skipped.
	layerPrefix := n.prefix + "encoder.layer."
	for _, name := range sortedKeys(shapes) {
		rest, ok := strings.CutPrefix(name, layerPrefix)
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(num); err == nil && i >= cfg.Layers {
			errs = append(errs, fmt.Errorf("tensor %q belongs to layer %d but num_hidden_layers is %d", name, i, cfg.Layers))
			break
		}
	}
	if len(errs) > 0 {
		return n, want, fmt.Errorf("%w: %w", ErrCheckpoint, errors.Join(errs...))
	}
	return n, want, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// readWeights reads the tensors resolve named, widened to float32 (F32,
// F16 and BF16 files), every value finite, and lays them out for the
// forward pass. ctx is checked between tensors.
func readWeights(ctx context.Context, f *safetensors.File, cfg Config, n tensorNames) (*weights, error) {
	var firstErr error
	read := func(rel string) []float32 {
		if firstErr != nil {
			return nil
		}
		if err := ctx.Err(); err != nil {
			firstErr = err
			return nil
		}
		x, err := f.Float32Finite(n.name(rel))
		if err != nil {
			firstErr = fmt.Errorf("%w: %w", ErrCheckpoint, err)
		}
		return x
	}
	h, in := cfg.Hidden, cfg.Intermediate
	w := &weights{
		word:     read("embeddings.word_embeddings.weight"),
		position: read("embeddings.position_embeddings.weight"),
		embG:     read("embeddings.LayerNorm.weight"),
		embB:     read("embeddings.LayerNorm.bias"),
	}
	if tt := read("embeddings.token_type_embeddings.weight"); tt != nil {
		w.tokType = tt[:h:h]
	}
	for i := 0; i < cfg.Layers && firstErr == nil; i++ {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		var l layer
		l.qkvW = make([]float32, h*3*h)
		l.qkvB = make([]float32, 0, 3*h)
		for j, proj := range []string{"query", "key", "value"} {
			if wt := read(p + "attention.self." + proj + ".weight"); wt != nil {
				transposeInto(l.qkvW[j*h:], 3*h, wt, h, h)
			}
			l.qkvB = append(l.qkvB, read(p+"attention.self."+proj+".bias")...)
		}
		l.outW = transposed(read(p+"attention.output.dense.weight"), h, h)
		l.outB = read(p + "attention.output.dense.bias")
		l.ln1G = read(p + "attention.output.LayerNorm.weight")
		l.ln1B = read(p + "attention.output.LayerNorm.bias")
		l.inW = transposed(read(p+"intermediate.dense.weight"), in, h)
		l.inB = read(p + "intermediate.dense.bias")
		l.ffW = transposed(read(p+"output.dense.weight"), h, in)
		l.ffB = read(p + "output.dense.bias")
		l.ln2G = read(p + "output.LayerNorm.weight")
		l.ln2B = read(p + "output.LayerNorm.bias")
		w.layers = append(w.layers, l)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return w, nil
}

// transposed returns a PyTorch Linear weight [out, in] as [in, out].
func transposed(w []float32, out, in int) []float32 {
	if w == nil {
		return nil
	}
	t := make([]float32, in*out)
	transposeInto(t, out, w, out, in)
	return t
}

// transposeInto writes w [out, in] transposed into dst, whose rows (one per
// input) are ld apart.
func transposeInto(dst []float32, ld int, w []float32, out, in int) {
	for o := 0; o < out; o++ {
		row := w[o*in : (o+1)*in]
		for i, v := range row {
			dst[i*ld+o] = v
		}
	}
}
