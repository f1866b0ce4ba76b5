package chunk

import (
	"errors"
	"fmt"
)

// Token is one token of a text with its id and its span, [Start,End) in
// Unicode code points (HF offsets semantics) and [ByteStart,ByteEnd) in bytes
// of the same text.
type Token struct {
	ID                 int32
	Start, End         int
	ByteStart, ByteEnd int
}

// Encoder tokenizes user text without parsing special tokens.
type Encoder interface {
	Encode(text string) []Token
}

// DefaultInstruction is the instruction the reference puts into every model
// input.
const DefaultInstruction = "Given a query, judge if the document(code) is related to query."

// BudgetInstruction is the instruction the Python reference uses, instead of
// DefaultInstruction, when it sizes the windows (format_instruction(None, q)).
// It is one token shorter for typical queries, which makes every full window
// of the reference lose its last text token; pass it to the budget only to
// reproduce the reference output.
const BudgetInstruction = "Given a web search query, retrieve relevant passages that answer the query"

// DefaultPrefixText is the text of the prompt prefix (system prompt and the
// start of the user turn). Its special tokens must be inserted as ids, see
// DefaultPrefixIDs.
const DefaultPrefixText = "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n"

// DefaultSuffixText is the text of the prompt suffix (end of the user turn and
// an empty thinking block). Its special tokens must be inserted as ids, see
// DefaultSuffixIDs.
const DefaultSuffixText = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"

// DefaultOverlap is the reference's number of tokens shared by consecutive
// windows.
const DefaultOverlap = 50

// MinTextTokens is the reference's smallest text budget worth running the
// model for: below it the Python service returns the text unpruned.
const MinTextTokens = 100

// ErrNoRoom reports a maximum length that cannot even hold the prefix, the
// query part and the suffix.
var ErrNoRoom = errors.New("chunk: max length leaves no room for the prompt")

// DefaultPrefixIDs returns the Qwen3 ids of DefaultPrefixText with its
// special tokens, as recorded by the reference (39 ids). Each call returns a
// fresh slice.
func DefaultPrefixIDs() []int32 {
	return []int32{
		151644, 8948, 198, 60256, 3425, 279, 11789, 20027, 279, 8502,
		3118, 389, 279, 11361, 323, 279, 758, 1235, 3897, 13,
		7036, 429, 279, 4226, 646, 1172, 387, 330, 9693, 1,
		476, 330, 2152, 3263, 151645, 198, 151644, 872, 198,
	}
}

// DefaultSuffixIDs returns the Qwen3 ids of DefaultSuffixText with its
// special tokens, as recorded by the reference (9 ids). Each call returns a
// fresh slice.
func DefaultSuffixIDs() []int32 {
	return []int32{151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271}
}

// FormatQuery returns the query part of the model input. It is tokenized on
// its own, separately from the text, as the reference does.
func FormatQuery(instruction, query string) string {
	return "<Instruct>: " + instruction + "\n<Query>: " + query + "\n<Document>: "
}

// TextBudget returns how many text tokens fit in one model input of
// maxLength tokens next to the prefix, the query part and the suffix. The
// result may be zero or negative; callers compare it with MinTextTokens.
func TextBudget(maxLength, prefixLen, queryLen, suffixLen int) int {
	return maxLength - prefixLen - suffixLen - queryLen
}

// Input is one model input: prefix, query part, text tokens and suffix.
type Input struct {
	// IDs is the complete, unpadded input sequence.
	IDs []int32
	// DocStart and DocEnd delimit the text tokens inside IDs.
	DocStart, DocEnd int
	// Truncated reports that text tokens were dropped to fit the maximum
	// length.
	Truncated bool
	// Tokens are the text tokens actually in IDs[DocStart:DocEnd], with the
	// spans the Encoder gave them (relative to the encoded window text).
	Tokens []Token
}

// BuildInput assembles a model input as the reference's build_input_for_llm
// does: prefix ids, query-part ids, text ids and suffix ids, with the text
// tokens cut to the room left by maxLength. It returns ErrNoRoom when
// maxLength cannot hold the prefix, query part and suffix. No padding is
// added. The returned slices never alias the arguments.
func BuildInput(prefixIDs []int32, query []Token, text []Token, suffixIDs []int32, maxLength int) (Input, error) {
	room := TextBudget(maxLength, len(prefixIDs), len(query), len(suffixIDs))
	if room < 0 {
		return Input{}, fmt.Errorf("%w: max length %d < %d prefix + %d instruction-and-query + %d suffix tokens",
			ErrNoRoom, maxLength, len(prefixIDs), len(query), len(suffixIDs))
	}
	truncated := false
	if len(text) > room {
		text = text[:room]
		truncated = true
	}
	ids := make([]int32, 0, len(prefixIDs)+len(query)+len(text)+len(suffixIDs))
	ids = append(ids, prefixIDs...)
	for _, t := range query {
		ids = append(ids, t.ID)
	}
	docStart := len(ids)
	for _, t := range text {
		ids = append(ids, t.ID)
	}
	docEnd := len(ids)
	ids = append(ids, suffixIDs...)
	return Input{
		IDs:       ids,
		DocStart:  docStart,
		DocEnd:    docEnd,
		Truncated: truncated,
		Tokens:    append([]Token(nil), text...),
	}, nil
}
