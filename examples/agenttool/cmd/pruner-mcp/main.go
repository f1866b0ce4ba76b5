// Command pruner-mcp is an MCP server (stdio) giving an agent read_pruned
// and search_pruned over one workspace directory:
//
//	pruner-mcp -model ./checkpoint -root ./repo
//
// Register it with an MCP client as a stdio server, e.g.
//
//	{"mcpServers": {"pruner": {"command": "pruner-mcp", "args": ["-model", "/models/code-pruner", "-root", "."]}}}
//
// Calls without context_focus_question return files and matches whole.
// A read_pruned call with expand (names the markers print, or their line
// ranges) returns only the lines the previous read of that file did not
// show; -view-cache bounds the memory of those views.
//
// Without -model it prunes with the library's embedded line model;
// -scorer lexical picks the BM25 baseline. -threshold, -lines, -budget and
// -compression mean what they mean to examples/prune. -max-input (16 MiB;
// 0 lifts it) caps the files the tools read, the outputs they prune and the
// JSON-RPC messages read from standard input: no more than the cap plus one
// byte of any of them is ever held.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mark3labs/mcp-go/server"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/examples/agenttool"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errReported):
		os.Exit(2) // a usage error, printed by the flag package
	default:
		fmt.Fprintf(os.Stderr, "pruner-mcp: %v\n", err)
		os.Exit(1)
	}
}

// errReported marks a usage error the flag package already printed, with
// the usage.
var errReported = errors.New("usage error reported")

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pruner-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "checkpoint folder or hf:owner/name[@revision] (Hugging Face Hub; progress on stderr); empty: the embedded line model")
	scorer := fs.String("scorer", "", "scorer: auto (the checkpoint, else the embedded line model), line, lexical (BM25 baseline) or semantic (a -model sentence encoder reranking the line model)")
	root := fs.String("root", ".", "workspace directory the tools may read")
	threshold := fs.Float64("threshold", -1, "keep lines scoring at least this (default: the scorer's, 0.5; 0.2 for the line model)")
	lines := fs.Float64("lines", 0, "keep this share of the lines, e.g. 0.2 (replaces -threshold)")
	budget := fs.Int("budget", 0, "keep at most this many tokens (replaces -threshold)")
	compression := fs.Float64("compression", 0, "keep about 1/X of the tokens, e.g. 4 (replaces -threshold)")
	maxInput := fs.Int64("max-input", pruner.DefaultMaxInputBytes,
		"largest file read, output pruned and JSON-RPC message accepted, in bytes; 0 lifts the cap")
	minChars := fs.Int("min-chars", agenttool.DefaultMinChars, "outputs shorter than this pass through")
	tail := fs.Int("tail", agenttool.DefaultTailLines, "last lines never folded")
	numbers := fs.Bool("n", false, "number lines (nl -ba style) by default")
	viewCache := fs.Int64("view-cache", pruner.DefaultViewBytes,
		"bytes of the last views read_pruned sent, which follow-ups (expand) answer with only the new lines against; 0 keeps none")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errReported, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *maxInput < 0 {
		return errors.New("-max-input must be >= 0 (0 lifts the cap)")
	}
	if *viewCache < 0 {
		return errors.New("-view-cache must be >= 0 (0 keeps no views)")
	}
	opts := []pruner.Option{pruner.WithScorer(*scorer), pruner.WithMaxInputBytes(int(*maxInput)),
		pruner.WithDownloadProgress(pruner.DownloadProgressTo(stderr))}
	if *threshold != -1 {
		opts = append(opts, pruner.WithThreshold(*threshold))
	}
	budgets := 0
	if *lines != 0 {
		budgets++
		opts = append(opts, pruner.WithLineBudget(*lines))
	}
	if *budget != 0 {
		budgets++
		opts = append(opts, pruner.WithTokenBudget(*budget))
	}
	if *compression != 0 {
		budgets++
		opts = append(opts, pruner.WithCompression(*compression))
	}
	if budgets > 1 {
		return errors.New("-lines, -budget and -compression exclude each other")
	}
	p, err := pruner.Load(ctx, *model, opts...)
	if err != nil {
		return err
	}
	f, err := agenttool.NewFolder(p, agenttool.WithMinChars(*minChars), agenttool.WithTailLines(*tail),
		agenttool.WithLineNumbers(*numbers))
	if err != nil {
		return err
	}
	wopts := []agenttool.WorkspaceOption{agenttool.WithMaxFileBytes(*maxInput), agenttool.WithViewBytes(*viewCache)}
	if budgets > 0 || *threshold != -1 {
		// The caller chose how much a view keeps: read_pruned's first
		// view too, with its hint.
		wopts = append(wopts, agenttool.WithFirstView(pruner.WithFoldHints(1)))
	}
	w, err := agenttool.NewWorkspace(*root, f, wopts...)
	if err != nil {
		return err
	}
	defer w.Close()
	s := agenttool.NewMCPServer("prunekit-pruner", "0.1.0", w)
	if *maxInput > 0 {
		stdin = &lineCap{r: stdin, limit: *maxInput}
	}
	err = server.NewStdioServer(s).Listen(ctx, stdin, stdout)
	if err != nil && ctx.Err() != nil {
		return nil // interrupted
	}
	return err
}

// lineCap reads from r and fails once a line (a JSON-RPC message) passes
// limit bytes, so the server never buffers an unbounded message.
type lineCap struct {
	r          io.Reader
	limit, run int64
	err        error
}

func (l *lineCap) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			l.run = 0
			continue
		}
		if l.run++; l.run > l.limit {
			l.err = fmt.Errorf("a JSON-RPC message of over %d bytes on standard input (-max-input; 0 lifts the cap)", l.limit)
			return i, l.err
		}
	}
	return n, err
}
