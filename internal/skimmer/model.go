// Package skimmer runs the published SWE-Pruner and LaMR checkpoints: a Qwen3
// decoder, the multi-layer fusion block and the CRF emission heads, built as
// GoMLX graphs over variables named after the checkpoint's tensors.
package skimmer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	mlctx "github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/prunekit/pruner/backbone"
	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/safetensors"
)

// PadID is the id SWE-Pruner pads with (<|endoftext|>).
const PadID = 151643

// CRFWeights holds one CRF's parameters as stored in the checkpoint
// (transitions in PyTorch layout, see package crf for the conventions).
type CRFWeights struct {
	Transitions []float32 // [2,2]
	Start, End  []float32 // [2]
}

// Model is a loaded checkpoint. It is safe for concurrent use: weights are
// loaded once and shared by every call.
type Model struct {
	cfg     Config
	backend backends.Backend
	ctx     *mlctx.Context

	// FinalCRF decodes the fused emissions (LaMR final_crf, or the K=1 CRF).
	FinalCRF CRFWeights
	// RubricCRFs are the per-rubric CRFs (training only; may be empty).
	RubricCRFs []CRFWeights

	mu    sync.Mutex // guards lazy creation of the executables
	exec  *mlctx.Exec
	debug *mlctx.Exec
}

// Config returns the checkpoint's validated configuration.
func (m *Model) Config() Config { return m.cfg }

// Load is LoadContext without a context.
func Load(dir string, backend backends.Backend, opts ...LoadOption) (*Model, error) {
	return LoadContext(context.Background(), dir, backend, opts...)
}

// LoadOption changes how a checkpoint's graph is built.
type LoadOption func(*loadOptions)

type loadOptions struct {
	bf16Products bool
	queryBlock   int
}

// WithBF16Products builds the graph with bfloat16 products
// (backbone.ParamBF16Products): the fast path of XLA on a GPU.
func WithBF16Products() LoadOption {
	return func(o *loadOptions) { o.bf16Products = true }
}

// WithQueryBlock builds the decoder's causal attention over blocks of n
// queries (backbone.ParamQueryBlock), skipping the masked keys
// (pruner.WithAttentionBlock). On XLA CUDA it makes the 28-layer graph's
// compilation slower (docs/performance.md).
func WithQueryBlock(n int) LoadOption {
	return func(o *loadOptions) { o.queryBlock = n }
}

// LoadContext reads config.json and model.safetensors from dir and places
// the weights on backend. The checkpoint is validated before it is declared
// loaded: both files must be regular files (a FIFO is refused at once rather
// than blocking), every missing or mis-shaped tensor is named, config values
// are checked against the tensor shapes and against each other, tensor dtypes
// against the config's torch_dtype, and every weight must be finite (the check
// is fused into the conversion to float32). All such errors wrap
// ErrCheckpoint. ctx is checked between tensors; a cancelled load returns
// ctx's error (not ErrCheckpoint).
func LoadContext(ctx context.Context, dir string, backend backends.Backend, opts ...LoadOption) (m *Model, err error) {
	defer recoverErr(&err, "load checkpoint")
	var lo loadOptions
	for _, o := range opts {
		o(&lo)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("skimmer: load %s: %w", dir, err)
	}
	fc, err := readFileConfig(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	defer f.Close()

	shapesByName := map[string][]int{}
	dtypeOf := map[string]safetensors.DType{}
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		shapesByName[name] = info.Shape
		dtypeOf[name] = info.DType
	}
	cfg, want, err := resolve(fc, shapesByName)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	if err := fc.checkDTypes(names, dtypeOf); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	m = &Model{cfg: cfg, backend: backend, ctx: mlctx.New()}
	for _, name := range names {
		if strings.Contains(name, "crf") {
			continue // CRFs are decoded in Go, see below
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("skimmer: load %s: %w", dir, err)
		}
		rel := strings.TrimPrefix(name, "model.")
		dot := strings.LastIndexByte(rel, '.')
		scope := "/model/" + strings.ReplaceAll(rel[:dot], ".", "/")
		var t *tensors.Tensor
		if keepBF16(name, dtypeOf[name], want[name]) {
			half, err := bf16Finite(f, name)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
			}
			t = tensors.FromFlatDataAndDimensions(half, want[name]...)
		} else {
			data, err := f.Float32Finite(name)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
			}
			t = tensors.FromFlatDataAndDimensions(data, want[name]...)
		}
		// Move it to the backend now, sharing the buffer where the backend
		// can (simplego, fastgo): the local copy is freed at once, so the
		// weights are held once, not twice until first use.
		if err := t.MaterializeOnDevice(backend, true, 0); err != nil {
			return nil, fmt.Errorf("skimmer: load %s: %s: %w", dir, name, err)
		}
		m.ctx.InAbsPath(scope).VariableWithValue(rel[dot+1:], t)
	}
	readCRF := func(prefix string) (CRFWeights, error) {
		var w CRFWeights
		var err error
		if w.Transitions, err = f.Float32Finite("model." + prefix + ".transitions"); err != nil {
			return w, err
		}
		if w.Start, err = f.Float32Finite("model." + prefix + ".start_transitions"); err != nil {
			return w, err
		}
		w.End, err = f.Float32Finite("model." + prefix + ".end_transitions")
		return w, err
	}
	if cfg.NumRubrics == 1 {
		if m.FinalCRF, err = readCRF(cfg.LegacyCRFPrefix); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
		}
	} else {
		if cfg.HasFinalCRF {
			if m.FinalCRF, err = readCRF("final_crf"); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
			}
		}
		for k := 0; k < cfg.NumRubrics; k++ {
			prefix := fmt.Sprintf("compression_head.crf_layers.%d", k)
			if _, ok := want["model."+prefix+".transitions"]; !ok {
				break
			}
			w, err := readCRF(prefix)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
			}
			m.RubricCRFs = append(m.RubricCRFs, w)
		}
	}
	if lo.bf16Products {
		m.ctx.SetParam(backbone.ParamBF16Products, true)
	}
	if lo.queryBlock > 0 {
		m.ctx.SetParam(backbone.ParamQueryBlock, lo.queryBlock)
	}
	m.ctx = m.ctx.Reuse()
	return m, nil
}

// keepBF16 reports whether a tensor is kept as bfloat16 in memory: the
// backbone's matrices (embedding table and projections, nearly all of the
// model) when the checkpoint stores them as BF16. backbone.Weight widens them
// in the graph, which is exact, so outputs are bit for bit those of a
// float32 copy at half its memory (the embedding table of the released
// 0.6B model alone is 311 MB in bfloat16, 622 MB in float32).
func keepBF16(name string, dt safetensors.DType, shape []int) bool {
	return dt == safetensors.BF16 && len(shape) == 2 && strings.HasPrefix(name, "model.backbone.")
}

// bf16Finite reads a BF16 tensor as stored (NaN and infinities refused).
func bf16Finite(f *safetensors.File, name string) ([]bfloat16.BFloat16, error) {
	bits, err := f.BFloat16Finite(name)
	if err != nil || len(bits) == 0 {
		return []bfloat16.BFloat16{}, err
	}
	// Same size and bits: bfloat16.BFloat16 is a uint16.
	return unsafe.Slice((*bfloat16.BFloat16)(unsafe.Pointer(&bits[0])), len(bits)), nil
}

// resolve validates the config against the tensor shapes and returns the
// resolved Config plus every tensor to load with its expected shape.
func resolve(fc fileConfig, all map[string][]int) (Config, map[string][]int, error) {
	var cfg Config
	bbShapes := backbone.TensorShapes{}
	for name, s := range all {
		if rel, ok := strings.CutPrefix(name, "model.backbone."); ok {
			bbShapes[rel] = s
		}
	}
	bb, err := backbone.InferConfig(bbShapes, fc.BackboneConfig)
	if err != nil {
		return cfg, nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	cfg.Backbone = bb
	cfg.LayerIndices = bb.LayerIndices(orDefault(fc.EarlyLayerRatio, 0.25), orDefault(fc.MiddleLayerRatio, 0.5))
	// Config values the weights cannot contradict are checked against each
	// other and against what the graph can compute. The fusion head count
	// is one: torch's MultiheadAttention stores the same packed in_proj for
	// any head count, so num_heads (8 in every published checkpoint) is
	// used as declared once it divides the fused width.
	for i, r := range []string{"early_layer_ratio", "middle_layer_ratio"} {
		if idx := cfg.LayerIndices[i]; idx < 1 || idx > bb.NumLayers {
			return cfg, nil, fmt.Errorf("%w: %s selects hidden state %d, outside [1,%d] for %d layers",
				ErrCheckpoint, r, idx, bb.NumLayers, bb.NumLayers)
		}
	}
	cfg.FusionHeads = orDefault(fc.NumHeads, 8)
	cfg.FusionLayers = orDefault(fc.NumFusionLayers, 1)
	e := cfg.FusedDim()
	if cfg.FusionHeads <= 0 || e%cfg.FusionHeads != 0 {
		return cfg, nil, fmt.Errorf("%w: num_heads %d does not divide the fused width %d (3 × hidden_size %d)",
			ErrCheckpoint, cfg.FusionHeads, e, bb.HiddenSize)
	}
	if cfg.FusionLayers <= 0 {
		return cfg, nil, fmt.Errorf("%w: num_fusion_layers must be positive, got %d", ErrCheckpoint, cfg.FusionLayers)
	}
	// Counts from config.json size the expected tensors below: each fusion
	// layer needs 6 tensors and each objective its head's rows, so a count
	// beyond what the file holds is refused before anything is built for
	// it (num_fusion_layers = 1e8 took minutes and gigabytes).
	if cfg.FusionLayers > len(all)/6 {
		return cfg, nil, fmt.Errorf("%w: num_fusion_layers %d needs %d tensors; the checkpoint has %d in all",
			ErrCheckpoint, cfg.FusionLayers, 6*cfg.FusionLayers, len(all))
	}
	if fc.NumObjectives > maxObjectives {
		return cfg, nil, fmt.Errorf("%w: num_objectives %d is above %d", ErrCheckpoint, fc.NumObjectives, maxObjectives)
	}
	// Layers the config does not count would be silently skipped: a decoder
	// layer after a gap in the numbering (its input_layernorm missing ends
	// the count) or a fusion layer beyond num_fusion_layers.
	var extra []error
	for name := range all {
		var prefix, what string
		var limit int
		switch {
		case strings.HasPrefix(name, "model.backbone.layers."):
			prefix, what, limit = "model.backbone.layers.", "decoder layers (counted from input_layernorm tensors)", bb.NumLayers
		case strings.HasPrefix(name, "model.fusion_layers."):
			prefix, what, limit = "model.fusion_layers.", "num_fusion_layers", cfg.FusionLayers
		case strings.HasPrefix(name, "model.fusion_norms."):
			prefix, what, limit = "model.fusion_norms.", "num_fusion_layers", cfg.FusionLayers
		default:
			continue
		}
		rest := strings.TrimPrefix(name, prefix)
		num, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(num); err == nil && i >= limit {
			extra = append(extra, fmt.Errorf("tensor %q belongs to layer %d but the checkpoint has %d %s", name, i, limit, what))
		}
	}
	if len(extra) > 0 {
		slices.SortFunc(extra, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return cfg, nil, fmt.Errorf("%w: %w", ErrCheckpoint, errors.Join(extra...))
	}
	if s, ok := all["model.compression_head.feature_extractor.1.weight"]; ok && len(s) == 2 {
		cfg.Bottleneck = s[0]
	} else {
		return cfg, nil, fmt.Errorf("%w: tensor %q missing or not 2-D", ErrCheckpoint, "model.compression_head.feature_extractor.1.weight")
	}
	if fc.Bottleneck != 0 && fc.Bottleneck != cfg.Bottleneck {
		return cfg, nil, fmt.Errorf("%w: config bottleneck %d contradicts tensor shapes (%d)", ErrCheckpoint, fc.Bottleneck, cfg.Bottleneck)
	}
	cfg.NumRubrics = max(fc.NumObjectives, 1)
	k, b := cfg.NumRubrics, cfg.Bottleneck
	cfg.RubricNames = fc.ObjectiveNames
	if len(cfg.RubricNames) != k {
		cfg.RubricNames = nil
		for i := 0; i < k; i++ {
			cfg.RubricNames = append(cfg.RubricNames, fmt.Sprintf("objective_%d", i))
		}
	}

	want := map[string][]int{}
	for name, s := range bb.ExpectedShapes() {
		want["model.backbone."+name] = s
	}
	for i := 0; i < cfg.FusionLayers; i++ {
		p := fmt.Sprintf("model.fusion_layers.%d.", i)
		want[p+"in_proj_weight"] = []int{3 * e, e}
		want[p+"in_proj_bias"] = []int{3 * e}
		want[p+"out_proj.weight"] = []int{e, e}
		want[p+"out_proj.bias"] = []int{e}
		n := fmt.Sprintf("model.fusion_norms.%d.", i)
		want[n+"weight"] = []int{e}
		want[n+"bias"] = []int{e}
	}
	mlp := func(p string, out int) {
		want[p+"0.weight"] = []int{e}
		want[p+"0.bias"] = []int{e}
		want[p+"1.weight"] = []int{b, e}
		want[p+"1.bias"] = []int{b}
		want[p+"4.weight"] = []int{out, b}
		want[p+"4.bias"] = []int{out}
	}
	mlp("model.compression_head.feature_extractor.", 2*k)
	crfTensors := func(p string) {
		want[p+".transitions"] = []int{2, 2}
		want[p+".start_transitions"] = []int{2}
		want[p+".end_transitions"] = []int{2}
	}
	if k == 1 {
		cfg.LegacyCRFPrefix = "compression_head.crf"
		if _, ok := all["model.compression_head.crf.transitions"]; !ok {
			if _, ok := all["model.compression_head.crf_layers.0.transitions"]; ok {
				cfg.LegacyCRFPrefix = "compression_head.crf_layers.0"
			}
		}
		crfTensors("model." + cfg.LegacyCRFPrefix)
	} else {
		cfg.Gating = crf.GatingType(fc.GatingType)
		if cfg.Gating == "" {
			cfg.Gating = crf.GatingSoftmax
		}
		if cfg.Gating != crf.GatingSoftmax && cfg.Gating != crf.GatingSigmoid {
			return cfg, nil, fmt.Errorf("%w: gating_type %q is not supported", ErrCheckpoint, fc.GatingType)
		}
		mlp("model.gating_network.", k)
		cfg.HasFinalCRF = orDefault(fc.UseFinalCRF, true)
		if cfg.HasFinalCRF {
			crfTensors("model.final_crf")
		}
		for i := 0; i < k; i++ {
			p := fmt.Sprintf("model.compression_head.crf_layers.%d", i)
			if _, ok := all[p+".transitions"]; ok {
				crfTensors(p)
			}
		}
	}
	var errs []error
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		got, ok := all[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("tensor %q missing", name))
		case !slices.Equal(got, want[name]):
			errs = append(errs, fmt.Errorf("tensor %q has shape %v, want %v", name, got, want[name]))
		}
	}
	if len(errs) > 0 {
		// want is still returned: it lists the complete layout, which
		// tests use to write checkpoints.
		return cfg, want, fmt.Errorf("%w: %w", ErrCheckpoint, errors.Join(errs...))
	}
	return cfg, want, nil
}

// recoverErr turns a panic raised while building or running a GoMLX graph
// into an error, so no panic escapes the library.
func recoverErr(err *error, what string) {
	if r := recover(); r != nil {
		if e, ok := r.(error); ok {
			*err = fmt.Errorf("%s: %w", what, e)
		} else {
			*err = fmt.Errorf("%s: %v", what, r)
		}
	}
}

// Outputs of one forward pass over a padded batch, kept on the host as flat
// float32 slices.
type batchOutputs struct {
	emissions []float32 // [B,S,K,2]
	gates     []float32 // [B,S,K] (nil when K = 1)
	doc       []float32 // [B,2] = l_yes, l_no
	hidden    [][]float32
	fused     []float32
}

// graphFn builds the whole scorer for one (batch, seq) bucket.
func (m *Model) graphFn(internals bool) func(ctx *mlctx.Context, ids, lengths *Node) []*Node {
	return func(ctx *mlctx.Context, ids, lengths *Node) []*Node {
		cfg := m.cfg
		g := ids.Graph()
		b, s := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
		model := ctx.In("model")
		hidden := backbone.Forward(model.In("backbone"), cfg.Backbone, ids, cfg.LayerIndices[:]...)
		pos := Iota(g, shapes.Make(dtypes.Int32, b, s), 1)
		valid := LessThan(pos, Reshape(lengths, b, 1))
		fused := backbone.Fusion(model, hidden, valid, cfg.FusionHeads, cfg.FusionLayers)
		em := crf.EmissionHead(model.In("compression_head"), fused, cfg.Bottleneck, cfg.NumRubrics)
		doc := backbone.DocLogits(model.In("backbone"), cfg.Backbone, hidden[2], AddScalar(lengths, -1))
		out := []*Node{em, doc}
		if cfg.NumRubrics > 1 {
			out = append(out, crf.Gates(model.In("gating_network"), fused, cfg.Bottleneck, cfg.NumRubrics, cfg.Gating))
		}
		if internals {
			out = append(out, fused)
			out = append(out, hidden...)
		}
		return out
	}
}

func (m *Model) executable(internals bool) (*mlctx.Exec, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &m.exec
	if internals {
		p = &m.debug
	}
	if *p == nil {
		e, err := mlctx.NewExec(m.backend, m.ctx, m.graphFn(internals))
		if err != nil {
			return nil, fmt.Errorf("skimmer: create executable: %w", err)
		}
		// Shapes are bucketed (see Buckets), so the cache stays small; the
		// default limit of 32 would still be reachable by a long-running
		// process that sees every bucket.
		e.SetMaxCache(-1)
		*p = e
	}
	return *p, nil
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	ex := math.Exp(x)
	return ex / (1 + ex)
}
