package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The Qwen2 pre-tokenizer splits the normalised text with
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// under Oniguruma semantics (first alternative that matches wins, \s is
// the Unicode White_Space property). Go's regexp has neither the lookahead
// nor that \s, so pretokenEnd below is the pattern compiled by hand. Bytes
// that are not valid UTF-8 are one character each of the "other" class (not
// a letter, number or space), like punctuation.

// Character classes of the pattern.
const (
	clsOther uint8 = iota
	clsLetter
	clsNumber
	clsSpace
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 0; c < utf8.RuneSelf; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			t[c] = clsLetter
		case c >= '0' && c <= '9':
			t[c] = clsNumber
		case c == ' ', c >= '\t' && c <= '\r':
			t[c] = clsSpace
		}
	}
	return t
}()

// isWhiteSpace reports the Unicode White_Space property (Oniguruma's \s).
func isWhiteSpace(r rune) bool {
	switch {
	case r < 0x80:
		return r == ' ' || (r >= '\t' && r <= '\r')
	case r == 0x85, r == 0xA0, r == 0x1680, r >= 0x2000 && r <= 0x200A,
		r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

func classOf(r rune) uint8 {
	switch {
	case r < utf8.RuneSelf:
		return asciiClass[r]
	case r >= invalidBase:
		return clsOther
	case isWhiteSpace(r):
		return clsSpace
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	}
	return clsOther
}

// classAt returns the class and width of the character at s[i].
func classAt(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, w := unit(s, i)
	return classOf(r), w
}

// runEnd returns the end of the run of class cls starting at i (or where
// it stopped when c reports a cancelled context).
func runEnd(s string, i int, cls uint8, c *canceller) int {
	for i < len(s) {
		if i&(checkEvery-1) == 0 && c.tick(checkEvery) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			if asciiClass[b] != cls {
				break
			}
			i++
			continue
		}
		c, w := classAt(s, i)
		if c != cls {
			break
		}
		i += w
	}
	return i
}

// contractionLen returns the length of a contraction suffix (s, t, re, ve,
// m, ll, d in any case) at s[i:], or 0. Case-insensitive matching follows
// Unicode case folding, under which U+017F LATIN SMALL LETTER LONG S is an
// "s".
func contractionLen(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	lower := func(c byte) byte { return c | 0x20 }
	switch lower(s[i]) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if i+1 < len(s) && lower(s[i+1]) == 'e' {
			return 2
		}
	case 'l':
		if i+1 < len(s) && lower(s[i+1]) == 'l' {
			return 2
		}
	}
	if s[i] == 0xC5 && i+1 < len(s) && s[i+1] == 0xBF { // U+017F
		return 2
	}
	return 0
}

// pretokenEnd returns the end of the pre-token that starts at s[i].
func pretokenEnd(s string, i int) int { return pretokenEndCtx(s, i, nil) }

// pretokenEndCtx is pretokenEnd that gives up on a long run when c reports
// a cancelled context (the result is then meaningless).
func pretokenEndCtx(s string, i int, c *canceller) int {
	c0 := s[i]
	cls, w := classAt(s, i)

	// 's|'t|'re|'ve|'m|'ll|'d
	if c0 == '\'' {
		if n := contractionLen(s, i+1); n > 0 {
			return i + 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if cls == clsLetter {
		return runEnd(s, i+w, clsLetter, c)
	}
	if cls != clsNumber && c0 != '\r' && c0 != '\n' && i+w < len(s) {
		if c2, w2 := classAt(s, i+w); c2 == clsLetter {
			return runEnd(s, i+w+w2, clsLetter, c)
		}
	}
	// \p{N}
	if cls == clsNumber {
		return i + w
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	j := i
	if c0 == ' ' {
		j = i + 1
	}
	if j < len(s) {
		if c2, w2 := classAt(s, j); c2 == clsOther {
			k := runEnd(s, j+w2, clsOther, c)
			for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
				k++
			}
			return k
		}
	}
	// Only whitespace is left. e is the end of the run, last the start of its
	// last character, nl the position after its last CR or LF.
	e, last, nl := i, i, -1
	for e < len(s) {
		if e&(checkEvery-1) == 0 && c.tick(checkEvery) {
			break
		}
		cls, w := classAt(s, e)
		if cls != clsSpace {
			break
		}
		if s[e] == '\r' || s[e] == '\n' {
			nl = e + 1
		}
		last = e
		e += w
	}
	switch {
	case nl > 0: // \s*[\r\n]+ ends at the last line break of the run
		return nl
	case e == len(s): // \s+(?!\S) takes a run that ends the text
		return e
	case last > i: // ... or the run minus its last character
		return last
	default: // \s+
		return e
	}
}
