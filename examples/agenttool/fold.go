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
//     (nl -ba style on request); every folded run becomes one of the
//     library's placeholders, the same as examples/prune and the server
//     print (in code, a comment naming the hidden lines);
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
	"slices"
	"strings"
	"time"
	"unicode/utf8"

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
	maxStream   int
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

// WithMaxStreamBytes sets how much of a streaming tool's output the eino
// middleware reads to prune it (default pruner.DefaultMaxInputBytes, the
// pruner's own input limit); a longer stream is passed on unpruned as it
// arrives, instead of being held whole in memory.
func WithMaxStreamBytes(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("agenttool: max stream bytes %d < 1", n)
		}
		c.maxStream = n
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

// WithTimeout bounds one Fold (default DefaultTimeout): the pruning, the
// policy's re-rendering and any expansion; past it the original output is
// returned.
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
// (threshold, budget, scorer, input limits) apply; the Folder adds
// pruner.WithKeepLastLine and, for its keep patterns,
// pruner.WithKeepLines (replacing one set on p), replaces the library's
// small-input rule (pruner.WithMinInputTokens) by its own (WithMinChars),
// and renders with the library's placeholders (a Pruner set up for
// SWE-Pruner's output format included).
func NewFolder(p *pruner.Pruner, opts ...Option) (*Folder, error) {
	if p == nil {
		return nil, errors.New("agenttool: nil pruner")
	}
	cfg := config{
		maxStream: pruner.DefaultMaxInputBytes,
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
	expand      []pruner.LineRange
	unfold      []string
	options     []pruner.Option
}

// items returns what the call asks to show in full, as pruner.Result.Unfold
// items: the ranges of Expand, then the items of Unfold.
func (c *call) items() []string {
	out := make([]string, 0, len(c.expand)+len(c.unfold))
	for _, r := range c.expand {
		out = append(out, r.String())
	}
	return append(out, c.unfold...)
}

// FileName names the file the output comes from; its extension helps the
// pruner detect the language.
func FileName(name string) CallOption { return func(c *call) { c.fileName = name } }

// LineNumbers overrides WithLineNumbers for one call.
func LineNumbers(on bool) CallOption { return func(c *call) { c.lineNumbers = on } }

// Expand shows the output's lines of ranges in full (1-based, as the
// placeholders print them) in a pruned output, the rest pruned as without
// it (pruner.Result.Unfold, which records them in the Result's Expanded).
// Ranges outside the output or overlapping make the call fail open; check
// them first with pruner.CheckLineRanges.
func Expand(ranges ...pruner.LineRange) CallOption {
	return func(c *call) { c.expand = append(c.expand, ranges...) }
}

// PrunerOptions adds options of the pruner for one call, after the
// Folder's own: read_pruned's first view (WithFirstView) is a tighter view
// than the Folder gives other tools' outputs.
func PrunerOptions(opts ...pruner.Option) CallOption {
	return func(c *call) { c.options = append(c.options, opts...) }
}

// Unfold shows in full what items name in a pruned output, the rest pruned
// as without it: an item is what a placeholder prints, a name of what it
// folds ("func (c *Client) do", "do", "Client.do", "TestParse/case_01") or
// a line range ("120-159"), or several of them comma-separated; see
// pruner.Result.Unfold. A name that names nothing, or a range outside the
// output or overlapping another, makes the call fail open with the reason
// (the closest names for a name). Read_pruned's expand argument is this
// option, answered with the new lines only.
func Unfold(items ...string) CallOption {
	return func(c *call) { c.unfold = append(c.unfold, items...) }
}

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
	// kept and the kept lines the policy asked for: lines matching a keep
	// pattern (the last line, which the pruner always keeps, aside),
	// whatever the model scored them, and the last lines of non-code output
	// that the pruner had folded.
	Lines, KeptLines, ForcedLines int
	// Result is the library's result for the output, in the library's own
	// placeholder format, with the policy's lines in it: Text is the pruned
	// output without the header and line numbers, and Lines, Placeholders
	// and Tokens.Kept describe it. nil when the pruner did not run (no
	// question, a small output, a failure).
	Result *pruner.Result
}

// Fold prunes output against question. A blank question or a small output
// returns output untouched (numbered if asked); a failure returns output
// with the reason appended.
//
// The pruner keeps the lines matching the keep patterns itself
// (pruner.WithKeepLines, so code keeps their context too) and the last
// line (pruner.WithKeepLastLine); for non-code output Fold adds the last
// lines (WithTailLines) and renders the kept lines again with the library's
// renderer, so placeholders are the library's everywhere. Expand and
// Unfold then show what they ask for.
func (f *Folder) Fold(ctx context.Context, question, output string, opts ...CallOption) (out Outcome) {
	c := f.newCall(opts)
	lines := chunk.SplitLines(output)
	out.Lines, out.KeptLines = len(lines), len(lines)
	switch {
	case strings.TrimSpace(question) == "":
		return f.whole(output, lines, c, out, "no "+QuestionArg)
	case utf8.RuneCountInString(output) < f.cfg.minChars:
		return f.whole(output, lines, c, out, fmt.Sprintf("output under %d characters", f.cfg.minChars))
	}
	defer func() {
		if v := recover(); v != nil {
			out = f.failOpen(output, lines, c, fmt.Errorf("agenttool: internal error: %v", v))
		}
	}()
	// One deadline for the whole call: pruning, the policy's re-rendering
	// and the expansion.
	ctx, cancel := context.WithTimeout(ctx, f.cfg.timeout)
	defer cancel()
	res, forced, err := f.view(ctx, question, output, lines, c.fileName, c.options)
	if err != nil {
		return f.failOpen(output, lines, c, err)
	}
	out.Result, out.ForcedLines = res, forced
	if items := c.items(); len(items) > 0 && res.Unpruned == "" {
		if res, err = res.Unfold(ctx, items...); err != nil {
			return f.failOpen(output, lines, c, fmt.Errorf("agenttool: %w", err))
		}
		out.Result = res
	}
	return f.render(question, output, lines, c, out)
}

func (f *Folder) newCall(opts []CallOption) call {
	c := call{lineNumbers: f.cfg.lineNumbers}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// whole returns out with output whole (numbered if asked) and why.
func (f *Folder) whole(output string, lines []chunk.Line, c call, out Outcome, why string) Outcome {
	out.Skipped = why
	out.Text = output
	out.KeptLines = len(lines)
	if c.lineNumbers {
		out.Text = numberLines(output, lines)
	}
	return out
}

// view prunes output and applies the policy: the view Fold shows before
// any expansion, and the count of the lines the policy kept.
func (f *Folder) view(ctx context.Context, question, output string, lines []chunk.Line, fileName string, extra []pruner.Option) (*pruner.Result, int, error) {
	res, err := f.prune(ctx, question, output, fileName, extra)
	if err != nil {
		return nil, 0, err
	}
	forced := 0
	if res.Unpruned != "" {
		for i, l := range res.Lines {
			if l.Reason == pruner.ReasonAlwaysKeep && i < len(lines)-1 && f.mustKeep(output[lines[i].Start:lines[i].End]) {
				forced++ // kept by the pruner for the policy
			}
		}
		return res, forced, nil
	}
	if len(res.Lines) != len(lines) {
		return nil, 0, fmt.Errorf("agenttool: pruner returned %d lines for %d", len(res.Lines), len(lines))
	}
	tail := f.tail(res)
	keep := make([]bool, len(lines))
	added := false // lines kept here that the pruner folded
	for i, l := range res.Lines {
		keep[i] = l.Kept
		text := output[lines[i].Start:lines[i].End]
		switch {
		case keep[i] && l.Reason == pruner.ReasonAlwaysKeep && i < len(lines)-1 && f.mustKeep(text):
			forced++ // kept by the pruner for the policy
		case !keep[i] && (i >= len(lines)-tail || f.mustKeep(text)):
			keep[i] = true
			added = true
			forced++
		}
	}
	if added {
		if res, err = f.refold(ctx, output, lines, keep, res); err != nil {
			return nil, 0, err
		}
	}
	return res, forced, nil
}

// tail is the number of last lines the policy keeps in res's output.
func (f *Folder) tail(res *pruner.Result) int {
	if res.Language != "" {
		return 0 // source code: its end is no verdict, unlike a log's
	}
	return f.cfg.tailLines
}

// forcedIn counts the kept lines of a view the policy asked for, for a
// view Fold did not just make (one remembered, then unfolded): lines the
// policy marked always-keep (the last line aside) that match a keep
// pattern or lie in the tail.
func (f *Folder) forcedIn(output string, lines []chunk.Line, res *pruner.Result) int {
	if len(res.Lines) != len(lines) {
		return 0
	}
	tail := f.tail(res)
	if res.Unpruned != "" {
		tail = 0
	}
	n := 0
	for i, l := range res.Lines {
		if l.Reason == pruner.ReasonAlwaysKeep && i < len(lines)-1 &&
			(i >= len(lines)-tail || f.mustKeep(output[lines[i].Start:lines[i].End])) {
			n++
		}
	}
	return n
}

// render fills out's text from out.Result: the header and the view
// (numbered if asked), or the output whole when nothing is folded.
func (f *Folder) render(question, output string, lines []chunk.Line, c call, out Outcome) Outcome {
	res := out.Result
	if res.Unpruned != "" {
		return f.whole(output, lines, c, out, res.Unpruned)
	}
	out.KeptLines = 0
	kept := 0 // bytes
	for i, l := range res.Lines {
		if l.Kept {
			out.KeptLines++
			kept += lines[i].TermEnd - lines[i].Start
		}
	}
	if out.KeptLines == len(lines) {
		return f.whole(output, lines, c, out, "every line is relevant")
	}
	body := res.Text // the library's rendering, in the language's comment syntax
	if c.lineNumbers {
		body = res.Numbered()
	}
	out.Pruned = true
	out.Text = fmt.Sprintf("[pruned for %q: kept %d of %d lines (%d%% of the text), folded %d; %s]\n%s",
		question, out.KeptLines, len(lines), percent(kept, len(output)), len(lines)-out.KeptLines, f.cfg.fullHint, body)
	return out
}

// unfold shows items in a view, bounded by the Folder's timeout; a panic
// becomes an error.
func (f *Folder) unfold(ctx context.Context, view *pruner.Result, items []string) (res *pruner.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("agenttool: internal error: %v", v)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, f.cfg.timeout)
	defer cancel()
	return view.Unfold(ctx, items...)
}

func (f *Folder) prune(ctx context.Context, question, output, fileName string, extra []pruner.Option) (*pruner.Result, error) {
	// WithMinChars is the Folder's rule for small outputs; the library's
	// own (WithMinInputTokens) would apply a second one. The policy and
	// the line numbers need the library's renderer, whatever p renders.
	opts := append(slices.Clone(extra), pruner.WithKeepLastLine(true), pruner.WithKeepLines(f.mustKeep), pruner.WithFileName(fileName),
		pruner.WithMinInputTokens(0), pruner.WithRenderer(pruner.RenderPlaceholders))
	p, err := f.p.With(opts...)
	if err != nil {
		return nil, fmt.Errorf("agenttool: %w", err)
	}
	res, err := p.Prune(ctx, question, output)
	if err != nil {
		return nil, fmt.Errorf("agenttool: %w", err)
	}
	return res, nil
}

// refold returns a copy of res with the lines of keep kept (the policy's
// additions are marked always-keep, blank lines between kept lines bridged
// as the library does) and rendered again by the library
// (pruner.Result.Expand), placeholders naming what they fold.
func (f *Folder) refold(ctx context.Context, output string, lines []chunk.Line, keep []bool, res *pruner.Result) (*pruner.Result, error) {
	keep = slices.Clone(keep)
	why := make([]pruner.Reason, len(keep))
	for i := range keep {
		if keep[i] && !res.Lines[i].Kept {
			why[i] = pruner.ReasonAlwaysKeep
		}
	}
	// Blank lines whose nearest non-blank neighbours are kept: folding them
	// would cost a placeholder line to save an empty one.
	lastKept := false
	for i := 0; i < len(lines); {
		if strings.TrimSpace(output[lines[i].Start:lines[i].End]) != "" {
			lastKept = keep[i]
			i++
			continue
		}
		j := i
		for j < len(lines) && strings.TrimSpace(output[lines[j].Start:lines[j].End]) == "" {
			j++
		}
		if lastKept && j < len(lines) && keep[j] {
			for b := i; b < j; b++ {
				if !keep[b] {
					keep[b], why[b] = true, pruner.ReasonBlank
				}
			}
		}
		i = j
	}
	// The added lines as runs: ranges that do not overlap.
	ranges := runs(len(keep), func(i int) bool { return why[i] != pruner.ReasonNone })
	cp, err := res.ExpandContext(ctx, ranges...)
	if err != nil {
		return nil, fmt.Errorf("agenttool: render: %w", err)
	}
	for i, w := range why {
		if w != pruner.ReasonNone {
			cp.Lines[i].Reason = w
		}
	}
	return cp, nil
}

// failOpen returns the original output with the reason appended.
func (f *Folder) failOpen(output string, lines []chunk.Line, c call, err error) Outcome {
	text := output
	if c.lineNumbers {
		text = numberLines(output, lines)
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

// numberLines prefixes every line of text with its number as nl -ba does.
func numberLines(text string, lines []chunk.Line) string {
	var b strings.Builder
	b.Grow(len(text) + 8*len(lines))
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t", l.Number)
		b.WriteString(text[l.Start:l.TermEnd])
		if l.TermEnd == l.End && i+1 < len(lines) {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// runs returns the maximal runs of the lines 0..n-1 for which in holds, as
// 1-based line ranges in order.
func runs(n int, in func(i int) bool) []pruner.LineRange {
	var out []pruner.LineRange
	for i := 0; i < n; i++ {
		if !in(i) {
			continue
		}
		j := i
		for j+1 < n && in(j+1) {
			j++
		}
		out = append(out, pruner.LineRange{First: i + 1, Last: j + 1})
		i = j
	}
	return out
}
