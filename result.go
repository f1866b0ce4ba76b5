package pruner

// Reason says why a line is in the output.
type Reason string

// Reasons a line is kept. Lines removed have the empty Reason.
const (
	ReasonNone       Reason = ""
	ReasonModel      Reason = "model"       // its score reached the threshold
	ReasonAlwaysKeep Reason = "always-keep" // first/last line option
	ReasonGap        Reason = "gap"         // SWE-Pruner one-line gap filling
	ReasonBlank      Reason = "blank"       // a blank line between kept lines
	ReasonUnpruned   Reason = "unpruned"    // the whole text was returned (see Result.Unpruned)
	// Repair reasons: the syntax pass added the line.
	ReasonScope      Reason = "scope"      // enclosing class/function header
	ReasonControl    Reason = "control"    // control-flow header or companion
	ReasonDependency Reason = "dependency" // definition or import of a used symbol
	ReasonBracket    Reason = "bracket"    // closing line of a bracket group, block or string a kept line opens
	ReasonStatement  Reason = "statement"  // rest of a multi-line statement a kept line is part of
	ReasonReturn     Reason = "return"     // a kept function's trivial return
	ReasonRepair     Reason = "repair"     // added by repair for another reason
)

// Line is the decision for one input line.
type Line struct {
	// Number is the 1-based input line number (lines end at "\n"; with the
	// SWE-Pruner renderer, Python splitlines numbering).
	Number int
	// Kept reports whether the line is in the output, byte-identical.
	Kept bool
	// Score is the line's relevance in [0,1]; lines without a scored
	// character (blank lines) have score 0.
	Score float64
	// Reason says why the line was kept (empty when removed).
	Reason Reason
}

// Placeholder is an output line that stands for removed input lines.
type Placeholder struct {
	// OutputLine is the placeholder's 1-based line number in Result.Text.
	OutputLine int
	// FirstLine and LastLine are the 1-based input lines it replaces.
	FirstLine, LastLine int
}

// TokenScore is the merged keep score of one token of the input text (the
// average over the windows that saw it).
type TokenScore struct {
	// Start and End are the token's byte offsets in the input text.
	Start, End int
	// Score is the token's keep score in [0,1].
	Score float64
}

// TokenCounts reports sizes in Qwen3 tokens.
type TokenCounts struct {
	Input      int // tokens of the input text
	Kept       int // tokens of the rendered output
	ModelInput int // tokens the model read, prompts of every window included
}

// Result is the outcome of one Prune call.
type Result struct {
	// Text is the pruned text: kept lines verbatim, removed runs folded.
	Text string
	// Lines has one entry per input line, in order.
	Lines []Line
	// Placeholders lists the folded runs in output order.
	Placeholders []Placeholder
	// Score is the document-level relevance in [0,1]: the skimmer's
	// document score (max over windows), the line model's best line
	// probability, or the share of the query's identifier pieces found by
	// the lexical scorer.
	Score float64
	// TokenScores holds the per-token scores of a token-level scorer (the
	// Qwen3 skimmer), in text order; nil for line scorers.
	TokenScores []TokenScore
	// Tokens counts input, output and model tokens.
	Tokens TokenCounts
	// Windows is the number of model windows the text was cut into.
	Windows int
	// Language is the language the repair pass and renderer used ("" for
	// non-code text).
	Language string
	// Scorer names what scored the lines: "swe-pruner", "lamr", "line"
	// (the embedded line model) or "lexical".
	Scorer string
	// Unpruned, when not empty, says why the text was returned whole.
	Unpruned string
	// Notes lists adjustments made to the request (e.g. a truncated query).
	Notes []string
}

// KeptLines returns the 1-based numbers of the kept input lines.
func (r *Result) KeptLines() []int {
	var kept []int
	for _, l := range r.Lines {
		if l.Kept {
			kept = append(kept, l.Number)
		}
	}
	return kept
}
