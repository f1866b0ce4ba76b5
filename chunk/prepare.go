package chunk

import (
	"errors"
	"fmt"
)

// ErrNilEncoder reports a Prepare call without an Encoder.
var ErrNilEncoder = errors.New("chunk: nil encoder")

// Options configures Prepare. The zero value of every field picks the
// default noted on it.
type Options struct {
	// Instruction goes into every model input (default DefaultInstruction).
	Instruction string
	// BudgetInstruction sizes the windows (default: Instruction). Set it to
	// the package constant BudgetInstruction to reproduce the Python
	// reference, whose full windows then lose their last token.
	BudgetInstruction string
	// MaxLength is the longest model input in tokens (default 8192).
	MaxLength int
	// Overlap is the number of tokens shared by consecutive windows
	// (default DefaultOverlap; a negative value means none).
	Overlap int
	// PrefixIDs and SuffixIDs frame every input (defaults DefaultPrefixIDs
	// and DefaultSuffixIDs).
	PrefixIDs, SuffixIDs []int32
}

// DefaultMaxLength is the reference's model input length.
const DefaultMaxLength = 8192

// Plan is what Prepare computed for one (query, text) pair.
type Plan struct {
	// Budget is the number of text tokens one window may hold. The
	// reference skips the model when it is below MinTextTokens.
	Budget int
	// TextTokens is the number of tokens of the whole text.
	TextTokens int
	// Tokens are the tokens of the whole text.
	Tokens []Token
	// Windows are the spans of text scored separately; empty text has none.
	Windows []Window
	// Inputs holds one model input per window; Inputs[i].Tokens have spans
	// relative to Windows[i].
	Inputs []Input
}

// WindowScores pairs each window with its token scores (scores[i] holds one
// score per token of Inputs[i]), ready for Merge.
func (p Plan) WindowScores(scores [][]float64) []WindowScores {
	out := make([]WindowScores, min(len(p.Windows), len(scores)))
	for i := range out {
		out[i] = WindowScores{Start: p.Windows[i].Start, Tokens: p.Inputs[i].Tokens, Scores: scores[i]}
	}
	return out
}

// Prepare tokenizes query and text with enc and builds the model inputs the
// way the reference's prune() does: the text budget is computed with the
// budget instruction's query part, a text over budget is cut into windows
// (PlanWindows) and each window is re-tokenized from its own text, and each
// input is built with the input instruction's query part (BuildInput). It
// returns ErrNoRoom when the budget is below one token, and ErrNilEncoder
// when enc is nil.
func Prepare(enc Encoder, query, text string, opts Options) (Plan, error) {
	if enc == nil {
		return Plan{}, ErrNilEncoder
	}
	instruction := opts.Instruction
	if instruction == "" {
		instruction = DefaultInstruction
	}
	budgetInstruction := opts.BudgetInstruction
	if budgetInstruction == "" {
		budgetInstruction = instruction
	}
	maxLength := opts.MaxLength
	if maxLength == 0 {
		maxLength = DefaultMaxLength
	}
	overlap := opts.Overlap
	if overlap == 0 {
		overlap = DefaultOverlap
	}
	prefix, suffix := opts.PrefixIDs, opts.SuffixIDs
	if prefix == nil {
		prefix = DefaultPrefixIDs()
	}
	if suffix == nil {
		suffix = DefaultSuffixIDs()
	}

	queryTokens := enc.Encode(FormatQuery(instruction, query))
	budgetQueryLen := len(queryTokens)
	if budgetInstruction != instruction {
		budgetQueryLen = len(enc.Encode(FormatQuery(budgetInstruction, query)))
	}
	budget := TextBudget(maxLength, len(prefix), budgetQueryLen, len(suffix))
	if budget < 1 {
		return Plan{Budget: budget}, fmt.Errorf("%w: %d-token max length, %d prefix, %d instruction-and-query and %d suffix tokens",
			ErrNoRoom, maxLength, len(prefix), budgetQueryLen, len(suffix))
	}
	textTokens := enc.Encode(text)
	windows, err := PlanWindows(text, textTokens, budget, overlap)
	if err != nil {
		return Plan{}, fmt.Errorf("chunk: planning windows: %w", err)
	}
	plan := Plan{Budget: budget, TextTokens: len(textTokens), Tokens: textTokens, Windows: windows, Inputs: make([]Input, len(windows))}
	for i, w := range windows {
		tokens := textTokens
		if len(windows) > 1 {
			tokens = enc.Encode(w.Text(text))
		}
		in, err := BuildInput(prefix, queryTokens, tokens, suffix, maxLength)
		if err != nil {
			return Plan{}, fmt.Errorf("chunk: window %d: %w", i, err)
		}
		plan.Inputs[i] = in
	}
	return plan, nil
}
