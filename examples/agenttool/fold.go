// Package agenttool wires a pruner.Pruner into agent tool frameworks: an MCP
// server (github.com/mark3labs/mcp-go) with read_pruned and search_pruned
// tools and a middleware that prunes any mcp-go tool's output, and a tool
// call middleware for github.com/cloudwego/eino's compose.ToolsNode.
//
// It lives in its own Go module so these frameworks never become
// dependencies of the pruner library.
//
// Every integration applies the same policy, learnt from agents in the
// field (see Folder):
//
//   - pruning is opt-in per call: only a call that carries a
//     context_focus_question argument is pruned; without one the output is
//     untouched;
//   - small outputs (under 500 characters by default) pass through;
//   - a pruned output starts with a header saying how much was folded and
//     how to get the full text (call again without context_focus_question);
//   - kept lines are verbatim and keep their original line numbers
//     (nl -ba style on request); every folded run says which lines it hides;
//   - error lines (ERROR, FAIL, panic, Traceback, exception, exit code
//     lines), the last line, and the last lines of logs and other non-code
//     output are never folded;
//   - any failure falls back to the original output, with the reason
//     appended (fail open).
package agenttool

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/chunk"
)

// QuestionArg is the tool argument that asks for pruning.
const QuestionArg = "context_focus_question"

// Defaults of a Folder.
const (
	DefaultMinChars  = 500
	DefaultTailLines = 10
	DefaultTimeout   = 30 * time.Second
)

// DefaultKeepPatterns returns the patterns of lines never folded: error and
// failure markers of common tools, panics, Python tracebacks and exception
// lines, exit codes. Each call returns a fresh slice the caller may extend
// and pass to WithKeepPatterns.
func DefaultKeepPatterns() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`\b(ERROR|ERR|FAIL|FAILED|FAILURE|FATAL|PANIC|CRITICAL)\b`),
		regexp.MustCompile(`(?i)\b(error|fatal|failure)(\[\w+\])?\s*:`),
		regexp.MustCompile(`(?i)\bpanic(ked)?\b`),
		regexp.MustCompile(`Traceback \(most recent call last\)`),
		regexp.MustCompile(`^\s*[A-Za-z_][\w.]*(Error|Exception)\b`),
		regexp.MustCompile(`(?i)\bexit(ed)?(\s+with)?\s+(code|status)\b|\bexit_code\b|\breturn code\b`),
		regexp.MustCompile(`^(not ok|--- FAIL|FAIL\s)`),
	}
}

// Option configures a Folder.
type Option func(*config) error

type config struct {
	minChars    int
	tailLines   int
	keep        []*regexp.Regexp
	lineNumbers bool
	timeout     time.Duration
	fullHint    string
}

// WithMinChars sets the size under which outputs pass through unpruned
// (default DefaultMinChars characters).
func WithMinChars(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("agenttool: min chars %d < 0", n)
		}
		c.minChars = n
		return nil
	}
}

// WithTailLines sets how many last lines of non-code output (logs, command
// and search output) are never folded (default DefaultTailLines): the tail
// of a log holds the verdict. Source code keeps only its last line.
func WithTailLines(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("agenttool: tail lines %d < 0", n)
		}
		c.tailLines = n
		return nil
	}
}

// WithKeepPatterns replaces the patterns of lines that are never folded
// (default DefaultKeepPatterns()).
func WithKeepPatterns(res ...*regexp.Regexp) Option {
	return func(c *config) error {
		for _, re := range res {
			if re == nil {
				return errors.New("agenttool: nil keep pattern")
			}
		}
		c.keep = res
		return nil
	}
}

// WithLineNumbers numbers every output line with its input line number as
// nl -ba does (default off; per call see LineNumbers).
func WithLineNumbers(on bool) Option {
	return func(c *config) error { c.lineNumbers = on; return nil }
}

// WithTimeout bounds one pruning (default DefaultTimeout); past it the
// original output is returned.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("agenttool: timeout %v <= 0", d)
		}
		c.timeout = d
		return nil
	}
}

// WithFullOutputHint replaces the header's advice on getting the full
// output (default: call again without context_focus_question).
func WithFullOutputHint(s string) Option {
	return func(c *config) error { c.fullHint = s; return nil }
}

// Folder prunes tool outputs with the agent policy described in the package
// documentation. It is safe for concurrent use.
type Folder struct {
	p   *pruner.Pruner
	cfg config
}

// NewFolder returns a Folder pruning with p. The Pruner's own options
// (threshold, budget, scorer) apply; the Folder adds keep-last-line.
func NewFolder(p *pruner.Pruner, opts ...Option) (*Folder, error) {
	if p == nil {
		return nil, errors.New("agenttool: nil pruner")
	}
	cfg := config{
		minChars:  DefaultMinChars,
		tailLines: DefaultTailLines,
		keep:      DefaultKeepPatterns(),
		timeout:   DefaultTimeout,
		fullHint:  "for the full output call again without " + QuestionArg,
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &Folder{p: p, cfg: cfg}, nil
}

// CallOption adjusts one Fold call.
type CallOption func(*call)

type call struct {
	fileName    string
	lineNumbers bool
}

// FileName names the file the output comes from; its extension helps the
// pruner detect the language.
func FileName(name string) CallOption { return func(c *call) { c.fileName = name } }

// LineNumbers overrides WithLineNumbers for one call.
func LineNumbers(on bool) CallOption { return func(c *call) { c.lineNumbers = on } }

// Outcome is what Fold did.
type Outcome struct {
	// Text is what the agent should see.
	Text string
	// Pruned reports whether lines were folded.
	Pruned bool
	// Skipped says why the output was left whole ("" when pruned or failed).
	Skipped string
	// Err is the pruning failure, if any; Text is then the original output
	// with a note (fail open).
	Err error
	// Lines, KeptLines and ForcedLines count the input lines, the lines
	// kept and the kept lines the model had dropped but the policy keeps
	// (errors, tail).
	Lines, KeptLines, ForcedLines int
}

// Fold prunes output against question. A blank question or a small output
// returns output untouched (numbered if asked); a failure returns output
// with the reason appended.
func (f *Folder) Fold(ctx context.Context, question, output string, opts ...CallOption) (out Outcome) {
	c := call{lineNumbers: f.cfg.lineNumbers}
	for _, o := range opts {
		o(&c)
	}
	lines := chunk.SplitLines(output)
	out.Lines, out.KeptLines = len(lines), len(lines)
	whole := func(why string) Outcome {
		out.Skipped = why
		out.Text = output
		if c.lineNumbers {
			out.Text = render(output, lines, nil, true)
		}
		return out
	}
	switch {
	case strings.TrimSpace(question) == "":
		return whole("no " + QuestionArg)
	case len([]rune(output)) < f.cfg.minChars:
		return whole(fmt.Sprintf("output under %d characters", f.cfg.minChars))
	}
	defer func() {
		if v := recover(); v != nil {
			out = f.failOpen(output, lines, c, fmt.Errorf("agenttool: internal error: %v", v))
		}
	}()
	res, err := f.prune(ctx, question, output, c.fileName)
	if err != nil {
		return f.failOpen(output, lines, c, err)
	}
	if res.Unpruned != "" {
		return whole(res.Unpruned)
	}
	if len(res.Lines) != len(lines) {
		return f.failOpen(output, lines, c, fmt.Errorf("agenttool: pruner returned %d lines for %d", len(res.Lines), len(lines)))
	}
	keep := make([]bool, len(lines))
	for i, l := range res.Lines {
		keep[i] = l.Kept
	}
	tail := f.cfg.tailLines
	if res.Language != "" {
		tail = 0 // source code: its end is no verdict, unlike a log's
	}
	for i, l := range lines {
		if keep[i] {
			continue
		}
		if i >= len(lines)-tail || f.mustKeep(output[l.Start:l.End]) {
			keep[i] = true
			out.ForcedLines++
		}
	}
	out.KeptLines = 0
	kept := 0 // bytes
	for i, k := range keep {
		if k {
			out.KeptLines++
			kept += lines[i].TermEnd - lines[i].Start
		}
	}
	if out.KeptLines == len(lines) {
		return whole("every line is relevant")
	}
	body := res.Text // the library's rendering, in the language's comment syntax
	if out.ForcedLines > 0 || c.lineNumbers {
		body = render(output, lines, keep, c.lineNumbers)
	}
	out.Pruned = true
	out.Text = fmt.Sprintf("[pruned for %q: kept %d of %d lines (%d%% of the text), folded %d; %s]\n%s",
		question, out.KeptLines, len(lines), percent(kept, len(output)), len(lines)-out.KeptLines, f.cfg.fullHint, body)
	return out
}

func (f *Folder) prune(ctx context.Context, question, output, fileName string) (*pruner.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.timeout)
	defer cancel()
	p, err := f.p.With(pruner.WithKeepLastLine(true), pruner.WithFileName(fileName))
	if err != nil {
		return nil, fmt.Errorf("agenttool: %w", err)
	}
	res, err := p.Prune(ctx, question, output)
	if err != nil {
		return nil, fmt.Errorf("agenttool: %w", err)
	}
	return res, nil
}

// failOpen returns the original output with the reason appended.
func (f *Folder) failOpen(output string, lines []chunk.Line, c call, err error) Outcome {
	text := output
	if c.lineNumbers {
		text = render(output, lines, nil, true)
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += fmt.Sprintf("[context pruning failed, full output shown: %v]", err)
	return Outcome{Text: text, Err: err, Lines: len(lines), KeptLines: len(lines)}
}

func (f *Folder) mustKeep(line string) bool {
	for _, re := range f.cfg.keep {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

func percent(part, whole int) int {
	if whole == 0 {
		return 100
	}
	return (100*part + whole/2) / whole
}

// render writes the kept lines verbatim (keep nil: all lines), each folded
// run as one marker line naming the hidden lines, and with numbers the
// input line number of every kept line as nl -ba does.
func render(text string, lines []chunk.Line, keep []bool, numbers bool) string {
	var b strings.Builder
	b.Grow(len(text) + 8*len(lines))
	for i := 0; i < len(lines); {
		if keep == nil || keep[i] {
			l := lines[i]
			if numbers {
				fmt.Fprintf(&b, "%6d\t", l.Number)
			}
			b.WriteString(text[l.Start:l.TermEnd])
			if l.TermEnd == l.End && i+1 < len(lines) {
				b.WriteByte('\n')
			}
			i++
			continue
		}
		j := i
		for j < len(lines) && !keep[j] {
			j++
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		if numbers {
			b.WriteString("      \t")
		}
		indent := indentOf(text[lines[i].Start:lines[i].End])
		if j-i == 1 {
			fmt.Fprintf(&b, "%s… line %d folded …\n", indent, lines[i].Number)
		} else {
			fmt.Fprintf(&b, "%s… %d lines folded (%d-%d) …\n", indent, j-i, lines[i].Number, lines[j-1].Number)
		}
		i = j
	}
	return b.String()
}

func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}
