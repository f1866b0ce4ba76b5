// Command server serves a pruner model over HTTP with the SWE-Pruner
// service's API, so agent integrations written for that service work
// unchanged, plus a native endpoint with the library's full result:
//
//	server -model ./checkpoint -addr :8000
//	server                            # no checkpoint: the embedded line model
//	server -scorer lexical            # the BM25 baseline, same API
//
//	GET  /health     {"status":"healthy","model_loaded":true,"scorer":"swe-pruner"} after a real
//	                 prune of a tiny input (cached briefly); 503 {"status":"unhealthy",...,"error_msg"}
//	POST /prune      {"query","code","threshold","always_keep_first_frags","chunk_overlap_tokens"}
//	                 → {"score","pruned_code","token_scores","kept_frags","origin_token_cnt",
//	                    "left_token_cnt","model_input_token_cnt","error_msg"}
//	POST /v1/prune   {"query","text","reader","options":{"threshold","token_budget","compression",
//	                    "line_budget","language","file_name","expand","full_view",...}}
//	                 → {"view":"full",...the library's Result}
//	                 A follow-up ("expand":"func (c *Client) do, 120-159": names a placeholder
//	                 prints and line ranges, as pruner.Result.Unfold) answers {"view":"delta",
//	                 "text": only the new lines, numbered, ...} against the last view sent for
//	                 the same reader, text, query and options (-view-cache bounds that memory),
//	                 or the whole view with "full_view":true; 400 for ranges outside the input
//	                 or overlapping, and for unknown names (with "closest", the nearest names)
//
// The server stops gracefully on SIGINT or SIGTERM: it stops accepting
// connections and lets running requests finish for up to -shutdown-grace,
// then cancels those still running (they answer 503). A second signal stops
// it at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/examples/server/internal/httpapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, the default handling is back: a second
		// one stops the process at once instead of waiting for the grace.
		<-ctx.Done()
		stop()
	}()
	if f, err := parse(os.Args[1:], io.Discard); err == nil {
		setMemoryLimit(f.model)
	}
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		code := 1
		if errors.Is(err, errReported) {
			code = 2 // usage error, printed by the flag package
		} else {
			fmt.Fprintf(os.Stderr, "server: %v\n", err)
		}
		stop()
		os.Exit(code)
	}
}

// setMemoryLimit sets pruner.SuggestedMemoryLimit(model) as the soft memory
// limit (the weights live on the Go heap: see its doc), unless GOMEMLIMIT
// is set or a limit already is.
func setMemoryLimit(model string) {
	if os.Getenv("GOMEMLIMIT") != "" || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return
	}
	if limit := pruner.SuggestedMemoryLimit(model); limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}

// finalWrite is how long cancelled requests get to write their 503 once
// the shutdown grace is over.
const finalWrite = 5 * time.Second

type flags struct {
	model, addr, scorer, backend, precision         string
	attnBlock                                       int
	maxBody, viewCache                              int64
	maxLength, maxConcurrent                        int
	timeout, readTimeout, writeTimeout, idleTimeout time.Duration
	grace                                           time.Duration
}

// errReported marks a usage error the flag package already printed, with
// the usage.
var errReported = errors.New("usage error reported")

func parse(args []string, stderr io.Writer) (*flags, error) {
	var f flags
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.model, "model", "", "checkpoint folder (SWE-Pruner or LaMR layout) or hf:owner/name[@revision] on the Hugging Face Hub; empty: the embedded line model")
	fs.StringVar(&f.scorer, "scorer", "", "scorer: auto (the checkpoint, else the embedded line model), line, lexical (BM25 baseline) or semantic (a -model sentence encoder reranking the line model)")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8000", "listen address")
	fs.Int64Var(&f.maxBody, "max-body", httpapi.DefaultMaxBodyBytes, "largest request body in bytes (larger: 413); above 16 MiB it raises the pruner's input limit too; 0 lifts both")
	fs.Int64Var(&f.viewCache, "view-cache", pruner.DefaultViewBytes, "bytes of the last views sent, which /v1/prune follow-ups answer with a delta against; 0 keeps none (a follow-up's delta is then against the first view)")
	fs.IntVar(&f.maxLength, "max-length", 8192, "model window length in tokens (the SWE-Pruner service uses 8192)")
	fs.StringVar(&f.backend, "backend", "", "backend of a -model checkpoint: go (default), simplego, or xla[:PLUGIN] (a binary built with -tags xla); one model on one device serves every request")
	fs.StringVar(&f.precision, "precision", "", "weight products of a -model checkpoint: float32 (default) or bf16 (AVX512_BF16 CPUs, XLA GPUs)")
	fs.IntVar(&f.attnBlock, "attention-block", 0, "a -model checkpoint's causal attention in blocks of this many query tokens (exact; faster at long windows on a GPU, slower to compile); 0: whole windows")
	fs.IntVar(&f.maxConcurrent, "max-concurrent", 0, "prunes running at once (0: GOMAXPROCS); others wait")
	fs.DurationVar(&f.timeout, "timeout", httpapi.DefaultTimeout, "per-request deadline: 503 when no slot frees in time, 504 when the prune overruns it")
	fs.DurationVar(&f.readTimeout, "read-timeout", 30*time.Second, "time to read a whole request")
	fs.DurationVar(&f.writeTimeout, "write-timeout", 0, "time to handle and write a response (0: -timeout + 30s)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", 2*time.Minute, "keep-alive idle timeout")
	fs.DurationVar(&f.grace, "shutdown-grace", 30*time.Second, "how long running requests may finish on shutdown; then they are cancelled (503); a second signal stops at once")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errReported, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case f.timeout < 0 || f.readTimeout < 0 || f.writeTimeout < 0 || f.idleTimeout < 0 || f.grace < 0:
		return nil, errors.New("-timeout, -read-timeout, -write-timeout, -idle-timeout and -shutdown-grace must be >= 0")
	case f.maxBody < 0:
		return nil, errors.New("-max-body must be >= 0 (0 lifts the cap)")
	case f.viewCache < 0:
		return nil, errors.New("-view-cache must be >= 0 (0 keeps no views)")
	}
	if f.timeout == 0 {
		f.timeout = httpapi.DefaultTimeout // what the handler would use
	}
	if f.writeTimeout == 0 {
		f.writeTimeout = f.timeout + 30*time.Second
	}
	return &f, nil
}

// run loads the model and serves until ctx is done. When ready is not nil
// it receives the bound address once the server listens.
func run(ctx context.Context, args []string, stderr io.Writer, ready chan<- string) error {
	f, err := parse(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	// An hf: checkpoint is fetched into the Hugging Face cache first (with
	// progress on stderr): the tokenizer below reads its folder too.
	dir, err := pruner.Download(ctx, f.model, pruner.WithDownloadProgress(pruner.DownloadProgressTo(stderr)))
	if err != nil {
		return err
	}
	if dir != f.model {
		setMemoryLimit(dir) // main could not size it before the download
	}
	opts := []pruner.Option{pruner.WithMaxLength(f.maxLength), pruner.WithScorer(f.scorer),
		pruner.WithBackend(f.backend), pruner.WithAttentionBlock(f.attnBlock)}
	maxBody := f.maxBody
	switch {
	case maxBody == 0: // no cap on the body, nor on the text in it
		maxBody = -1
		opts = append(opts, pruner.WithMaxInputBytes(0))
	case maxBody > pruner.DefaultMaxInputBytes:
		opts = append(opts, pruner.WithMaxInputBytes(int(min(maxBody, math.MaxInt))))
	}
	if f.precision != "" {
		opts = append(opts, pruner.WithPrecision(pruner.Precision(f.precision)))
	}
	p, err := pruner.Load(ctx, dir, opts...)
	if err != nil {
		return err
	}
	viewBytes := f.viewCache
	if viewBytes == 0 {
		viewBytes = -1 // the handler's "none"; its 0 is the default bound
	}
	h, err := httpapi.New(p, httpapi.Config{
		MaxBodyBytes: maxBody, Timeout: f.timeout, MaxConcurrent: f.maxConcurrent,
		TokenizerDir: dir, Logger: log, ViewBytes: viewBytes,
	})
	if err != nil {
		return err
	}
	// A model that loads but cannot prune (or prunes to NaN) must not be
	// served: warm it up (its first call compiles the graph, however long
	// that takes), then run the health probe once before listening.
	log.Info("warming up the model")
	if err := h.WarmUp(ctx); err != nil {
		return fmt.Errorf("model not served: %w", err)
	}
	if err := h.Check(ctx); err != nil {
		return fmt.Errorf("model not served: %w", err) // err says the health check failed
	}
	// Requests outlive the signal (they may finish within the grace) but
	// not the grace: then they are cancelled and answer 503.
	reqCtx, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       f.readTimeout,
		WriteTimeout:      f.writeTimeout,
		IdleTimeout:       f.idleTimeout,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("serving", "addr", ln.Addr().String(), "model", f.model, "scorer", p.Kind())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", f.grace)
	if err := shutdown(srv, f.grace, cancelRequests, log); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// shutdown stops srv: running requests may finish within grace; then
// cancelRequests cancels those still running (the contexts srv gave them),
// so each client gets its 503 rather than a dropped connection, and they
// get finalWrite to write it (a prune notices within milliseconds).
func shutdown(srv *http.Server, grace time.Duration, cancelRequests func(), log *slog.Logger) error {
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err == nil {
		return nil
	}
	log.Warn("grace over: cancelling running requests", "err", err)
	cancelRequests()
	fctx, fcancel := context.WithTimeout(context.Background(), finalWrite)
	defer fcancel()
	if err := srv.Shutdown(fctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
