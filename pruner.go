package pruner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/crf"
	"github.com/prunekit/pruner/internal/backend"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/regfile"
	"github.com/prunekit/pruner/internal/skimmer"
	"github.com/prunekit/pruner/internal/tokenizer"
)

// Sentinel errors callers can branch on with errors.Is.
var (
	// ErrBadCheckpoint: the checkpoint folder is missing, damaged or of an
	// unsupported layout. It is the checkpoint reader's own sentinel, so
	// that a message says "bad checkpoint" once.
	ErrBadCheckpoint = skimmer.ErrCheckpoint
	// ErrUnsupportedBackend: the requested GoMLX backend is not available.
	ErrUnsupportedBackend = errors.New("unsupported backend")
	// ErrInputTooLarge: the text exceeds WithMaxInputBytes or
	// WithMaxInputLines.
	ErrInputTooLarge = errors.New("input too large")
)

// Pruner prunes texts against queries with one loaded model. It is safe for
// concurrent use; the weights are shared by all calls and by Pruners derived
// with With.
type Pruner struct {
	cfg  config
	sc   scorer // the scoring stage: a built-in or a user's Scorer
	tok  *tokenizer.Tokenizer
	kind string // the scorer's name (Result.Scorer)
}

// Load reads a SWE-Pruner or LaMR checkpoint folder (config.json,
// model.safetensors and, optionally, the Qwen tokenizer files; the embedded
// Qwen3 tokenizer is used when they are absent) and returns a Pruner. A
// folder written by the line model's trainer (examples/train; its
// config.json says "kind": "linemodel-lamr") loads as a line model with
// those weights. An
// empty dir selects the built-in line model (ScorerLine), a small model
// embedded in the library that scores lines on the CPU in milliseconds;
// WithScorer(ScorerLexical) selects the BM25 baseline instead. Results name
// their scorer in Result.Scorer.
//
// A dir of the form "hf:owner/name" or "hf:owner/name@revision" names a
// checkpoint on the Hugging Face Hub: it is fetched into the Hub's cache
// (see Download; WithDownloadProgress reports progress) unless cached,
// then loaded from there. Nothing is downloaded for any other dir.
func Load(ctx context.Context, dir string, opts ...Option) (*Pruner, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("pruner: %w", err)
		}
	}
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("pruner: %w", err)
	}
	if cfg.scorer == ScorerSemantic && dir == "" {
		return nil, fmt.Errorf("pruner: %w: the %s scorer reads a sentence encoder: Load a sentence-transformers BERT folder or hf:sentence-transformers/all-MiniLM-L6-v2", ErrOption, ScorerSemantic)
	}
	if cfg.scorer == ScorerLexical || cfg.scorer == ScorerLine || dir == "" {
		// No checkpoint (or a built-in scorer asked for by name): the
		// embedded line model, or the lexical baseline, labelled as such.
		tok, err := tokenizer.Qwen3()
		if err != nil {
			return nil, fmt.Errorf("pruner: tokenizer: %w", err)
		}
		p := &Pruner{cfg: cfg, tok: tok, sc: lexicalStage{}, kind: ScorerLexical}
		if cfg.scorer != ScorerLexical {
			m, err := linemodel.Embedded()
			if err != nil {
				return nil, fmt.Errorf("pruner: %w: embedded line model: %w", ErrBadCheckpoint, err)
			}
			p.sc, p.kind = lineStage{m}, ScorerLine
		}
		if err := p.checkDecision(); err != nil {
			return nil, err
		}
		return p, nil
	}
	if strings.HasPrefix(dir, HubPrefix) {
		d, err := download(ctx, dir, cfg.hub)
		if err != nil {
			return nil, fmt.Errorf("pruner: %w", err)
		}
		dir = d
	}
	encoder := isSentenceEncoder(dir)
	if cfg.scorer == ScorerSemantic && !encoder {
		return nil, fmt.Errorf("pruner: %w: the %s scorer needs a sentence encoder (a sentence-transformers BERT folder, e.g. hf:sentence-transformers/all-MiniLM-L6-v2); %s is not one", ErrBadCheckpoint, ScorerSemantic, dir)
	}
	if encoder {
		sc, err := loadSemantic(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("pruner: %w", err)
		}
		tok, err := tokenizer.Qwen3()
		if err != nil {
			return nil, fmt.Errorf("pruner: tokenizer: %w", err)
		}
		p := &Pruner{cfg: cfg, tok: tok, sc: sc, kind: ScorerSemantic}
		if err := p.checkDecision(); err != nil {
			return nil, err
		}
		return p, nil
	}
	if isLineModel(dir) {
		// A line model trained with examples/train: the same scorer as
		// the embedded one, other weights.
		m, err := linemodel.LoadFS(regularFS(dir), dir)
		if err != nil {
			return nil, fmt.Errorf("pruner: %w: %w", ErrBadCheckpoint, err)
		}
		tok, err := tokenizer.Qwen3()
		if err != nil {
			return nil, fmt.Errorf("pruner: tokenizer: %w", err)
		}
		p := &Pruner{cfg: cfg, tok: tok, sc: lineStage{m}, kind: ScorerLine}
		if err := p.checkDecision(); err != nil {
			return nil, err
		}
		return p, nil
	}
	name, graphBF16, err := backend.WithPrecision(cfg.backend, string(cfg.precision))
	if err != nil {
		return nil, fmt.Errorf("pruner: %w: %w", ErrUnsupportedBackend, err)
	}
	b, err := backend.New(name)
	if err != nil {
		return nil, fmt.Errorf("pruner: %w: %w", ErrUnsupportedBackend, err)
	}
	var lopts []skimmer.LoadOption
	if graphBF16 {
		lopts = append(lopts, skimmer.WithBF16Products())
	}
	if cfg.attnBlock > 0 {
		lopts = append(lopts, skimmer.WithQueryBlock(cfg.attnBlock))
	}
	model, err := skimmer.LoadContext(ctx, dir, b, lopts...)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, skimmer.ErrCheckpoint) {
			return nil, fmt.Errorf("pruner: load %s: %w", dir, err)
		}
		return nil, fmt.Errorf("pruner: %w", checkpointError(dir, err))
	}
	tok, err := loadTokenizer(dir)
	if err != nil {
		return nil, fmt.Errorf("pruner: %w: %w", ErrBadCheckpoint, err)
	}
	mc := model.Config()
	if tok.VocabSize() > mc.Backbone.VocabSize {
		return nil, fmt.Errorf("pruner: %w: tokenizer has %d tokens but the embedding only %d rows",
			ErrBadCheckpoint, tok.VocabSize(), mc.Backbone.VocabSize)
	}
	sk := &skimmer.Scorer{Model: model, Prefix: chunk.DefaultPrefixIDs(), Suffix: chunk.DefaultSuffixIDs()}
	p := &Pruner{cfg: cfg, sc: skimStage{sk}, tok: tok, kind: "swe-pruner"}
	if mc.NumRubrics > 1 {
		p.kind = "lamr"
	}
	if w := model.FinalCRF; len(w.Transitions) > 0 {
		sk.Params, err = crf.NewParams(w.Transitions, w.Start, w.End, 2)
		if err != nil {
			return nil, fmt.Errorf("pruner: %w: final CRF: %w", ErrBadCheckpoint, err)
		}
		sk.CRF = true
	}
	if err := p.checkDecision(); err != nil {
		return nil, err
	}
	return p, nil
}

// isLineModel reports whether dir's config.json names a line model
// (written by examples/train) rather than a SWE-Pruner or LaMR checkpoint.
func isLineModel(dir string) bool {
	// regfile: a FIFO named config.json must not block Load.
	b, err := regfile.ReadFile(filepath.Join(dir, "config.json"), 16<<20)
	if err != nil {
		return false
	}
	var c struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(b, &c) == nil && c.Kind == linemodel.Kind
}

// regularFS reads the files of a folder that must be regular files (see
// internal/regfile), so that a FIFO or a device in a checkpoint folder is
// an error, not a read that blocks or never ends.
type regularFS string

func (d regularFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, _, err := regfile.Open(filepath.Join(string(d), filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// checkpointError returns err, a failure to load the checkpoint in dir, as
// an ErrBadCheckpoint error that names dir and the sentinel once each: the
// checkpoint reader's errors already wrap ErrBadCheckpoint and mostly name
// the file at fault (a path under dir).
func checkpointError(dir string, err error) error {
	if !errors.Is(err, ErrBadCheckpoint) {
		err = fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	if strings.Contains(err.Error(), dir) {
		return err
	}
	return fmt.Errorf("%s: %w", dir, err)
}

// With returns a Pruner that shares p's model and applies opts on top of p's
// options (for instance a per-request threshold). The backend cannot change.
func (p *Pruner) With(opts ...Option) (*Pruner, error) {
	q := *p
	for _, o := range opts {
		if err := o(&q.cfg); err != nil {
			return nil, fmt.Errorf("pruner: %w", err)
		}
	}
	if err := q.cfg.check(); err != nil {
		return nil, fmt.Errorf("pruner: %w", err)
	}
	if q.cfg.backend != p.cfg.backend {
		return nil, fmt.Errorf("pruner: %w: the backend is fixed at Load", ErrOption)
	}
	if q.cfg.precision.resolved() != p.cfg.precision.resolved() {
		return nil, fmt.Errorf("pruner: %w: the precision is fixed at Load", ErrOption)
	}
	if q.cfg.attnBlock != p.cfg.attnBlock {
		return nil, fmt.Errorf("pruner: %w: the attention block is fixed at Load", ErrOption)
	}
	if scorerName(q.cfg.scorer) != scorerName(p.cfg.scorer) {
		return nil, fmt.Errorf("pruner: %w: the scorer is fixed at Load", ErrOption)
	}
	if err := q.checkDecision(); err != nil {
		return nil, err
	}
	return &q, nil
}

// scorerName reads "" as ScorerAuto.
func scorerName(s string) string {
	if s == "" {
		return ScorerAuto
	}
	return s
}

func (p *Pruner) checkDecision() error {
	d := p.decision()
	if (d == Viterbi || d == Marginal) && !p.sc.hasCRF() {
		return fmt.Errorf("pruner: %w: decision %q needs a CRF, and this checkpoint has none", ErrOption, d)
	}
	return nil
}

// decision resolves DecisionDefault from the checkpoint kind: LaMR
// checkpoints decode with their final CRF as the fork does, SWE-Pruner
// checkpoints use keep probabilities as the original service does.
func (p *Pruner) decision() Decision {
	if p.cfg.decision != DecisionDefault {
		return p.cfg.decision
	}
	if p.kind == "lamr" && p.sc.hasCRF() {
		return Viterbi
	}
	return Prob
}

// Kind names what scores lines: "swe-pruner" (one rubric), "lamr"
// (semantic and dependency rubrics with gating), "line" (the embedded line
// model), "lexical" (BM25) or a Scorer's Name (New).
func (p *Pruner) Kind() string { return p.kind }

// loadTokenizer reads the checkpoint's tokenizer files, or takes the
// embedded Qwen3 tokenizer when the folder has none. A vocab.json that is
// there but cannot be read (a dangling link an interrupted download left,
// a link loop, no permission) is an error, not a reason to fall back.
func loadTokenizer(dir string) (*tokenizer.Tokenizer, error) {
	path := filepath.Join(dir, "vocab.json")
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return tokenizer.Qwen3()
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("vocab.json: %w", err)
	}
	return tokenizer.Load(dir)
}

// encode adapts the tokenizer's tokens to the chunk package's.
func (p *Pruner) encode(text string) []chunk.Token {
	toks := p.tok.Encode(text)
	out := make([]chunk.Token, len(toks))
	for i, t := range toks {
		out[i] = chunk.Token{ID: t.ID, Start: t.Start, End: t.End, ByteStart: t.ByteStart, ByteEnd: t.ByteEnd}
	}
	return out
}

// recoverTo turns a panic inside the library into an error so that none
// escapes the API.
func recoverTo(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("pruner: internal error: %v", r)
	}
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
