package bert

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/prunekit/pruner/internal/fastcpu"
	"github.com/prunekit/pruner/internal/safetensors"
	"github.com/prunekit/pruner/internal/wordpiece"
)

// Model is a loaded sentence encoder. It is safe for concurrent use: the
// weights are read-only and each call takes its own buffers from a pool.
type Model struct {
	cfg     Config
	tok     *wordpiece.Tokenizer
	w       *weights
	workers int
	// batchTokens bounds the tokens of one forward pass (the buffers
	// grow with it: about 5·H + I floats a token).
	batchTokens int
	serial      *fastcpu.Gemm // one worker's products; the workers split the work
	pool        sync.Pool     // *workspace
	scratch     sync.Pool     // *attnScratch
}

// Option changes how Load sets up a Model.
type Option func(*options)

type options struct {
	maxLength   int
	workers     int
	batchTokens int
}

// WithMaxLength caps the sequences Embed reads at n tokens, [CLS] and
// [SEP] included (the folder's max_seq_length otherwise). Load refuses n
// below 2 or above max_position_embeddings.
func WithMaxLength(n int) Option { return func(o *options) { o.maxLength = n } }

// WithWorkers sets how many goroutines one call uses (GOMAXPROCS at Load by
// default).
func WithWorkers(n int) Option { return func(o *options) { o.workers = n } }

// WithBatchTokens sets how many tokens one forward pass takes (2048 by
// default; a longer sequence still runs alone). Larger batches make the
// products faster up to a few thousand tokens and cost memory.
func WithBatchTokens(n int) Option { return func(o *options) { o.batchTokens = n } }

// DefaultBatchTokens is the default of WithBatchTokens.
const DefaultBatchTokens = 2048

// Load reads a BERT sentence encoder from a folder laid out as Hugging Face
// and sentence-transformers save one: config.json, model.safetensors
// (F32, F16 or BF16; names with or without the "bert." prefix), vocab.txt
// and tokenizer_config.json, and optionally modules.json with its Pooling
// module's config.json (mean or CLS pooling; mean without modules.json)
// and sentence_bert_config.json (max_seq_length). The folder is validated
// before the model is returned: every missing or mis-shaped tensor is
// named, config values are checked against each other and the tensors,
// and every weight must be finite. Such errors wrap ErrCheckpoint. ctx is
// checked between tensors; a cancelled load returns ctx's error.
func Load(ctx context.Context, dir string, opts ...Option) (*Model, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bert: load %s: %w", dir, err)
	}
	cfg, err := readConfig(dir)
	if err != nil {
		return nil, err
	}
	tok, err := wordpiece.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	path := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	defer f.Close()
	shapes := map[string][]int{}
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		shapes[name] = info.Shape
	}
	names, _, err := resolve(&cfg, shapes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if tok.VocabSize() > cfg.VocabSize {
		return nil, fmt.Errorf("%w: %s has %d tokens, the embeddings %d rows",
			ErrCheckpoint, filepath.Join(dir, "vocab.txt"), tok.VocabSize(), cfg.VocabSize)
	}
	w, err := readWeights(ctx, f, cfg, names)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, fmt.Errorf("bert: load %s: %w", dir, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return newModel(cfg, tok, w, o)
}

// newModel applies the options and sets up the kernels.
func newModel(cfg Config, tok *wordpiece.Tokenizer, w *weights, o options) (*Model, error) {
	if o.maxLength != 0 {
		if o.maxLength < 2 || o.maxLength > cfg.MaxPositions {
			return nil, fmt.Errorf("bert: max length %d is outside [2, %d] (max_position_embeddings)", o.maxLength, cfg.MaxPositions)
		}
		cfg.MaxLength = o.maxLength
	}
	m := &Model{cfg: cfg, tok: tok, w: w, workers: o.workers, batchTokens: o.batchTokens}
	if m.workers <= 0 {
		m.workers = runtime.GOMAXPROCS(0)
	}
	if m.batchTokens <= 0 {
		m.batchTokens = DefaultBatchTokens
	}
	m.serial = fastcpu.NewGemm(fastcpu.WithWorkers(1))
	return m, nil
}

// Config returns the model's validated configuration.
func (m *Model) Config() Config { return m.cfg }

// Tokenizer returns the model's WordPiece tokenizer.
func (m *Model) Tokenizer() *wordpiece.Tokenizer { return m.tok }

// MaxLength is the longest sequence Embed reads, in tokens, [CLS] and
// [SEP] included; longer texts are truncated.
func (m *Model) MaxLength() int { return m.cfg.MaxLength }

// Dim is the length of the sentence vectors.
func (m *Model) Dim() int { return m.cfg.Hidden }

// Embed returns one L2-normalised sentence vector per text (the model's
// pooling, then normalisation, as sentence-transformers' encode with
// normalize_embeddings computes it). Each text is tokenized as HF does
// (special tokens in the text included) and truncated to MaxLength. The
// texts run in batches of about WithBatchTokens tokens; ctx is checked
// between batches and between layers.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	seqs := make([][]int32, len(texts))
	for i, text := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		seqs[i] = m.tok.Sequence(text, m.cfg.MaxLength)
	}
	return m.EmbedIDs(ctx, seqs)
}

// EmbedIDs is Embed for token sequences: each must hold 1 to MaxLength ids
// below the vocabulary size (Tokenizer().Sequence makes them).
func (m *Model) EmbedIDs(ctx context.Context, seqs [][]int32) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	vecs := make([]float32, len(seqs)*m.cfg.Hidden)
	for i := range out {
		out[i] = vecs[i*m.cfg.Hidden : (i+1)*m.cfg.Hidden : (i+1)*m.cfg.Hidden]
	}
	err := m.run(ctx, seqs, func(ws *workspace, first int, batch [][]int32) {
		for i := range batch {
			m.pool1(out[first+i], ws, i)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// HiddenStates returns the last layer's states of each sequence's tokens
// ([len, H] row-major each), before pooling.
func (m *Model) HiddenStates(ctx context.Context, seqs [][]int32) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	h := m.cfg.Hidden
	err := m.run(ctx, seqs, func(ws *workspace, first int, batch [][]int32) {
		for i := range batch {
			out[first+i] = append([]float32(nil), ws.x[ws.start[i]*h:ws.start[i+1]*h]...)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// run checks the sequences and runs them through the model in batches,
// handing each batch's workspace to done.
func (m *Model) run(ctx context.Context, seqs [][]int32, done func(ws *workspace, first int, batch [][]int32)) error {
	for i, s := range seqs {
		if len(s) == 0 || len(s) > m.cfg.MaxLength {
			return fmt.Errorf("bert: sequence %d has %d tokens, want 1 to %d", i, len(s), m.cfg.MaxLength)
		}
		for j, id := range s {
			if id < 0 || int(id) >= m.cfg.VocabSize {
				return fmt.Errorf("bert: sequence %d: token %d is id %d, outside the vocabulary [0, %d)", i, j, id, m.cfg.VocabSize)
			}
		}
	}
	ws, _ := m.pool.Get().(*workspace)
	if ws == nil {
		ws = new(workspace)
	}
	defer m.pool.Put(ws)
	for first := 0; first < len(seqs); {
		if err := ctx.Err(); err != nil {
			return err
		}
		end, tokens := first, 0
		for end < len(seqs) && (end == first || tokens+len(seqs[end]) <= m.batchTokens) {
			tokens += len(seqs[end])
			end++
		}
		if err := m.forward(ctx, ws, seqs[first:end]); err != nil {
			return err
		}
		done(ws, first, seqs[first:end])
		first = end
	}
	return nil
}

// pool1 writes sequence i's sentence vector: its pooled states, L2
// normalised (with sentence-transformers' floor of 1e-12 on the norm).
func (m *Model) pool1(dst []float32, ws *workspace, i int) {
	h := m.cfg.Hidden
	x := ws.x[ws.start[i]*h : ws.start[i+1]*h]
	n := ws.start[i+1] - ws.start[i]
	acc := make([]float64, h)
	if m.cfg.Pooling == PoolCLS {
		n = 1
	}
	for t := 0; t < n; t++ {
		for j, v := range x[t*h : (t+1)*h] {
			acc[j] += float64(v)
		}
	}
	var norm float64
	for j := range acc {
		acc[j] /= float64(n)
		norm += acc[j] * acc[j]
	}
	inv := 1 / math.Max(math.Sqrt(norm), 1e-12)
	for j, v := range acc {
		dst[j] = float32(v * inv)
	}
}
