package wordpiece

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

//go:generate sh -c "python3 testdata/unicode_probe.py /tmp/hf_unicode.json && go run gen_tables.go /tmp/hf_unicode.json"

// isRemoved reports whether the BertNormalizer drops r: NUL, U+FFFD (and so
// every invalid UTF-8 byte) and the "other" characters (Cc, Cf, Co; tab,
// newline and carriage return excepted, they are white space). Unassigned
// code points (Cn) stay, as in HF.
func isRemoved(r rune) bool {
	switch r {
	case 0, utf8.RuneError:
		return true
	case '\t', '\n', '\r':
		return false
	}
	if r < 0x80 {
		return r < 0x20 || r == 0x7f
	}
	return unicode.Is(hfRemoved, r)
}

// isWhitespace reports whether r separates words (Unicode White_Space, as
// Rust's char::is_whitespace). It is asked after isRemoved, which has taken
// the control characters among them (\v, \f, U+0085) already.
func isWhitespace(r rune) bool {
	if r < 0x80 {
		return r == ' ' || r >= '\t' && r <= '\r'
	}
	return unicode.Is(unicode.White_Space, r)
}

// isChinese reports whether r is in the CJK ideograph blocks BERT splits
// into single-character words.
func isChinese(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}

// isPunct reports whether r is a word of its own: ASCII punctuation (the
// symbols !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~, which Unicode files partly
// under S*) or a Unicode punctuation character (P*, as HF's tables have it).
func isPunct(r rune) bool {
	if r < 0x80 {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.Is(hfPunct, r)
}

// normalize appends to dst the normalised form of a cleaned word (no
// removed or white-space characters): accents stripped (NFD, nonspacing
// marks dropped) and lowercased as configured, in HF's order.
func (t *Tokenizer) normalize(dst, word []byte) []byte {
	ascii := true
	for _, b := range word {
		if b >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		if !t.cfg.Lowercase {
			return append(dst, word...)
		}
		for _, b := range word {
			if b >= 'A' && b <= 'Z' {
				b += 'a' - 'A'
			}
			dst = append(dst, b)
		}
		return dst
	}
	if t.cfg.StripAccents {
		word = stripAccents(word)
	}
	if !t.cfg.Lowercase {
		return append(dst, word...)
	}
	for _, r := range string(word) {
		if s, ok := lowerExceptions[r]; ok {
			dst = append(dst, s...)
			continue
		}
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}

// stripAccents returns word in NFD without its nonspacing marks. The
// characters HF's older tables decompose otherwise (stripExceptions) are
// replaced by HF's result and cut the word into parts normalised apart.
func stripAccents(word []byte) []byte {
	var out []byte
	part := 0
	flush := func(end int) {
		for _, r := range string(norm.NFD.Bytes(word[part:end])) {
			if !unicode.Is(hfMn, r) {
				out = utf8.AppendRune(out, r)
			}
		}
	}
	for i, r := range string(word) {
		if s, ok := stripExceptions[r]; ok {
			flush(i)
			out = append(out, s...)
			part = i + utf8.RuneLen(r)
		}
	}
	flush(len(word))
	return out
}
