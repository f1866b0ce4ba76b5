package tokenizer

import "unicode/utf8"

// byteLevelRunes is the size of the rune range the byte-level map uses:
// bytes map to U+0021..U+00FF or to U+0100..U+0143.
const byteLevelRunes = 256 + 68

// byteLevel is GPT-2's reversible byte↔unicode map: every byte gets a
// printable rune so that BPE vocabularies can be stored as text. Printable
// Latin-1 bytes map to themselves, the other 68 bytes to U+0100 and up.
type byteLevel struct {
	toRune [256]rune
	toByte [byteLevelRunes]int16 // -1 where no byte maps to the rune
}

func newByteLevel() *byteLevel {
	bl := &byteLevel{}
	for i := range bl.toByte {
		bl.toByte[i] = -1
	}
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			bl.toRune[b] = rune(b)
		} else {
			bl.toRune[b] = rune(256 + n)
			n++
		}
		bl.toByte[bl.toRune[b]] = int16(b)
	}
	return bl
}

// decode appends the raw bytes of a byte-level spelling (as in vocab.json)
// to dst. It reports false when s holds a rune outside the map.
func (bl *byteLevel) decode(dst []byte, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if bl.toByte[c] < 0 {
				return dst, false
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, w := utf8.DecodeRune(s[i:])
		if r >= byteLevelRunes || bl.toByte[r] < 0 {
			return dst, false
		}
		dst = append(dst, byte(bl.toByte[r]))
		i += w
	}
	return dst, true
}

// encode returns the byte-level spelling of raw bytes.
func (bl *byteLevel) encode(raw string) string {
	out := make([]byte, 0, 2*len(raw))
	for i := 0; i < len(raw); i++ {
		out = utf8.AppendRune(out, bl.toRune[raw[i]])
	}
	return string(out)
}
