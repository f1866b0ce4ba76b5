package wordpiece

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error about tokenizer files that cannot be
// used: a missing or unreadable vocab.txt, a vocabulary without the special
// tokens, a malformed tokenizer_config.json.
var ErrInvalid = errors.New("wordpiece: invalid tokenizer files")

// DefaultMaxWordChars is BERT's max_input_chars_per_word: a longer word is
// one [UNK].
const DefaultMaxWordChars = 100

// Config is what changes the tokenization besides the vocabulary. The zero
// value is not BERT's: start from DefaultConfig.
type Config struct {
	// Lowercase lowercases the text (do_lower_case).
	Lowercase bool
	// StripAccents removes nonspacing marks after NFD (strip_accents; HF
	// strips them whenever it lowercases unless told otherwise).
	StripAccents bool
	// ChineseChars surrounds CJK ideographs with spaces, making each a word
	// (tokenize_chinese_chars).
	ChineseChars bool
	// MaxWordChars is the longest word, in characters, that is cut into
	// pieces; a longer one is [UNK]. Zero means DefaultMaxWordChars.
	MaxWordChars int
	// The special tokens' strings; empty ones take BERT's names.
	UNK, CLS, SEP, PAD, Mask string
}

// DefaultConfig is bert-base-uncased's configuration (and
// all-MiniLM-L6-v2's): lowercase, strip accents, split CJK ideographs.
func DefaultConfig() Config {
	return Config{Lowercase: true, StripAccents: true, ChineseChars: true}
}

// Tokenizer encodes text into WordPiece ids. It is immutable after New or
// Load and safe for concurrent use.
type Tokenizer struct {
	cfg    Config
	vocab  map[string]int32
	pieces []string // id → vocabulary line
	// maxPiece is the longest vocabulary entry in bytes (with its "##"):
	// longer candidates are not looked up.
	maxPiece                 int
	unk, cls, sep, pad, mask int32
	// specials are the special tokens EncodeSpecial finds in raw text,
	// longest first so that the first match at a position is the longest.
	specials   []special
	firstBytes [256]bool // first bytes of the special tokens
}

type special struct {
	text string
	id   int32
}

// maxVocab bounds the vocabulary (ids are int32).
const maxVocab = math.MaxInt32

// New builds a tokenizer from the contents of a vocab.txt (one token a
// line, the line number is the id; a later duplicate line takes the token)
// and a Config. The vocabulary must be UTF-8 and hold the special tokens
// [UNK], [CLS] and [SEP] (or the names cfg gives them); [PAD] and [MASK]
// are optional.
func New(vocab []byte, cfg Config) (*Tokenizer, error) {
	if cfg.MaxWordChars == 0 {
		cfg.MaxWordChars = DefaultMaxWordChars
	}
	if cfg.MaxWordChars < 0 {
		return nil, fmt.Errorf("%w: max word length %d is negative", ErrInvalid, cfg.MaxWordChars)
	}
	for _, p := range []*string{&cfg.UNK, &cfg.CLS, &cfg.SEP, &cfg.PAD, &cfg.Mask} {
		*p = strings.TrimSpace(*p)
	}
	cfg.UNK = cmpOr(cfg.UNK, "[UNK]")
	cfg.CLS = cmpOr(cfg.CLS, "[CLS]")
	cfg.SEP = cmpOr(cfg.SEP, "[SEP]")
	cfg.PAD = cmpOr(cfg.PAD, "[PAD]")
	cfg.Mask = cmpOr(cfg.Mask, "[MASK]")

	if len(vocab) == 0 {
		return nil, fmt.Errorf("%w: the vocabulary is empty", ErrInvalid)
	}
	lines := bytes.Split(vocab, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1] // the final newline ends the last line
	}
	if len(lines) > maxVocab {
		return nil, fmt.Errorf("%w: %d vocabulary lines, at most %d", ErrInvalid, len(lines), maxVocab)
	}
	t := &Tokenizer{cfg: cfg, vocab: make(map[string]int32, len(lines)), pieces: make([]string, len(lines))}
	for i, line := range lines {
		line = bytes.TrimSuffix(line, []byte{'\r'}) // a file written on Windows
		if !utf8.Valid(line) {
			return nil, fmt.Errorf("%w: vocabulary line %d is not UTF-8", ErrInvalid, i+1)
		}
		s := string(line)
		t.pieces[i] = s
		t.vocab[s] = int32(i)
		t.maxPiece = max(t.maxPiece, len(s))
	}
	var errs []error
	id := func(name, tok string, required bool) int32 {
		v, ok := t.vocab[tok]
		if !ok {
			if required {
				errs = append(errs, fmt.Errorf("the vocabulary has no %s token %q", name, tok))
			}
			return -1
		}
		return v
	}
	t.unk = id("unknown", cfg.UNK, true)
	t.cls = id("classifier", cfg.CLS, true)
	t.sep = id("separator", cfg.SEP, true)
	t.pad = id("padding", cfg.PAD, false)
	t.mask = id("mask", cfg.Mask, false)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	for _, s := range []string{cfg.UNK, cfg.CLS, cfg.SEP, cfg.PAD, cfg.Mask} {
		if v, ok := t.vocab[s]; ok && !t.hasSpecial(s) {
			t.specials = append(t.specials, special{s, v})
			t.firstBytes[s[0]] = true
		}
	}
	// Longest first: the first special token matching at a position is
	// then the longest one there (HF's leftmost-longest match).
	for i := 1; i < len(t.specials); i++ {
		for j := i; j > 0 && len(t.specials[j].text) > len(t.specials[j-1].text); j-- {
			t.specials[j], t.specials[j-1] = t.specials[j-1], t.specials[j]
		}
	}
	return t, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (t *Tokenizer) hasSpecial(s string) bool {
	for _, sp := range t.specials {
		if sp.text == s {
			return true
		}
	}
	return false
}

// Config returns the tokenizer's configuration, special token names
// resolved.
func (t *Tokenizer) Config() Config { return t.cfg }

// VocabSize is the number of vocabulary lines: every id is below it.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// ID returns the id of a vocabulary entry.
func (t *Tokenizer) ID(token string) (int32, bool) {
	id, ok := t.vocab[token]
	return id, ok
}

// Token returns the vocabulary entry of an id.
func (t *Tokenizer) Token(id int32) (string, bool) {
	if id < 0 || int(id) >= len(t.pieces) {
		return "", false
	}
	return t.pieces[id], true
}

// UNK is the id of the unknown token.
func (t *Tokenizer) UNK() int32 { return t.unk }

// CLS is the id of the classifier token that starts a sequence.
func (t *Tokenizer) CLS() int32 { return t.cls }

// SEP is the id of the separator token that ends a sequence.
func (t *Tokenizer) SEP() int32 { return t.sep }

// PAD is the id of the padding token, or -1 when the vocabulary has none.
func (t *Tokenizer) PAD() int32 { return t.pad }

// Encode returns the word-piece ids of text, without [CLS] and [SEP] and
// without looking for special tokens in it.
func (t *Tokenizer) Encode(text string) []int32 {
	return t.encodePlain(make([]int32, 0, len(text)/4+1), text, -1)
}

// EncodeSpecial is Encode with HF's handling of special tokens: each one
// found in the raw text (case sensitive, leftmost and longest first)
// becomes its id, and the text between them is encoded as by Encode. This
// is what HF's tokenizer(text, add_special_tokens=False) gives.
func (t *Tokenizer) EncodeSpecial(text string) []int32 {
	return t.encodeSpecial(make([]int32, 0, len(text)/4+1), text, -1)
}

// Sequence returns what a BERT encoder reads for text: [CLS], the first
// maxLen−2 ids of EncodeSpecial(text) and [SEP], as HF's tokenizer(text,
// truncation=True, max_length=maxLen) does. maxLen ≤ 0 means no limit; a
// maxLen of 1 or 2 gives [CLS] [SEP]. Only the start of a long text that
// fits is tokenized.
func (t *Tokenizer) Sequence(text string, maxLen int) []int32 {
	limit := -1
	if maxLen > 0 {
		limit = max(maxLen, 2) - 1 // [CLS] counts; [SEP] is added after
	}
	ids := []int32{t.cls}
	ids = t.encodeSpecial(ids, text, limit)
	return append(ids, t.sep)
}

// encodeSpecial appends the ids of text to dst (HF's special token split);
// limit ≥ 0 stops once dst holds limit ids.
func (t *Tokenizer) encodeSpecial(dst []int32, text string, limit int) []int32 {
	start := 0
	for i := 0; i < len(text) && !full(dst, limit); i++ {
		if !t.firstBytes[text[i]] {
			continue
		}
		for _, sp := range t.specials {
			if strings.HasPrefix(text[i:], sp.text) {
				dst = t.encodePlain(dst, text[start:i], limit)
				if !full(dst, limit) {
					dst = append(dst, sp.id)
				}
				i += len(sp.text) - 1
				start = i + 1
				break
			}
		}
	}
	return t.encodePlain(dst, text[start:], limit)
}

func full(dst []int32, limit int) bool { return limit >= 0 && len(dst) >= limit }

// encoder holds one call's scratch buffers.
type encoder struct {
	t     *Tokenizer
	word  []byte // the raw word being gathered (cleaned)
	norm  []byte // its normalised form
	key   []byte // a candidate piece, "##"-prefixed
	start []int  // byte offsets of a word's characters
	// words, when not nil, collects the normalised words instead of their
	// ids (tests compare them with HF's pre-tokenizer).
	words *[]string
}

// encodePlain appends the ids of text to dst, special tokens not looked
// for; limit ≥ 0 stops once dst holds limit ids.
//
// Words never span white space, and NFD never moves a character across
// one, so the text is normalised one raw word at a time (the words between
// white-space characters, CJK ideographs on their own): the normalised
// pieces are what HF's whole-text normalisation gives, and a long text
// stops being read once limit is reached.
func (t *Tokenizer) encodePlain(dst []int32, text string, limit int) []int32 {
	if text == "" || full(dst, limit) {
		return dst
	}
	e := encoder{t: t}
	return e.encode(dst, text, limit)
}

// words returns the normalised, pre-tokenized words of text (the strings
// the WordPiece model is given).
func (t *Tokenizer) words(text string) []string {
	words := []string{}
	e := encoder{t: t, words: &words}
	e.encode(nil, text, -1)
	return words
}

func (e *encoder) encode(dst []int32, text string, limit int) []int32 {
	t := e.t
	for _, r := range text {
		switch {
		case isRemoved(r):
			continue
		case isWhitespace(r):
			dst = e.flush(dst, limit)
		case t.cfg.ChineseChars && isChinese(r):
			dst = e.flush(dst, limit)
			e.word = utf8.AppendRune(e.word, r)
			dst = e.flush(dst, limit)
		default:
			e.word = utf8.AppendRune(e.word, r)
			continue
		}
		if full(dst, limit) {
			return dst[:limit]
		}
	}
	dst = e.flush(dst, limit)
	if full(dst, limit) {
		dst = dst[:limit]
	}
	return dst
}

// flush normalises the gathered raw word, splits it on punctuation and
// appends the pieces' ids.
func (e *encoder) flush(dst []int32, limit int) []int32 {
	if len(e.word) == 0 {
		return dst
	}
	e.norm = e.t.normalize(e.norm[:0], e.word)
	e.word = e.word[:0]
	s := e.norm
	for len(s) > 0 && !full(dst, limit) {
		// The next word ends at the next punctuation character, which is
		// a word of its own.
		end := 0
		for end < len(s) {
			r, w := utf8.DecodeRune(s[end:])
			if isPunct(r) {
				if end == 0 {
					end = w
				}
				break
			}
			end += w
		}
		if e.words != nil {
			*e.words = append(*e.words, string(s[:end]))
		} else {
			dst = e.piece(dst, s[:end])
		}
		s = s[end:]
	}
	return dst
}

// piece appends the WordPiece ids of one word: the longest vocabulary
// entry from its start, then the longest "##" entry from where it ended,
// and so on; [UNK] alone when some position has none or the word is too
// long.
func (e *encoder) piece(dst []int32, word []byte) []int32 {
	t := e.t
	e.start = e.start[:0]
	for i := range string(word) {
		e.start = append(e.start, i)
	}
	n := len(e.start)
	if n > t.cfg.MaxWordChars {
		return append(dst, t.unk)
	}
	e.start = append(e.start, len(word))
	mark := len(dst)
	for s := 0; s < n; {
		prefix := 0
		e.key = e.key[:0]
		if s > 0 {
			e.key = append(e.key, "##"...)
			prefix = 2
		}
		found := false
		for end := n; end > s; end-- {
			if prefix+e.start[end]-e.start[s] > t.maxPiece {
				continue
			}
			e.key = append(e.key[:prefix], word[e.start[s]:e.start[end]]...)
			if id, ok := t.vocab[string(e.key)]; ok {
				dst = append(dst, id)
				s, found = end, true
				break
			}
		}
		if !found {
			return append(dst[:mark], t.unk)
		}
	}
	return dst
}
