package pruner

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/backend"
	"github.com/prunekit/pruner/internal/syntax"
)

// Decision selects how per-token model outputs become keep scores.
type Decision string

// Decision modes (SPEC §3). The checkpoint kind picks the default: Prob for
// SWE-Pruner checkpoints, Viterbi for LaMR checkpoints with a final CRF.
const (
	// DecisionDefault lets the checkpoint choose.
	DecisionDefault Decision = ""
	// Prob scores a token with sigmoid(keep − prune) of its (fused) emissions.
	Prob Decision = "prob"
	// Viterbi scores a token 0 or 1 from the CRF's best path, as the LaMR fork does.
	Viterbi Decision = "viterbi"
	// Marginal scores a token with its CRF posterior keep probability
	// (forward-backward): smooth scores that respect the transition prior.
	Marginal Decision = "marginal"
)

// Renderer selects how the kept lines are written out.
type Renderer string

// Renderers.
const (
	// RenderPlaceholders folds every removed run into one placeholder line in
	// the language's comment syntax (SPEC §5).
	RenderPlaceholders Renderer = "placeholders"
	// RenderSWEPruner reproduces the SWE-Pruner service's pruned_code byte for
	// byte: "(filtered N lines)" runs, one-line gap filling, blank lines
	// dropped, Python splitlines numbering.
	RenderSWEPruner Renderer = "swepruner"
)

// ErrOption is wrapped by errors from invalid options.
var ErrOption = errors.New("invalid option")

// config holds every setting of a Pruner; Options edit it.
type config struct {
	threshold     float64
	thresholdSet  bool // WithThreshold was given (else the scorer's default)
	overlap       int
	maxLength     int
	keepFirst     bool
	keepLast      bool
	repair        bool
	repairSet     bool
	depHops       int // -1: by mode (see WithDependencyHops)
	language      string
	fileName      string
	instruction   string
	budgetInstr   string // instruction used to size windows ("" = instruction)
	backend       string
	precision     Precision // WithPrecision ("" = Float32)
	attnBlock     int       // WithAttentionBlock (0: whole windows)
	batchSize     int
	decision      Decision
	renderer      Renderer
	maxInputBytes int
	maxInputLines int
	budget        budget
	scorer        string
	keepLine      func(line string) bool
	binaryInput   bool
	// hub: how an hf: checkpoint is downloaded (hub.go).
	hub hubOptions
	// minRelevance is WithMinRelevance's value; minRelevanceSet says it was
	// given (else the scorer's calibrated default, see relevance.go).
	minRelevance    float64
	minRelevanceSet bool
	// minInputTokens: texts with fewer tokens come back whole when no
	// budget is set (WithMinInputTokens; 0 prunes every text).
	minInputTokens int
	// noNames: placeholders do not name what they fold
	// (WithPlaceholderNames(false)).
	noNames bool
	// foldHints: how many placeholders say what in their fold most likely
	// holds more (WithFoldHints).
	foldHints int
}

func defaultConfig() config {
	return config{
		threshold:      0.5,
		overlap:        chunk.DefaultOverlap,
		maxLength:      8192,
		repair:         true,
		depHops:        -1,
		instruction:    chunk.DefaultInstruction,
		batchSize:      4,
		renderer:       RenderPlaceholders,
		maxInputBytes:  DefaultMaxInputBytes,
		maxInputLines:  DefaultMaxInputLines,
		minInputTokens: DefaultMinInputTokens,
	}
}

// Option configures a Pruner. Options are checked when applied; an invalid
// value makes Load or With return an error wrapping ErrOption.
type Option func(*config) error

// WithThreshold sets the keep threshold on line scores: a line is kept by
// the model when its score is at least t. The default is 0.5, and 0.2 for
// the embedded line model (ScorerLine), whose scores read differently: a
// threshold t keeps the best lines until they hold a 1−t share of the
// model's expected relevant lines, so 0.2 keeps about 80% of them (among
// its best 1,000 lines: a longer text keeps its best lines, not a share of
// its length).
func WithThreshold(t float64) Option {
	return func(c *config) error {
		if math.IsNaN(t) || t < 0 || t > 1 {
			return fmt.Errorf("%w: threshold %v outside [0,1]", ErrOption, t)
		}
		c.threshold, c.thresholdSet = t, true
		return nil
	}
}

// WithOverlap sets how many tokens consecutive windows share (default 50).
// An overlap as large as a window's room for text (the max length less the
// prompt) is taken as 0, as the reference does; one above half that room
// is taken as half, so that the model never reads the text more than about
// twice.
func WithOverlap(tokens int) Option {
	return func(c *config) error {
		if tokens < 0 {
			return fmt.Errorf("%w: overlap %d < 0", ErrOption, tokens)
		}
		c.overlap = tokens
		return nil
	}
}

// WithMaxLength sets the model's maximum input length in tokens, prompt
// included (default 8192, as the SWE-Pruner service). Longer texts are cut
// into overlapping windows.
func WithMaxLength(tokens int) Option {
	return func(c *config) error {
		if tokens < 256 {
			return fmt.Errorf("%w: max length %d < 256 tokens leaves no room for text", ErrOption, tokens)
		}
		c.maxLength = tokens
		return nil
	}
}

// WithKeepFirstLine always keeps the first line (SWE-Pruner's
// always_keep_first_frags).
func WithKeepFirstLine(keep bool) Option {
	return func(c *config) error { c.keepFirst = keep; return nil }
}

// WithKeepLastLine always keeps the last line (useful for logs, whose tail
// holds the verdict). Under the SWE-Pruner renderer it is selected as the
// service selects its first line.
func WithKeepLastLine(keep bool) Option {
	return func(c *config) error { c.keepLast = keep; return nil }
}

// WithKeepLines always keeps the lines for which match returns true (it
// sees the line without its terminator), before repair and rendering, so
// their context is repaired too. Agent tools use it to never drop error
// lines, exit codes or verdicts from logs. Under the SWE-Pruner renderer
// the matched lines are selected as the service selects its first line.
func WithKeepLines(match func(line string) bool) Option {
	return func(c *config) error { c.keepLine = match; return nil }
}

// WithRepair turns the syntax-aware repair pass on or off (default on; off
// in SWE-Pruner rendering).
func WithRepair(on bool) Option {
	return func(c *config) error { c.repair, c.repairSet = on, true; return nil }
}

// WithDependencyHops sets how far the repair pass follows names used on
// kept lines to their imports and file-level definitions: 0 adds none, 1
// (the default with a threshold) adds the definitions of names used on kept
// lines, 2 also those of names used by those definitions, and so on. Under
// a budget (WithTokenBudget, WithCompression, WithLineBudget) the default is
// 0: the budget goes to the lines that score best, and scope headers,
// control-flow headers and brackets are still added so the output parses.
func WithDependencyHops(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: dependency hops %d < 0", ErrOption, n)
		}
		c.depHops = n
		return nil
	}
}

// WithLanguage overrides language detection ("python", "go", "js", ...;
// "text" for non-code; "" detects again). An unknown name is refused.
func WithLanguage(lang string) Option {
	return func(c *config) error {
		if strings.TrimSpace(lang) != "" {
			if _, err := syntax.ParseLanguage(lang); err != nil {
				return fmt.Errorf("%w: %w", ErrOption, err)
			}
		}
		c.language = strings.TrimSpace(lang)
		return nil
	}
}

// WithFileName gives a file name whose extension decides the language.
// Without one (piped input), the language is detected from the text, and a
// text detected as code must also parse as it: tool output that quotes
// code (git blame, test logs) and does not parse is pruned as text.
func WithFileName(name string) Option {
	return func(c *config) error { c.fileName = name; return nil }
}

// WithInstruction replaces the instruction in the model prompt (default
// "Given a query, judge if the document(code) is related to query.").
func WithInstruction(s string) Option {
	return func(c *config) error {
		if s == "" {
			return fmt.Errorf("%w: empty instruction", ErrOption)
		}
		c.instruction = s
		return nil
	}
}

// WithBackend picks the GoMLX backend: "go" (pure Go with SIMD matrix
// products and fused attention, the default), "simplego" (GoMLX's plain
// pure Go backend), "xla" (needs the xla build tag and an installed PJRT
// plugin) or "auto" (XLA when available, else "go").
//
// "xla:PLUGIN" names the plugin ("cuda", or a path to a plugin file), and
// key=value options after it, comma-separated, go to the PJRT client:
// "xla:cuda,preallocate=false" takes GPU memory as it is needed instead of
// reserving most of the device at Load (two Pruners on one H200: 27 GB
// instead of all 141 GB, the same speed), "memory_fraction=0.2" caps the
// reservation, "allocator=NAME" picks the plugin's allocator.
//
// An unknown name is refused when applied (ErrOption and
// ErrUnsupportedBackend), whatever the scorer; a known one that cannot run
// here fails at Load with a checkpoint (ErrUnsupportedBackend), and has no
// effect on the embedded line model, which runs in Go.
func WithBackend(name string) Option {
	return func(c *config) error {
		if err := backend.Check(name); err != nil {
			return fmt.Errorf("%w: %w: %w", ErrOption, ErrUnsupportedBackend, err)
		}
		c.backend = name
		return nil
	}
}

// WithAttentionBlock computes a checkpoint's causal self-attention in
// blocks of this many query tokens, each block against only the keys it can
// see, so the masked triangle above the blocks is never computed: at 8,192
// tokens, blocks of 4,096 compute 75% of the attention scores, blocks of
// 2,048 62.5%. The result equals whole-window attention up to the order of
// float32 sums (the reference goldens hold). 0, the default, computes each
// window at once; windows no longer than the block are unaffected.
//
// It pays on an accelerator at long windows, where the score matrix is most
// of the time, and costs compile time there (each block is its own part of
// the graph): on an H200, one 8,192-token call of a 0.6B checkpoint in
// bf16 took 105 ms whole and 85 ms in blocks of 2,048, and its first call
// compiled in 65 s instead of 28 s (docs/performance.md). It has no effect on
// the embedded line model. Like the backend and the precision, it is fixed
// at Load.
func WithAttentionBlock(tokens int) Option {
	return func(c *config) error {
		if tokens < 0 {
			return fmt.Errorf("%w: attention block %d < 0", ErrOption, tokens)
		}
		c.attnBlock = tokens
		return nil
	}
}

// WithBatchSize sets how many windows of one call go through the model
// together (default 4).
func WithBatchSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: batch size %d < 1", ErrOption, n)
		}
		c.batchSize = n
		return nil
	}
}

// WithDecision selects the decision mode (Prob, Viterbi, Marginal).
func WithDecision(d Decision) Option {
	return func(c *config) error {
		switch d {
		case DecisionDefault, Prob, Viterbi, Marginal:
			c.decision = d
			return nil
		}
		return fmt.Errorf("%w: unknown decision mode %q", ErrOption, d)
	}
}

// WithRenderer selects the output format (default RenderPlaceholders).
func WithRenderer(r Renderer) Option {
	return func(c *config) error {
		switch r {
		case RenderPlaceholders, RenderSWEPruner:
			c.renderer = r
			return nil
		}
		return fmt.Errorf("%w: unknown renderer %q", ErrOption, r)
	}
}

// WithSWEPrunerCompat reproduces the SWE-Pruner service exactly: its
// renderer and line numbering, no repair, and windows sized with the
// service's shorter budgeting instruction (so full windows lose their last
// token, as in the reference). The service keeps lines by threshold only:
// with a budget (WithTokenBudget, WithCompression, WithLineBudget) Load and
// With refuse it (ErrOption).
func WithSWEPrunerCompat() Option {
	return func(c *config) error {
		c.renderer = RenderSWEPruner
		c.repair, c.repairSet = false, true
		c.budgetInstr = chunk.BudgetInstruction
		return nil
	}
}

// Default input limits (see WithMaxInputBytes and WithMaxInputLines). Work
// and memory grow linearly with the text, and the limits keep one call from
// a hostile or mistaken client within a few hundred megabytes: at the
// defaults a call peaks well under 1 GB whatever the text.
const (
	DefaultMaxInputBytes = 16 << 20
	DefaultMaxInputLines = 1 << 20
)

// WithMaxInputBytes rejects texts longer than n bytes with ErrInputTooLarge.
// The default is DefaultMaxInputBytes (16 MiB); 0 lifts the limit, for a
// caller that bounds its inputs itself: a long text is just more windows,
// and memory stays proportional to its length.
func WithMaxInputBytes(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: max input bytes %d < 0", ErrOption, n)
		}
		c.maxInputBytes = n
		return nil
	}
}

// WithMaxInputLines rejects texts of more than n lines with
// ErrInputTooLarge. The default is DefaultMaxInputLines (1,048,576): per
// line state is a few hundred bytes, so a text of many empty lines stays
// bounded as well. 0 lifts the limit.
func WithMaxInputLines(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: max input lines %d < 0", ErrOption, n)
		}
		c.maxInputLines = n
		return nil
	}
}

// WithBinaryInput(true) prunes input that looks binary as if it were
// text. By default Prune refuses it with ErrBinaryInput, before any work,
// when its first 8 KiB (the whole text if shorter) hold
//   - at least 1% NUL bytes, or
//   - at least 30% (and at least 16) bytes that are neither valid UTF-8
//     nor a control character text uses (tab, newline, vertical tab, form
//     feed, carriage return, backspace, escape), or
//   - UTF-16 or UTF-32 text (a byte order mark, or NULs in every other
//     byte): convert it to UTF-8.
//
// Text in any script, Latin-1 prose with its few invalid bytes, logs with
// ANSI colours, CRLF, tabs and form feeds pass.
func WithBinaryInput(accept bool) Option {
	return func(c *config) error { c.binaryInput = accept; return nil }
}

// WithPlaceholderNames sets whether placeholders name what they fold (on by
// default): the definitions that start in the fold for code, the records
// (failed tests, commit subjects, grep paths, exception lines) for tool
// output, a few of them and a count of the rest:
//
//	// ... 40 lines omitted (120-159): func (c *Client) do, func retry, and 3 more
//	... 12 lines omitted (40-51): --- FAIL: TestParse ...
//
// Under a token budget names count as output, but lines come first: lines
// are selected as if placeholders had no names, and an output over the
// budget shows one name a placeholder, then names on the largest folds
// only, then none (with a note saying so) before it drops lines. On the
// val split this keeps recall at 10-30% of the tokens where it is without
// names; counting names during selection cost 2-3 points. With names off,
// code placeholders show the folded range alone and text placeholders
// neither range nor names (`... 12 lines omitted ...`).
func WithPlaceholderNames(on bool) Option {
	return func(c *config) error { c.noNames = !on; return nil }
}

// WithFoldHints makes the n placeholders whose folds hold the best-scoring
// lines say what in them most likely holds more of the answer, as an item
// a reader can unfold (Result.Unfold): `// ... 40 lines omitted
// (120-159): func do, func retry, and 3 more; likely relevant: func
// retry`. The item is the definition or record holding the fold's best
// line, named when a name picks it alone, else as a range (the line and
// five on each side when nothing holds it). Placeholder.Hint carries the
// item. Default 0: no hints, since a reader that cannot unfold gains
// nothing from them. Under a token budget hints go first when the output
// is over it, with a note. On the val split at 10% of the lines, one
// unfold of the hinted item lifted recall from 0.574 to 0.710 (labelled
// code questions) and from 0.700 to 0.787 (tool output) for 6-8 more
// points of the input's lines read; unfolding the fold whose names best
// matched the question reached 0.684 and 0.739 for 30 and 12 points.
func WithFoldHints(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: fold hints %d < 0", ErrOption, n)
		}
		c.foldHints = n
		return nil
	}
}

// WithTokenBudget replaces the threshold by a budget: lines are taken by
// score, each with the lines its repair pulls in, while the kept lines'
// tokens stay within n (placeholders add a few tokens per folded run).
func WithTokenBudget(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: token budget %d < 1", ErrOption, n)
		}
		c.budget = budget{tokens: n}
		return nil
	}
}

// WithCompression replaces the threshold by a budget of input tokens ÷ x
// (4 keeps about a quarter of the tokens, as the papers' 4× setting).
func WithCompression(x float64) Option {
	return func(c *config) error {
		if math.IsNaN(x) || x < 1 {
			return fmt.Errorf("%w: compression %v < 1", ErrOption, x)
		}
		c.budget = budget{ratio: x}
		return nil
	}
}

// WithLineBudget replaces the threshold by a budget of round(f·n) output
// lines for a text of n lines (round half to even, as the eval sets'
// baselines), taken by score with their repair cost; placeholders count as
// lines. The budget is never below min(3, n) lines, so that a short text
// keeps at least its best line with a placeholder on either side rather
// than a placeholder alone.
func WithLineBudget(f float64) Option {
	return func(c *config) error {
		if math.IsNaN(f) || f <= 0 || f > 1 {
			return fmt.Errorf("%w: line budget %v outside (0,1]", ErrOption, f)
		}
		c.budget = budget{lines: f}
		return nil
	}
}

// WithMinRelevance sets the document relevance below which a text is judged
// not to answer the query: without a budget it then comes back folded to a
// placeholder (and the lines its language requires) with a note, instead of
// the lines that score best among irrelevant ones. Result.Score holds the
// relevance. 0 turns the judgement off; without this option the scorer's
// calibrated default applies.
func WithMinRelevance(r float64) Option {
	return func(c *config) error {
		if math.IsNaN(r) || r < 0 || r > 1 {
			return fmt.Errorf("%w: minimum relevance %v outside [0,1]", ErrOption, r)
		}
		c.minRelevance, c.minRelevanceSet = r, true
		return nil
	}
}

// DefaultMinInputTokens is the size under which, without a budget, a text
// comes back whole (see WithMinInputTokens).
const DefaultMinInputTokens = 200

// WithMinInputTokens makes texts of fewer than n tokens come back whole,
// with Result.Unpruned saying why, when no budget is set: folding a text
// that small saves the agent little and costs it context. 0 prunes every
// text. A budget is always honoured.
func WithMinInputTokens(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: minimum input tokens %d < 0", ErrOption, n)
		}
		c.minInputTokens = n
		return nil
	}
}

// WithoutBudget goes back to the threshold.
func WithoutBudget() Option {
	return func(c *config) error { c.budget = budget{}; return nil }
}

// check refuses combinations of options that no path can honour; it runs
// after all options are applied, so their order does not matter.
func (c *config) check() error {
	if c.renderer == RenderSWEPruner && c.budget.set() {
		return fmt.Errorf("%w: the SWE-Pruner renderer keeps lines by threshold only; a budget needs the library's renderer (or WithoutBudget)", ErrOption)
	}
	if c.renderer == RenderSWEPruner && c.foldHints > 0 {
		return fmt.Errorf("%w: the SWE-Pruner renderer prints the service's placeholders; fold hints need the library's renderer (or WithFoldHints(0))", ErrOption)
	}
	return nil
}

// budget is at most one of a token count, a token compression ratio or a
// fraction of lines; the zero value means "use the threshold".
type budget struct {
	tokens int
	ratio  float64
	lines  float64
}

func (b budget) set() bool { return b.tokens > 0 || b.ratio > 0 || b.lines > 0 }

// WithScorer picks what scores lines: ScorerAuto (the checkpoint given to
// Load, or the embedded line model without one), ScorerLine (the embedded
// line model even when a checkpoint is given), ScorerLexical (BM25, the
// labelled baseline) or ScorerSemantic (which Load's checkpoint must then
// be: a sentence encoder, see ScorerSemantic).
func WithScorer(name string) Option {
	return func(c *config) error {
		switch name {
		case "", ScorerAuto, ScorerLexical, ScorerLine, ScorerSemantic:
			c.scorer = name
			return nil
		}
		return fmt.Errorf("%w: unknown scorer %q (want %q, %q, %q or %q)", ErrOption, name, ScorerAuto, ScorerLine, ScorerLexical, ScorerSemantic)
	}
}
