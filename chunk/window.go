package chunk

import (
	"errors"
	"fmt"
)

// ErrInvalidBudget reports a window budget smaller than one token.
var ErrInvalidBudget = errors.New("chunk: window budget must be at least one token")

// Window is a span of a text that is scored as one model input. Start and
// End are code points, ByteStart and ByteEnd bytes of the same span (always
// on UTF-8 decoding boundaries). FirstToken and EndToken delimit the tokens
// of the whole text that planned the window.
type Window struct {
	Start, End           int
	ByteStart, ByteEnd   int
	FirstToken, EndToken int
}

// Text returns the part of text the window covers.
func (w Window) Text(text string) string {
	return text[w.ByteStart:w.ByteEnd]
}

// PlanWindows cuts text, whose tokens over the whole text are given, into
// windows of at most budget tokens that overlap by overlap tokens, exactly as
// the reference's split_code_into_chunks:
//
//   - empty text has no windows;
//   - a text of at most budget tokens is one window over the whole text;
//   - otherwise window i spans tokens [i·stride, min(i·stride+budget, n)) with
//     stride = budget − overlap, and its text runs from the start of its first
//     token to the end of its last token; the last window reaches token n.
//
// The caller re-tokenizes each window's text (tokens at a window edge may
// differ from the whole-text tokens). A negative overlap counts as zero; an
// overlap of budget or more is set to zero (the reference does so when it is
// larger and fails when it is equal). An overlap above half the budget is
// taken as half (the reference has no such bound): the model then reads at
// most about twice the text, where an overlap of budget − 1 would have it
// read every token budget times over (250K windows for a 1 MB text).
// It returns ErrInvalidBudget when budget < 1.
func PlanWindows(text string, tokens []Token, budget, overlap int) ([]Window, error) {
	if budget < 1 {
		return nil, fmt.Errorf("%w: got %d", ErrInvalidBudget, budget)
	}
	if text == "" {
		return nil, nil
	}
	n := len(tokens)
	if n <= budget {
		return []Window{{
			Start: 0, End: CodePointLen(text),
			ByteStart: 0, ByteEnd: len(text),
			FirstToken: 0, EndToken: n,
		}}, nil
	}
	if overlap < 0 || overlap >= budget {
		overlap = 0
	}
	overlap = min(overlap, budget/2)
	stride := budget - overlap
	windows := make([]Window, 0, (n-overlap+stride-1)/stride)
	starts := runeCursor{text: text}
	ends := runeCursor{text: text}
	for first := 0; ; first += stride {
		end := min(first+budget, n)
		s, e := tokens[first].Start, tokens[end-1].End
		if e < s {
			// Python's slice of an inverted range is empty.
			e = s
		}
		bs := starts.byteOf(s)
		be := ends.byteOf(e)
		windows = append(windows, Window{
			Start: s, End: e,
			ByteStart: bs, ByteEnd: max(bs, be),
			FirstToken: first, EndToken: end,
		})
		if end >= n {
			break
		}
	}
	return windows, nil
}
