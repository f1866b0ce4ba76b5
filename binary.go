package pruner

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrBinaryInput: the text does not look like text (see WithBinaryInput for
// the rule). Prune refuses it before doing any work; pruning it would
// return fragments of binary data.
var ErrBinaryInput = errors.New("input looks binary")

// binarySample is how much of the start of a text the binary check reads,
// as git does (8000 bytes there).
const binarySample = 8 << 10

// Shares of the sample, in percent, from which a text counts as binary.
const (
	// binaryNULPercent: NUL bytes. Text never holds NULs, but a log may
	// carry a few stray ones; binary formats (executables, images,
	// archives, databases) hold them in every header and table.
	binaryNULPercent = 1
	// binaryOddPercent: bytes that are neither valid UTF-8 nor a control
	// character text uses (tab, newline, vertical tab, form feed, carriage
	// return, backspace, escape). Latin-1 or Windows-1252 prose has a few
	// percent of such bytes (its accented letters and quotes; 11% in a
	// dense French passage), compressed or random data over 50%.
	binaryOddPercent = 30
	// binaryOddMin: and at least this many, so that a short Latin-1 line
	// with a few accented letters stays text.
	binaryOddMin = 16
)

// binaryReason returns why text looks binary, or "" when it looks like
// text. It reads at most the first binarySample bytes; see WithBinaryInput
// for the rule.
func binaryReason(text string) string {
	s := text
	if len(s) > binarySample {
		s = s[:binarySample]
		// A character cut by the end of the sample is not invalid.
		for k := 1; k < utf8.UTFMax && k <= len(s); k++ {
			if utf8.RuneStart(s[len(s)-k]) {
				if !utf8.FullRuneInString(s[len(s)-k:]) {
					s = s[:len(s)-k]
				}
				break
			}
		}
	}
	if s == "" {
		return ""
	}
	if why := utf16Reason(s); why != "" {
		return why
	}
	nul, odd := 0, 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == 0:
				nul++
				odd++
			case c < 0x20 && !textControl(c), c == 0x7f:
				odd++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			odd++
		}
		i += n
	}
	where := "the text"
	if len(text) > binarySample {
		where = "the first 8 KB"
	}
	if nul*100 >= binaryNULPercent*len(s) {
		return fmt.Sprintf("%s NUL bytes in %s", percent(nul, len(s)), where)
	}
	if odd >= binaryOddMin && odd*100 >= binaryOddPercent*len(s) {
		return fmt.Sprintf("%s invalid UTF-8 or control bytes in %s", percent(odd, len(s)), where)
	}
	return ""
}

// textControl reports the control bytes that text uses: tab, newline,
// vertical tab, form feed, carriage return, backspace (overstrike in man
// pages) and escape (ANSI colours in logs).
func textControl(c byte) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', '\b', 0x1b:
		return true
	}
	return false
}

// utf16Reason recognises UTF-16 (and UTF-32) text by its byte order mark
// or by NULs in every other byte (the high bytes of ASCII characters), so
// that the message can say what to do with it.
func utf16Reason(s string) string {
	switch {
	case len(s) >= 4 && (s[:4] == "\xff\xfe\x00\x00" || s[:4] == "\x00\x00\xfe\xff"):
		return "UTF-32 text (byte order mark); convert it to UTF-8"
	case len(s) >= 2 && (s[:2] == "\xff\xfe" || s[:2] == "\xfe\xff"):
		return "UTF-16 text (byte order mark); convert it to UTF-8"
	}
	if len(s) < 16 {
		return ""
	}
	var nul [2]int
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			nul[i&1]++
		}
	}
	half := len(s) / 2
	for p := range nul {
		// ASCII in UTF-16: (nearly) every byte of one parity is NUL, (nearly)
		// none of the other.
		if nul[p]*10 >= half*7 && nul[1-p]*10 < half {
			return "UTF-16 text (NUL in every other byte); convert it to UTF-8"
		}
	}
	return ""
}

// percent formats n/total as a percentage with at most one decimal, never
// rounding a non-zero share to 0.
func percent(n, total int) string {
	p := float64(n) * 100 / float64(total)
	switch {
	case p >= 10:
		return fmt.Sprintf("%.0f%%", p)
	case p >= 0.1:
		return fmt.Sprintf("%.1f%%", p)
	}
	return "<0.1%"
}

// checkBinary refuses binary input unless WithBinaryInput(true).
func (p *Pruner) checkBinary(text string) error {
	if p.cfg.binaryInput {
		return nil
	}
	if why := binaryReason(text); why != "" {
		return fmt.Errorf("pruner: %w: %s (WithBinaryInput prunes it as text)", ErrBinaryInput, why)
	}
	return nil
}
