package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrUnknownID is wrapped by Decode's error for an id that names no token.
var ErrUnknownID = errors.New("tokenizer: unknown token id")

// Tokenizer is a byte-level BPE tokenizer with HF tokenizers' Qwen2/Qwen3
// pipeline. It is immutable after construction apart from an internal,
// bounded word cache, and safe for concurrent use.
type Tokenizer struct {
	bl      *byteLevel
	pieces  []string         // id → raw bytes of the token ("" for unused ids)
	tokLen  []int32          // id → len(pieces[id])
	isAdded []bool           // id → added token
	vocab   map[string]int32 // raw bytes → id, BPE vocabulary only
	byteID  [256]int32
	merges  mergeTable
	added   *addedMatcher
	cache   *wordCache
	// monotone: the merge table lets long words be merged in chunks
	// (see bpe_long.go).
	monotone bool
}

// Token is one token of an encoded text. Start and End are [Start, End) in
// Unicode code points of the original text (HF's offsets); ByteStart and
// ByteEnd are the same span in bytes of the original Go string. The field
// set matches chunk.Token, so the two convert directly.
type Token struct {
	ID                 int32
	Start, End         int
	ByteStart, ByteEnd int
}

// VocabSize returns the number of token ids, added tokens included (one more
// than the largest id): 151669 for Qwen3.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// TokenID returns the id of a token given its spelling in vocab.json
// (byte-level form, e.g. "Ġthe" for " the"; for ASCII letters, digits and
// punctuation that is the text itself) or the content of an added token
// (e.g. "<|im_start|>").
func (t *Tokenizer) TokenID(s string) (int32, bool) {
	if id, ok := t.added.ids[s]; ok {
		return id, true
	}
	raw, ok := t.bl.decode(nil, []byte(s))
	if !ok {
		return 0, false
	}
	id, ok := t.vocab[string(raw)]
	return id, ok
}

// TokenString returns the spelling of a token as vocab.json writes it
// (byte-level form) or, for an added token, its content.
func (t *Tokenizer) TokenString(id int32) (string, bool) {
	if id < 0 || int(id) >= len(t.pieces) || t.pieces[id] == "" {
		return "", false
	}
	if t.isAdded[id] {
		return t.pieces[id], true
	}
	return t.bl.encode(t.pieces[id]), true
}

// IsAdded reports whether id is an added token (<|im_start|>, <think>, ...).
func (t *Tokenizer) IsAdded(id int32) bool {
	return id >= 0 && int(id) < len(t.isAdded) && t.isAdded[id]
}

// Decode returns the text of a token sequence: the concatenated bytes of the
// tokens, added tokens as their content. Decode(EncodeIDs(s)) is NFC(s) for
// valid UTF-8 (with invalid bytes kept as they are otherwise). Unlike HF's
// decode, which replaces ill-formed UTF-8 with U+FFFD, the bytes come back
// as they are, so a sequence that ends inside a multi-byte character gives
// a string that is not valid UTF-8.
func (t *Tokenizer) Decode(ids []int32) (string, error) {
	n := 0
	for i, id := range ids {
		if id < 0 || int(id) >= len(t.pieces) || t.pieces[id] == "" {
			return "", fmt.Errorf("%w: %d at position %d", ErrUnknownID, id, i)
		}
		n += len(t.pieces[id])
	}
	out := make([]byte, 0, n)
	for _, id := range ids {
		out = append(out, t.pieces[id]...)
	}
	return string(out), nil
}

// Encode tokenizes text without recognising added tokens: "<|im_start|>" in
// text is BPE'd as ordinary characters. This is the mode for user text,
// which must not be able to forge control tokens.
func (t *Tokenizer) Encode(text string) []Token {
	toks, _ := t.EncodeContext(context.Background(), text)
	return toks
}

// EncodeContext is Encode that stops early, returning nil and ctx.Err(),
// when ctx is done: the context is looked at every few milliseconds of
// work whatever the text (long runs of one character included).
func (t *Tokenizer) EncodeContext(ctx context.Context, text string) ([]Token, error) {
	e := encoder{t: t}
	e.setContext(ctx)
	// Code has about one token per 3.5 bytes; the list starts at that size,
	// but not so large that a hostile text (one token per byte) makes the
	// first allocation the bulk of the work.
	out := e.segment(make([]Token, 0, min(len(text)/3+1, 1<<16)), text, 0, 0)
	if e.sc.cancel.cancelled() {
		return nil, e.sc.cancel.err
	}
	return out, nil
}

// EncodeIDs is Encode without the offsets.
func (t *Tokenizer) EncodeIDs(text string) []int32 {
	e := encoder{t: t}
	return e.segmentIDs(make([]int32, 0, len(text)/3+1), text)
}

// Count returns len(Encode(text)) without building the tokens: it needs
// memory for the longest pre-token, not for the whole token list.
func (t *Tokenizer) Count(text string) int {
	n, _ := t.CountContext(context.Background(), text)
	return n
}

// CountContext is Count that stops early, returning 0 and ctx.Err(), when
// ctx is done (looked at as often as EncodeContext does).
func (t *Tokenizer) CountContext(ctx context.Context, text string) (int, error) {
	e := encoder{t: t}
	e.setContext(ctx)
	return e.count(text)
}

// Counter counts the tokens of many short texts (a text's lines) with one
// set of scratch buffers, so that counting line by line allocates nothing
// per line. It is not safe for concurrent use.
type Counter struct{ e encoder }

// NewCounter returns a Counter whose counts stop early, returning
// ctx.Err(), when ctx is done.
func (t *Tokenizer) NewCounter(ctx context.Context) *Counter {
	c := &Counter{e: encoder{t: t}}
	c.e.setContext(ctx)
	return c
}

// Count returns the number of tokens Encode would return for text.
func (c *Counter) Count(text string) (int, error) { return c.e.count(text) }

func (e *encoder) count(text string) (int, error) {
	text = normalizeCtx(text, e.sc.cancel).text
	n := 0
	for i := 0; i < len(text) && !e.sc.cancel.cancelled(); {
		end := pretokenEndCtx(text, i, e.sc.cancel)
		k, ok := 0, false
		if end-i >= longWord && e.t.monotone {
			k, ok = e.t.countLong(text[i:end], &e.sc)
		}
		if !ok {
			e.ids = e.t.appendWord(e.ids[:0], text[i:end], &e.sc)
			k = len(e.ids)
		}
		n += k
		e.sc.cancel.tick(end - i)
		i = end
	}
	if e.sc.cancel.cancelled() {
		return 0, e.sc.cancel.err
	}
	return n, nil
}

// EncodeSpecial tokenizes text the way HF tokenizers does by default
// (tokenizer(text, add_special_tokens=False)): every added token found in
// the raw text, leftmost-longest, becomes its single id, and the text
// between them is encoded as by Encode.
func (t *Tokenizer) EncodeSpecial(text string) []Token {
	e := encoder{t: t}
	out := make([]Token, 0, len(text)/3+1)
	pos, cp := 0, 0
	for {
		s, end, id, ok := t.added.find(text, pos)
		if !ok {
			return e.segment(out, text[pos:], pos, cp)
		}
		out = e.segment(out, text[pos:s], pos, cp)
		cp += utf8.RuneCountInString(text[pos:s])
		n := utf8.RuneCountInString(text[s:end])
		out = append(out, Token{ID: id, Start: cp, End: cp + n, ByteStart: s, ByteEnd: end})
		pos, cp = end, cp+n
	}
}

// EncodeSpecialIDs is EncodeSpecial without the offsets.
func (t *Tokenizer) EncodeSpecialIDs(text string) []int32 {
	e := encoder{t: t}
	out := make([]int32, 0, len(text)/3+1)
	pos := 0
	for {
		s, end, id, ok := t.added.find(text, pos)
		if !ok {
			return e.segmentIDs(out, text[pos:])
		}
		out = append(e.segmentIDs(out, text[pos:s]), id)
		pos = end
	}
}

// encoder holds the per-call scratch space.
type encoder struct {
	t   *Tokenizer
	sc  bpeScratch
	ids []int32
}

// setContext makes the encoder's loops stop when ctx is done.
func (e *encoder) setContext(ctx context.Context) {
	if ctx.Done() != nil {
		e.sc.cancel = newCanceller(ctx)
	}
}

func (e *encoder) segmentIDs(dst []int32, seg string) []int32 {
	text := normalize(seg).text
	for i := 0; i < len(text); {
		end := pretokenEnd(text, i)
		dst = e.t.appendWord(dst, text[i:end], &e.sc)
		i = end
	}
	return dst
}

// segment encodes one stretch of text without added tokens; baseByte and
// baseCP locate it in the caller's text.
//
// When the encoder's context is done it returns early with what it has;
// the caller looks at e.sc.cancel.
func (e *encoder) segment(dst []Token, seg string, baseByte, baseCP int) []Token {
	nt := normalizeCtx(seg, e.sc.cancel)
	text := nt.text
	m := offsetMapper{nt: &nt}
	for i := 0; i < len(text) && !e.sc.cancel.cancelled(); {
		end := pretokenEndCtx(text, i, e.sc.cancel)
		e.ids = e.t.appendWord(e.ids[:0], text[i:end], &e.sc)
		e.sc.cancel.tick(end - i)
		if free := cap(dst) - len(dst); free < len(e.ids) {
			// Grow by the estimate for the rest of the text, by 1.5× to 2×:
			// append alone grows large slices by 1.25×, which copies a text
			// of one token per byte many times.
			g := min(max((len(text)-end)/3+1, cap(dst)/2), cap(dst))
			grown := make([]Token, len(dst), cap(dst)+max(g, len(e.ids)))
			copy(grown, dst)
			dst = grown
		}
		p := i
		for _, id := range e.ids {
			q := p + int(e.t.tokLen[id])
			var tok Token
			if nt.ascii {
				tok = Token{ID: id, Start: p, End: q, ByteStart: p, ByteEnd: q}
			} else {
				s := m.span(p)
				l := m.span(q - 1)
				tok = Token{ID: id, Start: s.cs, End: l.ce, ByteStart: s.bs, ByteEnd: l.be}
			}
			tok.Start += baseCP
			tok.End += baseCP
			tok.ByteStart += baseByte
			tok.ByteEnd += baseByte
			dst = append(dst, tok)
			p = q
		}
		i = end
	}
	return dst
}

// offsetMapper maps byte positions of the normalised text to the span of
// the original character they belong to. Queries must not go backwards,
// which lets it walk the text once.
type offsetMapper struct {
	nt      *normText
	np      int // normalised byte position of the cursor (a character start)
	op, ocp int // original byte and code point position of the cursor
	ri      int // next region
}

func (m *offsetMapper) span(p int) origSpan {
	text := m.nt.text
	for {
		if m.ri < len(m.nt.regions) && p >= m.nt.regions[m.ri].normStart {
			r := &m.nt.regions[m.ri]
			if p < r.normEnd {
				return r.align[p-r.normStart]
			}
			m.np, m.op, m.ocp = r.normEnd, r.origEnd, r.origCPEnd
			m.ri++
			continue
		}
		w := 1
		if text[m.np] >= utf8.RuneSelf {
			_, w = unit(text, m.np)
		}
		if p < m.np+w {
			return origSpan{m.op, m.op + w, m.ocp, m.ocp + 1}
		}
		m.np += w
		m.op += w
		m.ocp++
	}
}
