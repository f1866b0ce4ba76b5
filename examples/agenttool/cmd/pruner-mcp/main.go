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
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stderr, "pruner-mcp: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pruner-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "checkpoint folder (empty: the embedded line model)")
	scorer := fs.String("scorer", "", "scorer: auto (the checkpoint, else the embedded line model), line or lexical (BM25 baseline)")
	root := fs.String("root", ".", "workspace directory the tools may read")
	threshold := fs.Float64("threshold", -1, "keep lines scoring at least this (default: the scorer's, 0.5; 0.2 for the line model)")
	minChars := fs.Int("min-chars", agenttool.DefaultMinChars, "outputs shorter than this pass through")
	tail := fs.Int("tail", agenttool.DefaultTailLines, "last lines never folded")
	numbers := fs.Bool("n", false, "number lines (nl -ba style) by default")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	opts := []pruner.Option{pruner.WithScorer(*scorer)}
	if *threshold != -1 {
		opts = append(opts, pruner.WithThreshold(*threshold))
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
	w, err := agenttool.NewWorkspace(*root, f)
	if err != nil {
		return err
	}
	defer w.Close()
	s := agenttool.NewMCPServer("prunekit-pruner", "0.1.0", w)
	err = server.NewStdioServer(s).Listen(ctx, stdin, stdout)
	if err != nil && ctx.Err() != nil {
		return nil // interrupted
	}
	return err
}
