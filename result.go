package pruner

import "encoding/json"

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
	ReasonCheaper    Reason = "cheaper"     // in a run a placeholder would not have shortened
	ReasonExpanded   Reason = "expanded"    // unfolded on request (Result.Expand)
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
	Number int `json:"number"`
	// Kept reports whether the line is in the output, byte-identical.
	Kept bool `json:"kept"`
	// Score is the line's relevance in [0,1]; lines without a scored
	// character (blank lines) have score 0.
	Score float64 `json:"score"`
	// Reason says why the line was kept (empty when removed).
	Reason Reason `json:"reason,omitempty"`
}

// Placeholder is an output line that stands for removed input lines.
type Placeholder struct {
	// OutputLine is the placeholder's 1-based line number in Result.Text.
	OutputLine int `json:"output_line"`
	// FirstLine and LastLine are the 1-based input lines it replaces.
	FirstLine int `json:"first_line"`
	LastLine  int `json:"last_line"`
	// Names are the definitions or records the placeholder names (see
	// WithPlaceholderNames), in full where the line shows them shortened
	// (`func (c *Client) do` as `func do`); More is the number of further
	// ones it counts ("and 3 more").
	Names []string `json:"names,omitempty"`
	More  int      `json:"more,omitempty"`
	// Hint is the item the placeholder suggests unfolding ("func retry",
	// "140-150"; WithFoldHints), "" for none.
	Hint string `json:"hint,omitempty"`
}

// TokenScore is the merged keep score of one token of the input text (the
// average over the windows that saw it).
type TokenScore struct {
	// Start and End are the token's byte offsets in the input text.
	Start int `json:"start"`
	End   int `json:"end"`
	// Score is the token's keep score in [0,1].
	Score float64 `json:"score"`
}

// TokenCounts reports sizes in Qwen3 tokens.
type TokenCounts struct {
	Input      int `json:"input"`       // tokens of the input text
	Kept       int `json:"kept"`        // tokens of the rendered output
	ModelInput int `json:"model_input"` // tokens the model read, prompts of every window included
}

// Result is the outcome of one Prune call.
type Result struct {
	// Text is the pruned text: kept lines verbatim, removed runs folded.
	Text string `json:"text"`
	// Lines has one entry per input line, in order.
	Lines []Line `json:"lines"`
	// Placeholders lists the folded runs in output order.
	Placeholders []Placeholder `json:"placeholders"`
	// Score is the document-level relevance in [0,1]: the skimmer's
	// document score (max over windows), the line model's relevance gate
	// probability (that the text answers the query; its best line's keep
	// probability when the gate is off, WithMinRelevance(0)), the semantic
	// scorer's gate over that probability and the encoder's similarities,
	// or the share of the query's identifier pieces found by the lexical
	// scorer.
	// The gate was fitted on texts of up to 500 lines; over much longer
	// ones its probability grows with the length (megabytes of unrelated
	// code read as relevant), while the lines kept stay bounded.
	Score float64 `json:"score"`
	// TokenScores holds the per-token scores of a token-level scorer (the
	// Qwen3 skimmer), in text order; nil for line scorers.
	TokenScores []TokenScore `json:"token_scores,omitempty"`
	// Tokens counts input, output and model tokens.
	Tokens TokenCounts `json:"tokens"`
	// Windows is the number of model windows the text was cut into.
	Windows int `json:"windows"`
	// Language is the language the repair pass and renderer used ("" for
	// non-code text).
	Language string `json:"language"`
	// Scorer names what scored the lines: "swe-pruner", "lamr", "line"
	// (the embedded line model) or "lexical".
	Scorer string `json:"scorer"`
	// Unpruned, when not empty, says why the text was returned whole.
	Unpruned string `json:"unpruned,omitempty"`
	// Notes lists adjustments made to the request (e.g. a truncated query).
	Notes []string `json:"notes"`
	// Expanded lists what Unfold showed on request, in the order asked
	// (empty for a Result straight from Prune).
	Expanded []Expansion `json:"expanded,omitempty"`

	// src is what Expand needs to render the input again; nil for a
	// Result not returned by Prune (e.g. decoded from JSON).
	src *expandSource
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

// MarshalJSON encodes r in the one JSON shape of the library's front doors
// (the CLI's -json, the server's /v1/prune; the MCP tools' _meta carries a
// summary of it): the fields under their snake_case names, plus
// kept_lines (KeptLines). lines,
// kept_lines, placeholders and notes are arrays even when empty;
// token_scores (token-level scorers only) and unpruned are left out when
// empty. Unmarshalling the JSON into a Result restores its fields.
func (r Result) MarshalJSON() ([]byte, error) {
	type fields Result // Result's fields without this method
	out := struct {
		fields
		KeptLines []int `json:"kept_lines"`
	}{fields(r), r.KeptLines()}
	if out.Lines == nil {
		out.Lines = []Line{}
	}
	if out.KeptLines == nil {
		out.KeptLines = []int{}
	}
	if out.Placeholders == nil {
		out.Placeholders = []Placeholder{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	return json.Marshal(out)
}
