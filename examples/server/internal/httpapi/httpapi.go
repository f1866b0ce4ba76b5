// Package httpapi is the HTTP face of a pruner.Pruner: the SWE-Pruner
// service's API (GET /health, POST /prune) so that existing agent
// integrations work unchanged, plus a native POST /v1/prune that returns the
// library's full Result in its one JSON shape (pruner.Result's MarshalJSON,
// as examples/prune -json and the MCP tools' _meta print it).
//
// The SWE-Pruner request and response schema follow the original service
// (github.com/Ayanami1314/swe-pruner, PruneRequest / PruneResponse):
//
//	POST /prune {"query", "code", "threshold" (0.5), "always_keep_first_frags" (false), "chunk_overlap_tokens" (50)}
//	→ {"score", "pruned_code", "token_scores", "kept_frags", "origin_token_cnt",
//	   "left_token_cnt", "model_input_token_cnt", "error_msg"}
//
// pruned_code, kept_frags, score and the token counts are those of the
// service (pruner.WithSWEPrunerCompat). token_scores lists [token text,
// score] pairs of the merged per-token scores (empty for the scorers that
// score lines: the embedded line model and the lexical baseline).
//
// A /v1/prune request whose options carry expand (line ranges or names a
// placeholder prints, pruner.Result.Unfold) is a follow-up: the server
// unfolds the last view it sent for the same reader, text, query and
// options (Config.ViewBytes bounds that memory), and the reply, the
// library's Result JSON with one more field, "view": "delta", has in text
// only the new lines, numbered as nl -ba numbers them, with the
// placeholders around them (pruner.Result.Delta); with "full_view": true,
// text is the whole view and "view" is "full". The other fields (lines,
// placeholders, kept_lines, expanded, tokens) describe the whole view
// after unfolding.
//
// Errors are JSON objects {"error_msg": "..."} with status 400 (malformed
// JSON, missing query or code, invalid option, an expand item that names
// nothing, in which case "closest" lists the text's nearest names), 404 (no such path), 405
// (wrong method; the Allow header lists the right ones), 413 (body over the
// limit, or a text over the pruner's input limit), 422 (a text that looks
// binary), 503 (server busy: no pruning slot before the request's
// deadline, too many prunes still running past theirs, or the server
// shutting down), 504 (the prune passed the request's deadline) or 500 (including a result that cannot be encoded as
// JSON, such as a NaN score). No response is ever a 200 with an empty body:
// responses are encoded in full before the status line is written.
//
// A request's deadline (Config.Timeout) bounds the work done on its behalf:
// when it passes, the client gets 504 at once and the request's concurrency
// slot is freed, even if the prune has not noticed the cancellation yet. Such
// overrunning prunes are counted; while more than Config.MaxOverrun of them
// are still running, new requests get 503, so CPU use stays bounded.
//
// GET /health runs a real prune on a tiny input through the model (the
// result is cached for Config.HealthTTL) and answers 200 only when it
// succeeds with finite scores; otherwise 503 with status "unhealthy" and the
// reason in error_msg.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/tokenizer"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultTimeout      = 2 * time.Minute
	DefaultHealthTTL    = 10 * time.Second
)

// The health probe: a real prune of a tiny input.
const (
	healthQuery = "health check: return the sum"
	healthText  = "def add(a, b):\n    return a + b\n"
)

// SWE-Pruner request defaults (PruneRequest in the original service).
const (
	defaultThreshold = 0.5
	defaultOverlap   = 50
)

// Config tunes the handler; the zero value is usable.
type Config struct {
	// MaxBodyBytes caps a request body; larger bodies get 413
	// (0: DefaultMaxBodyBytes; negative: no cap). The pruner's own input
	// limit (pruner.WithMaxInputBytes) still applies to the text.
	MaxBodyBytes int64
	// Timeout bounds one request's wait for a slot plus its prune: a
	// request that gets no slot in time gets 503, one whose prune is still
	// running then gets 504 and frees its slot (default DefaultTimeout).
	Timeout time.Duration
	// MaxConcurrent bounds the prunes running at once; further requests wait
	// for a slot until their timeout (default GOMAXPROCS).
	MaxConcurrent int
	// MaxOverrun bounds the prunes still running after their request's
	// deadline (they no longer hold a slot): while more are running, new
	// requests get 503 at once (default MaxConcurrent).
	MaxOverrun int
	// HealthTTL is how long a /health result is reused (default
	// DefaultHealthTTL; negative: probe on every call).
	HealthTTL time.Duration
	// HealthTimeout bounds the /health probe (default: Timeout, at most
	// 30 seconds).
	HealthTimeout time.Duration
	// TokenizerDir is the checkpoint folder; its vocab.json, when present,
	// counts the tokens of model_input_token_cnt (default: the embedded
	// Qwen3 tokenizer, as the pruner itself does).
	TokenizerDir string
	// Logger receives one line per failed request (default: discard).
	Logger *slog.Logger
	// ViewBytes bounds the memory of the last view sent per reader, text,
	// query and options, which /v1/prune follow-ups answer with a delta
	// against (default pruner.DefaultViewBytes; negative: none, so a
	// follow-up's delta is against the first view, pruned again).
	ViewBytes int64
}

// Handler serves the pruning API. It is safe for concurrent use.
type Handler struct {
	base    engine
	tok     *tokenizer.Tokenizer
	cfg     Config
	slots   chan struct{}
	overrun atomic.Int64 // prunes still running past their deadline
	mux     *http.ServeMux
	prompt  int           // prefix + suffix tokens of the model input
	views   *pruner.Views // nil: follow-ups unfold the first view

	healthMu       sync.Mutex
	healthAt       time.Time
	healthErr      error
	healthValid    bool
	healthInflight chan struct{}
}

// engine is what the handler prunes with: a *pruner.Pruner in production,
// a fake in tests (a model that produces NaN, or one that ignores deadlines).
type engine interface {
	With(opts ...pruner.Option) (engine, error)
	Prune(ctx context.Context, query, text string) (*pruner.Result, error)
	Kind() string
}

type libEngine struct{ p *pruner.Pruner }

func (e libEngine) With(opts ...pruner.Option) (engine, error) {
	q, err := e.p.With(opts...)
	if err != nil {
		return nil, err
	}
	return libEngine{q}, nil
}

func (e libEngine) Prune(ctx context.Context, query, text string) (*pruner.Result, error) {
	return e.p.Prune(ctx, query, text)
}

func (e libEngine) Kind() string { return e.p.Kind() }

// New returns a Handler pruning with p. p's options are the defaults of
// every request; request fields override them per call.
func New(p *pruner.Pruner, cfg Config) (*Handler, error) {
	if p == nil {
		return nil, errors.New("httpapi: nil pruner")
	}
	return newHandler(libEngine{p}, cfg)
}

func newHandler(e engine, cfg Config) (*Handler, error) {
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = runtime.GOMAXPROCS(0)
	}
	if cfg.MaxOverrun <= 0 {
		cfg.MaxOverrun = cfg.MaxConcurrent
	}
	if cfg.HealthTTL == 0 {
		cfg.HealthTTL = DefaultHealthTTL
	}
	if cfg.HealthTimeout <= 0 {
		cfg.HealthTimeout = min(cfg.Timeout, 30*time.Second)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tok, err := loadTokenizer(cfg.TokenizerDir)
	if err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	h := &Handler{
		base:   e,
		tok:    tok,
		cfg:    cfg,
		slots:  make(chan struct{}, cfg.MaxConcurrent),
		mux:    http.NewServeMux(),
		prompt: len(chunk.DefaultPrefixIDs()) + len(chunk.DefaultSuffixIDs()),
	}
	if cfg.ViewBytes >= 0 {
		h.views = &pruner.Views{MaxBytes: cfg.ViewBytes}
	}
	h.mux.HandleFunc("GET /health", h.health)
	h.mux.HandleFunc("POST /prune", h.prune)
	h.mux.HandleFunc("POST /v1/prune", h.prunev1)
	return h, nil
}

func loadTokenizer(dir string) (*tokenizer.Tokenizer, error) {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "vocab.json")); err == nil {
			return tokenizer.Load(dir)
		}
	}
	return tokenizer.Qwen3()
}

// ServeHTTP implements http.Handler. Unknown paths (404) and wrong methods
// (405, with the Allow header) get JSON error bodies like every other error.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			h.cfg.Logger.Error("panic", "path", r.URL.Path, "panic", v)
			h.writeError(w, http.StatusInternalServerError, "internal error")
		}
	}()
	if _, pattern := h.mux.Handler(r); pattern == "" {
		// The mux's own 404 or 405 answer, captured and re-sent as JSON.
		rec := &captureWriter{header: http.Header{}}
		h.mux.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 || status == http.StatusOK {
			status = http.StatusNotFound
		}
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		msg := fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)
		if status == http.StatusMethodNotAllowed {
			msg = fmt.Sprintf("method %s not allowed for %s (allowed: %s)", r.Method, r.URL.Path, rec.header.Get("Allow"))
		}
		h.writeError(w, status, msg)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// captureWriter records the status and headers of the mux's fallback
// handlers and drops their plain-text body.
type captureWriter struct {
	header http.Header
	status int
}

func (c *captureWriter) Header() http.Header { return c.header }
func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}
func (c *captureWriter) Write(p []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	return len(p), nil
}

// health answers as the original service does, plus the scorer kind, but
// only after a real prune of a tiny input has succeeded with finite scores
// (cached for HealthTTL); otherwise 503 with status "unhealthy".
func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	if err := h.Check(r.Context()); err != nil {
		h.cfg.Logger.Warn("health check failed", "err", err)
		h.writeJSON(w, http.StatusServiceUnavailable, map[string]any{
			"status": "unhealthy", "model_loaded": true, "scorer": h.base.Kind(), "error_msg": err.Error(),
		})
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"status": "healthy", "model_loaded": true, "scorer": h.base.Kind()})
}

// Check runs the health probe — a real prune of a tiny input, which must
// succeed within HealthTimeout with finite scores — and returns why it
// failed, or nil. A result younger than HealthTTL is reused, and concurrent
// callers share one probe. The server runs it before it starts listening.
func (h *Handler) Check(ctx context.Context) error {
	h.healthMu.Lock()
	if h.healthValid && h.cfg.HealthTTL > 0 && time.Since(h.healthAt) < h.cfg.HealthTTL {
		err := h.healthErr
		h.healthMu.Unlock()
		return err
	}
	if ch := h.healthInflight; ch != nil {
		h.healthMu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("health check: %w", ctx.Err())
		}
		h.healthMu.Lock()
		err := h.healthErr
		h.healthMu.Unlock()
		return err
	}
	ch := make(chan struct{})
	h.healthInflight = ch
	h.healthMu.Unlock()

	err := h.probe()

	h.healthMu.Lock()
	h.healthErr, h.healthAt, h.healthValid, h.healthInflight = err, time.Now(), true, nil
	h.healthMu.Unlock()
	close(ch)
	return err
}

// WarmUp prunes the health input once, bounded by ctx alone: a model's
// first call compiles its graph (tens of seconds for XLA, longer for a
// large checkpoint on a CPU), which the health probe's timeout is not
// meant to cover. Call it before serving, then Check.
func (h *Handler) WarmUp(ctx context.Context) error {
	res, err := h.base.Prune(ctx, healthQuery, healthText)
	if err != nil {
		return fmt.Errorf("warm-up prune failed: %w", err)
	}
	if err := checkFinite(res); err != nil {
		return fmt.Errorf("warm-up prune: %w", err)
	}
	return nil
}

// probe prunes the health input. It does not take a pruning slot (the input
// is tiny), so a busy server still reports on its model; its own timeout
// bounds it, and a probe that overruns it counts as overrunning work.
func (h *Handler) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.HealthTimeout)
	defer cancel()
	res, err := h.bounded(ctx, h.base, healthQuery, healthText)
	if err != nil {
		return fmt.Errorf("health check prune failed: %w", err)
	}
	if err := checkFinite(res); err != nil {
		return fmt.Errorf("health check prune: %w", err)
	}
	return nil
}

// checkFinite reports a NaN or infinite score in res: such a result cannot
// be encoded as JSON and means the model is broken.
func checkFinite(res *pruner.Result) error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	if bad(res.Score) {
		return fmt.Errorf("document score is %v", res.Score)
	}
	for _, l := range res.Lines {
		if bad(l.Score) {
			return fmt.Errorf("line %d score is %v", l.Number, l.Score)
		}
	}
	for i, ts := range res.TokenScores {
		if bad(ts.Score) {
			return fmt.Errorf("token %d score is %v", i, ts.Score)
		}
	}
	return nil
}

// PruneRequest is the SWE-Pruner service's request. Pointers tell absent
// fields (which take the service's defaults) from zero values.
type PruneRequest struct {
	Query                *string  `json:"query"`
	Code                 *string  `json:"code"`
	Threshold            *float64 `json:"threshold"`
	AlwaysKeepFirstFrags bool     `json:"always_keep_first_frags"`
	ChunkOverlapTokens   *int     `json:"chunk_overlap_tokens"`
}

// PruneResponse is the SWE-Pruner service's response.
type PruneResponse struct {
	// Score is the document relevance (max over windows).
	Score float64 `json:"score"`
	// PrunedCode is the service's rendering: kept lines, "(filtered N lines)".
	PrunedCode string `json:"pruned_code"`
	// TokenScores holds [token text, score] pairs, in text order.
	TokenScores [][]any `json:"token_scores"`
	// KeptFrags lists the kept 1-based lines (Python splitlines numbering),
	// gap-filled lines included.
	KeptFrags []int `json:"kept_frags"`
	// OriginTokenCnt counts the tokens of code.
	OriginTokenCnt int `json:"origin_token_cnt"`
	// LeftTokenCnt counts the tokens of pruned_code.
	LeftTokenCnt int `json:"left_token_cnt"`
	// ModelInputTokenCnt is the service's figure: query part (as budgeted) +
	// code + prompt prefix and suffix tokens, once, whatever the windows.
	ModelInputTokenCnt int `json:"model_input_token_cnt"`
	// ErrorMsg is null on success; when the text came back unpruned it says
	// why.
	ErrorMsg *string `json:"error_msg"`
}

type errorBody struct {
	ErrorMsg string `json:"error_msg"`
	// Closest lists the text's names nearest an expand name that names
	// nothing, so a client can ask again.
	Closest []string `json:"closest,omitempty"`
}

func (h *Handler) prune(w http.ResponseWriter, r *http.Request) {
	var req PruneRequest
	if status, err := h.decode(w, r, &req); err != nil {
		h.fail(w, r, status, err)
		return
	}
	switch {
	case req.Query == nil:
		h.fail(w, r, http.StatusBadRequest, errors.New("missing field: query"))
		return
	case req.Code == nil:
		h.fail(w, r, http.StatusBadRequest, errors.New("missing field: code"))
		return
	}
	threshold, overlap := defaultThreshold, defaultOverlap
	if req.Threshold != nil {
		threshold = *req.Threshold
	}
	if req.ChunkOverlapTokens != nil {
		overlap = *req.ChunkOverlapTokens
	}
	p, err := h.base.With(pruner.WithoutBudget(), pruner.WithSWEPrunerCompat(), pruner.WithThreshold(threshold),
		pruner.WithOverlap(overlap), pruner.WithKeepFirstLine(req.AlwaysKeepFirstFrags))
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	res, status, err := h.run(r.Context(), p, *req.Query, *req.Code)
	if err != nil {
		h.fail(w, r, status, err)
		return
	}
	out := PruneResponse{
		Score:          res.Score,
		PrunedCode:     res.Text,
		TokenScores:    make([][]any, 0, len(res.TokenScores)),
		KeptFrags:      res.KeptLines(),
		OriginTokenCnt: res.Tokens.Input,
		LeftTokenCnt:   res.Tokens.Kept,
	}
	for _, ts := range res.TokenScores {
		out.TokenScores = append(out.TokenScores, []any{(*req.Code)[ts.Start:ts.End], ts.Score})
	}
	if out.KeptFrags == nil {
		out.KeptFrags = []int{}
	}
	if res.Unpruned != "" {
		msg := "not pruned: " + res.Unpruned
		out.ErrorMsg = &msg
	} else {
		// The service counts the query as formatted for window budgeting.
		q := len(h.tok.Encode(chunk.FormatQuery(chunk.BudgetInstruction, *req.Query)))
		out.ModelInputTokenCnt = q + res.Tokens.Input + h.prompt
	}
	h.writeJSON(w, http.StatusOK, out)
}

// NativeRequest is the body of POST /v1/prune.
type NativeRequest struct {
	Query string  `json:"query"`
	Text  *string `json:"text"`
	// Reader names who reads the replies (an agent, a session): the views
	// a follow-up's delta is computed against are remembered per reader,
	// so readers sharing the server never get a delta against a view
	// another one was sent. Requests without it share one reader.
	Reader  string        `json:"reader,omitempty"`
	Options NativeOptions `json:"options"`
}

// NativeOptions are the per-request options of POST /v1/prune; absent
// fields keep the server's defaults. At most one budget may be set.
type NativeOptions struct {
	Threshold       *float64 `json:"threshold,omitempty"`
	TokenBudget     int      `json:"token_budget,omitempty"`
	Compression     float64  `json:"compression,omitempty"` // keep input tokens ÷ compression
	LineBudget      float64  `json:"line_budget,omitempty"` // fraction of lines in (0,1]
	Language        string   `json:"language,omitempty"`
	FileName        string   `json:"file_name,omitempty"`
	KeepFirstLine   *bool    `json:"keep_first_line,omitempty"`
	KeepLastLine    *bool    `json:"keep_last_line,omitempty"`
	Repair          *bool    `json:"repair,omitempty"`
	Overlap         *int     `json:"chunk_overlap_tokens,omitempty"`
	Decision        string   `json:"decision,omitempty"`
	SWEPrunerCompat bool     `json:"swepruner_compat,omitempty"`
	MinTokens       *int     `json:"min_tokens,omitempty"`    // smaller inputs come back whole; 0 prunes any size
	MinRelevance    *float64 `json:"min_relevance,omitempty"` // the relevance gate; 0 turns it off
	// Expand lists what to show in full, as placeholders print it: input
	// line ranges and names of what they fold, in a string ("120-159,300",
	// "readEvents, 120-159") or an array of strings and range objects
	// (["func (c *Client) do", "7"], [{"first_line":120,"last_line":159}]);
	// see pruner.Result.Unfold. A request with expand is a follow-up: its
	// text holds only what the unfolded view adds to the last view sent
	// (see FullView).
	Expand ExpandItems `json:"expand,omitempty"`
	// FullView returns a follow-up's whole view in text instead of the
	// new lines only.
	FullView bool `json:"full_view,omitempty"`
	// PlaceholderNames false renders placeholders without the names of
	// what they fold (pruner.WithPlaceholderNames).
	PlaceholderNames *bool `json:"placeholder_names,omitempty"`
	// FoldHints is how many placeholders say what in their fold is likely
	// relevant (pruner.WithFoldHints); 0 or absent: none.
	FoldHints int `json:"fold_hints,omitempty"`
}

// ExpandItems is the expand option: the items of pruner.Result.Unfold,
// each a line range, a list of them or a name.
type ExpandItems []string

// UnmarshalJSON accepts a string ("120-159,300-310", "readEvents, 7") or
// an array whose elements are strings or range objects
// {"first_line":120,"last_line":159}.
func (e *ExpandItems) UnmarshalJSON(b []byte) error {
	var items []string
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if strings.TrimSpace(s) != "" { // "": nothing to expand, as before names
			items = []string{s}
		}
	} else {
		var raw []json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return fmt.Errorf("expand: want a string or an array of strings and ranges: %w", err)
		}
		items = make([]string, 0, len(raw))
		for _, r := range raw {
			if len(r) > 0 && r[0] == '{' {
				var lr pruner.LineRange
				if err := json.Unmarshal(r, &lr); err != nil {
					return fmt.Errorf("expand: %w", err)
				}
				if err := pruner.CheckLineRanges(math.MaxInt, lr); err != nil {
					return err
				}
				items = append(items, lr.String())
				continue
			}
			var s string
			if err := json.Unmarshal(r, &s); err != nil {
				return fmt.Errorf("expand: want strings or range objects, got %s: %w", cut(r), err)
			}
			items = append(items, s)
		}
	}
	*e = items
	return nil
}

// cut shortens raw JSON for an error message.
func cut(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

func (o NativeOptions) options() ([]pruner.Option, error) {
	var opts []pruner.Option
	budgets := 0
	if o.TokenBudget != 0 {
		budgets++
		opts = append(opts, pruner.WithTokenBudget(o.TokenBudget))
	}
	if o.Compression != 0 {
		budgets++
		opts = append(opts, pruner.WithCompression(o.Compression))
	}
	if o.LineBudget != 0 {
		budgets++
		opts = append(opts, pruner.WithLineBudget(o.LineBudget))
	}
	if budgets > 1 {
		return nil, fmt.Errorf("%w: set at most one of token_budget, compression, line_budget", pruner.ErrOption)
	}
	if o.SWEPrunerCompat {
		opts = append(opts, pruner.WithSWEPrunerCompat())
	}
	if o.Threshold != nil {
		opts = append(opts, pruner.WithThreshold(*o.Threshold))
	}
	if o.Language != "" {
		opts = append(opts, pruner.WithLanguage(o.Language))
	}
	if o.FileName != "" {
		opts = append(opts, pruner.WithFileName(o.FileName))
	}
	if o.KeepFirstLine != nil {
		opts = append(opts, pruner.WithKeepFirstLine(*o.KeepFirstLine))
	}
	if o.KeepLastLine != nil {
		opts = append(opts, pruner.WithKeepLastLine(*o.KeepLastLine))
	}
	if o.Repair != nil {
		opts = append(opts, pruner.WithRepair(*o.Repair))
	}
	if o.Overlap != nil {
		opts = append(opts, pruner.WithOverlap(*o.Overlap))
	}
	if o.Decision != "" {
		opts = append(opts, pruner.WithDecision(pruner.Decision(o.Decision)))
	}
	if o.MinTokens != nil {
		opts = append(opts, pruner.WithMinInputTokens(*o.MinTokens))
	}
	if o.MinRelevance != nil {
		opts = append(opts, pruner.WithMinRelevance(*o.MinRelevance))
	}
	if o.PlaceholderNames != nil {
		opts = append(opts, pruner.WithPlaceholderNames(*o.PlaceholderNames))
	}
	if o.FoldHints != 0 {
		opts = append(opts, pruner.WithFoldHints(o.FoldHints))
	}
	return opts, nil
}

func (h *Handler) prunev1(w http.ResponseWriter, r *http.Request) {
	var req NativeRequest
	if status, err := h.decode(w, r, &req); err != nil {
		h.fail(w, r, status, err)
		return
	}
	if strings.TrimSpace(req.Query) == "" {
		h.fail(w, r, http.StatusBadRequest, errors.New("missing field: query"))
		return
	}
	if req.Text == nil {
		h.fail(w, r, http.StatusBadRequest, errors.New("missing field: text"))
		return
	}
	if err := pruner.CheckUnfoldItems(req.Options.Expand...); err != nil {
		h.fail(w, r, http.StatusBadRequest, fmt.Errorf("options.expand: %w", err))
		return
	}
	opts, err := req.Options.options()
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err)
		return
	}
	key, err := viewKey(&req)
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	followUp := len(req.Options.Expand) > 0
	var prev *pruner.Result
	if followUp && h.views != nil {
		prev = h.views.Last(key) // what this reader was sent last: no prune needed
	}
	if prev == nil {
		// A first view, or a follow-up whose view is forgotten (or never
		// kept): Prune is deterministic, so this is the view first sent.
		p, err := h.base.With(opts...)
		if err != nil {
			h.fail(w, r, http.StatusBadRequest, err)
			return
		}
		var status int
		if prev, status, err = h.run(r.Context(), p, req.Query, *req.Text); err != nil {
			h.fail(w, r, status, err)
			return
		}
	}
	if !followUp {
		h.remember(key, prev)
		h.writeJSON(w, http.StatusOK, prev) // the library's one JSON shape (pruner.Result.MarshalJSON)
		return
	}
	next, status, err := h.unfold(r.Context(), prev, req.Options.Expand)
	if err != nil {
		h.fail(w, r, status, fmt.Errorf("options.expand: %w", err))
		return
	}
	h.remember(key, next)
	if req.Options.FullView {
		h.writeView(w, r, "full", next, next.Text)
		return
	}
	delta, err := next.Delta(prev)
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, err) // one input: cannot happen
		return
	}
	h.writeView(w, r, "delta", next, delta)
}

// viewKey keys the view a request reads: its reader, text and query, and
// every option that shapes the view (all of them but the follow-up's own).
func viewKey(req *NativeRequest) (string, error) {
	o := req.Options
	o.Expand, o.FullView = nil, false
	shape, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("internal error: view key: %w", err)
	}
	return pruner.ViewKey(*req.Text, req.Query, req.Reader, string(shape)), nil
}

func (h *Handler) remember(key string, res *pruner.Result) {
	if h.views != nil {
		h.views.Remember(key, res)
	}
}

// unfold shows items in prev. Re-rendering is linear in the text and the
// names' lookups are bounded by pruner.MaxUnfoldNames, so it takes no slot; the
// request timeout still bounds it.
func (h *Handler) unfold(ctx context.Context, prev *pruner.Result, items []string) (*pruner.Result, int, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	next, err := prev.Unfold(ctx, items...)
	switch {
	case err == nil:
		return next, http.StatusOK, nil
	case errors.Is(err, pruner.ErrLineRange), errors.Is(err, pruner.ErrUnknownName), errors.Is(err, pruner.ErrNotExpandable):
		// ErrNotExpandable: names asked of a swepruner_compat view.
		return nil, http.StatusBadRequest, err
	case errors.Is(err, context.DeadlineExceeded):
		return nil, http.StatusGatewayTimeout, err
	case errors.Is(err, context.Canceled):
		return nil, http.StatusServiceUnavailable, err
	}
	return nil, http.StatusInternalServerError, err
}

// writeView answers with res in the library's JSON shape, text replaced
// by the reply's text, and "view" saying which it is: "full" or "delta".
func (h *Handler) writeView(w http.ResponseWriter, r *http.Request, view string, res *pruner.Result, text string) {
	cp := *res
	cp.Text = text
	b, err := json.Marshal(cp) // pruner.Result.MarshalJSON: always an object
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, fmt.Errorf("internal error: cannot encode the response: %w", err))
		return
	}
	out := make([]byte, 0, len(b)+len(view)+12)
	out = append(out, `{"view":`...)
	out = strconv.AppendQuote(out, view)
	out = append(out, ',')
	out = append(out, b[1:]...)
	h.writeJSON(w, http.StatusOK, json.RawMessage(out))
}

// run prunes under the request timeout and the concurrency limit, and maps
// errors to status codes.
func (h *Handler) run(ctx context.Context, p engine, query, text string) (*pruner.Result, int, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	if n := h.overrun.Load(); n > int64(h.cfg.MaxOverrun) {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("server overloaded: %d prunes are still running past their deadline", n)
	}
	// An expired deadline must not win a free slot by chance (select picks
	// randomly among ready cases).
	if err := ctx.Err(); err != nil {
		return nil, http.StatusServiceUnavailable, fmt.Errorf("server busy: no pruning slot within %v: %w", h.cfg.Timeout, err)
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	case <-ctx.Done():
		return nil, http.StatusServiceUnavailable, fmt.Errorf("server busy: no pruning slot within %v: %w", h.cfg.Timeout, ctx.Err())
	}
	res, err := h.bounded(ctx, p, query, text)
	switch {
	case err == nil:
		return res, http.StatusOK, nil
	case errors.Is(err, pruner.ErrOption):
		return nil, http.StatusBadRequest, err
	case errors.Is(err, pruner.ErrInputTooLarge):
		return nil, http.StatusRequestEntityTooLarge, err
	case errors.Is(err, pruner.ErrBinaryInput):
		// The request is well-formed; its text is not something to prune.
		return nil, http.StatusUnprocessableEntity, err
	case errors.Is(err, context.DeadlineExceeded):
		return nil, http.StatusGatewayTimeout, fmt.Errorf("prune did not finish within %v: %w", h.cfg.Timeout, err)
	case errors.Is(err, context.Canceled):
		return nil, http.StatusServiceUnavailable, fmt.Errorf("prune cancelled: %w", err)
	}
	return nil, http.StatusInternalServerError, err
}

// bounded runs p.Prune and returns when it does or when ctx is done,
// whichever comes first, so that a prune that is slow to notice its deadline
// cannot hold the request (or its slot) past it. Such a prune keeps running
// in the background, counted in h.overrun until it returns. A panic in the
// prune becomes an error.
func (h *Handler) bounded(ctx context.Context, p engine, query, text string) (*pruner.Result, error) {
	type result struct {
		res *pruner.Result
		err error
	}
	done := make(chan result, 1)
	var state atomic.Int32 // 0 running, 1 finished, 2 abandoned
	go func() {
		var r result
		defer func() {
			if v := recover(); v != nil {
				r = result{err: fmt.Errorf("internal error: %v", v)}
			}
			done <- r
			if !state.CompareAndSwap(0, 1) {
				h.overrun.Add(-1) // abandoned: it was counted as overrunning
			}
		}()
		r.res, r.err = p.Prune(ctx, query, text)
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
	}
	h.overrun.Add(1)
	if state.CompareAndSwap(0, 2) {
		return nil, ctx.Err()
	}
	// It finished between the deadline and now: take its result.
	h.overrun.Add(-1)
	r := <-done
	return r.res, r.err
}

// decode reads one JSON object from a size-limited body.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) (int, error) {
	body := r.Body
	if h.cfg.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
	}
	dec := json.NewDecoder(body)
	err := dec.Decode(v)
	if err == nil {
		// Exactly one JSON value: anything but whitespace after it is malformed.
		if _, err2 := dec.Token(); !errors.Is(err2, io.EOF) {
			err = errors.New("data after the JSON object")
		}
	}
	if err == nil {
		return http.StatusOK, nil
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes: %w", tooBig.Limit, err)
	}
	return http.StatusBadRequest, fmt.Errorf("malformed JSON: %w", err)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	h.cfg.Logger.Warn("request failed", "path", r.URL.Path, "status", status, "err", err)
	body := errorBody{ErrorMsg: err.Error()}
	if une, ok := errors.AsType[*astrepair.UnknownNameError](err); ok {
		body.Closest = une.Closest
	}
	h.writeJSON(w, status, body)
}

func (h *Handler) writeError(w http.ResponseWriter, status int, msg string) {
	h.writeJSON(w, status, errorBody{ErrorMsg: msg})
}

// writeJSON encodes v in full before writing anything, so that an encoding
// failure (a NaN score, say) becomes a 500 with a JSON error body instead of
// a 200 with an empty one.
func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		h.cfg.Logger.Error("cannot encode the response", "status", status, "err", err)
		buf.Reset()
		status = http.StatusInternalServerError
		msg := "internal error: cannot encode the response: " + err.Error()
		if err := json.NewEncoder(&buf).Encode(errorBody{ErrorMsg: msg}); err != nil {
			buf.Reset()
			buf.WriteString(`{"error_msg":"internal error"}` + "\n")
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client may be gone; nothing to do
}
