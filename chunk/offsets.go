package chunk

import "unicode/utf8"

// runeCursor converts code-point positions of one text to byte offsets. It
// walks from its last position, forwards or backwards, so a sequence of
// nearby lookups (sorted spans, consecutive windows) costs O(distance) each
// instead of O(position), without an index the size of the text.
type runeCursor struct {
	text string
	cp   int // code-point position of the cursor
	b    int // byte offset of the cursor, always on a decoding boundary
}

// byteOf returns the byte offset of code point cp, clamped to [0, len(text)].
func (c *runeCursor) byteOf(cp int) int {
	if cp <= 0 {
		c.cp, c.b = 0, 0
		return 0
	}
	if cp < c.cp && cp < c.cp-cp {
		// Closer to the start than to the cursor: restart from 0.
		c.cp, c.b = 0, 0
	}
	for c.cp < cp && c.b < len(c.text) {
		if c.text[c.b] < utf8.RuneSelf {
			c.b++
		} else {
			_, w := utf8.DecodeRuneInString(c.text[c.b:])
			c.b += w
		}
		c.cp++
	}
	for c.cp > cp {
		// Backward decoding agrees with forward decoding: both give every
		// invalid byte width 1 and never let a valid sequence straddle one.
		_, w := utf8.DecodeLastRuneInString(c.text[:c.b])
		c.b -= w
		c.cp--
	}
	return c.b
}

// CodePointToByte returns the byte offset of code point cp in text, clamped
// to [0, len(text)]. It is O(cp); use SpansToBytes for many spans.
func CodePointToByte(text string, cp int) int {
	c := runeCursor{text: text}
	return c.byteOf(cp)
}

// CodePointLen returns the number of code points of text as this package
// counts them (every invalid UTF-8 byte is one code point).
func CodePointLen(text string) int {
	return utf8.RuneCountInString(text)
}

// SpansToBytes converts spans in code points of text to spans in bytes of
// text, keeping their scores and order. Spans are clamped to the text. It is
// linear in the text length when the spans are sorted or nearly so.
func SpansToBytes(text string, spans []ScoredSpan) []ScoredSpan {
	out := make([]ScoredSpan, len(spans))
	// One cursor: a token's end is usually the next token's start, so the
	// cursor hardly moves between lookups.
	c := runeCursor{text: text}
	for i, s := range spans {
		out[i] = ScoredSpan{Start: c.byteOf(s.Start), End: c.byteOf(s.End), Score: s.Score}
	}
	return out
}
