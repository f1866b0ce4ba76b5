package astrepair

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/prunekit/pruner/internal/syntax"
)

// Placeholder maps one placeholder line of a rendering back to the input
// lines it stands for.
type Placeholder struct {
	// OutputLine is the 0-based line of the placeholder in Rendered.Text.
	OutputLine int
	// FirstLine and LastLine are the 1-based input lines folded, inclusive.
	FirstLine, LastLine int
	// Names are the names the placeholder shows (WithNaming), More the
	// number of further names it counts.
	Names []string
	More  int
	// Hint is the item the placeholder suggests unfolding (Naming.Hints),
	// "" for none.
	Hint string
}

// Rendered is a pruned text.
type Rendered struct {
	// Text holds the kept lines, byte-identical with their terminators, and
	// one placeholder line per removed run.
	Text string
	// Placeholders lists the placeholder lines in output order.
	Placeholders []Placeholder
}

type renderConfig struct {
	comment    string
	hasComment bool
	naming     Naming
}

// RenderOption configures Render.
type RenderOption func(*renderConfig)

// WithCommentPrefix makes placeholders comments starting with prefix (for
// example "#" for shell or YAML text that the library does not parse). An
// empty prefix gives neutral placeholders.
func WithCommentPrefix(prefix string) RenderOption {
	return func(c *renderConfig) {
		c.comment = prefix
		c.hasComment = true
	}
}

// Render replaces each run of removed lines with one placeholder line at
// the run's indentation, in the language's comment syntax (`# ... 12 lines
// omitted (40-51)`), and puts `pass` into Python blocks the removal would
// leave empty. Non-code text gets `... 12 lines omitted ...`. Mask entries
// past the last line are ignored and missing entries count as removed, so
// Render fails only when ctx is done; Python text is parsed to find empty
// blocks, and if that parse is impossible (text too large) fillers are
// skipped.
func Render(ctx context.Context, text string, lang syntax.Language, keep []bool, opts ...RenderOption) (Rendered, error) {
	// Only Python needs the tree (for fillers); other languages render from
	// the lines alone.
	if lang == syntax.Python {
		a, err := Analyze(ctx, text, lang)
		if err == nil {
			return a.Render(ctx, keep, opts...)
		}
		if ctx.Err() != nil {
			return Rendered{}, fmt.Errorf("render: %w", ctx.Err())
		}
	}
	return textAnalysis(text, lang).Render(ctx, keep, opts...)
}

// Render renders keep over the analysed text; see the package function
// Render. The work is linear in the lines.
func (a *Analysis) Render(ctx context.Context, keep []bool, opts ...RenderOption) (Rendered, error) {
	if err := ctx.Err(); err != nil {
		return Rendered{}, fmt.Errorf("render: %w", err)
	}
	cfg := renderConfig{comment: a.lang.LineComment()}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	code := a.lang.IsCode() || (cfg.hasComment && cfg.comment != "")
	kept := func(r int) bool { return r >= 0 && r < len(keep) && keep[r] }
	filler, err := a.fillerRows(ctx, kept)
	if err != nil {
		return Rendered{}, err
	}
	var tk ticker
	var sb strings.Builder
	sb.Grow(len(a.text) / 2)
	var out Rendered
	outLine := 0
	lines := &a.lines
	n := lines.n()
	for r := 0; r < n; {
		if tk.stop(ctx) {
			return Rendered{}, fmt.Errorf("render: %w", ctx.Err())
		}
		if kept(r) {
			sb.WriteString(a.text[lines.start(r):lines.termEnd(r)])
			outLine++
			r++
			continue
		}
		first := r
		needPass := false
		for r < n && !kept(r) {
			if tk.stop(ctx) {
				return Rendered{}, fmt.Errorf("render: %w", ctx.Err())
			}
			if filler[r] {
				needPass = true
			}
			r++
		}
		last := r - 1
		indentRow := first
		for k := first; k <= last; k++ {
			if tk.stop(ctx) {
				return Rendered{}, fmt.Errorf("render: %w", ctx.Err())
			}
			if strings.TrimSpace(lines.content(k)) != "" {
				indentRow = k
				break
			}
		}
		if needPass {
			for k := first; k <= last; k++ {
				if filler[k] {
					indentRow = k
					break
				}
			}
		}
		count := last - first + 1
		var suffix string
		var shown []string
		var more int
		if cfg.naming.Max > 0 && !cfg.naming.Unnamed[first+1] {
			suffix, shown, more = namesSuffix(a.foldRows(first, last), cfg.naming)
		}
		hint := ""
		for _, h := range cfg.naming.Hints {
			if h.First >= first+1 && h.Last <= last+1 && h.Item != "" {
				hint = h.Item
				suffix += "; likely relevant: " + hint
				break
			}
		}
		if code {
			sb.WriteString(indentOf(lines.content(indentRow)))
			if needPass {
				sb.WriteString("pass  ")
			}
			sb.WriteString(cfg.comment)
			sb.WriteString(" ... ")
			sb.WriteString(strconv.Itoa(count))
			if count == 1 {
				sb.WriteString(" line omitted (")
				sb.WriteString(strconv.Itoa(first + 1))
			} else {
				sb.WriteString(" lines omitted (")
				sb.WriteString(strconv.Itoa(first + 1))
				sb.WriteString("-")
				sb.WriteString(strconv.Itoa(last + 1))
			}
			sb.WriteString(")")
			sb.WriteString(suffix)
		} else {
			sb.WriteString("... ")
			sb.WriteString(strconv.Itoa(count))
			if count == 1 {
				sb.WriteString(" line omitted")
			} else {
				sb.WriteString(" lines omitted")
			}
			if cfg.naming.Max > 0 {
				// A named rendering shows the range, so a reader can ask
				// for it.
				sb.WriteString(" (")
				sb.WriteString(strconv.Itoa(first + 1))
				if count > 1 {
					sb.WriteString("-")
					sb.WriteString(strconv.Itoa(last + 1))
				}
				sb.WriteString(")")
				sb.WriteString(suffix)
			}
			sb.WriteString(" ...")
		}
		sb.WriteString(a.text[lines.end(last):lines.termEnd(last)])
		out.Placeholders = append(out.Placeholders, Placeholder{OutputLine: outLine, FirstLine: first + 1, LastLine: last + 1, Names: shown, More: more, Hint: hint})
		outLine++
	}
	out.Text = sb.String()
	return out, nil
}

// fillerRows marks, for Python, the first statement row of every block
// whose header is kept but whose statements are all removed.
func (a *Analysis) fillerRows(ctx context.Context, kept func(int) bool) (map[int]bool, error) {
	if len(a.pyBlocks) == 0 {
		return nil, nil
	}
	var tk ticker
	var out map[int]bool
	for _, b := range a.pyBlocks {
		if tk.stop(ctx) {
			return nil, fmt.Errorf("render: %w", ctx.Err())
		}
		if !kept(int(b.header)) || kept(int(b.first)) {
			continue
		}
		empty := true
		for _, r := range a.pyStmts[b.stmts:b.stmtsEnd] {
			if tk.stop(ctx) {
				return nil, fmt.Errorf("render: %w", ctx.Err())
			}
			if kept(int(r)) {
				empty = false
				break
			}
		}
		if empty {
			if out == nil {
				out = make(map[int]bool)
			}
			out[int(b.first)] = true
		}
	}
	return out, nil
}

// indentOf returns the leading blanks of a line.
func indentOf(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] != ' ' && line[i] != '\t' {
			return line[:i]
		}
	}
	return line
}
