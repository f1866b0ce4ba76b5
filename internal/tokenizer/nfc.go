package tokenizer

//go:generate go run gen_tables.go

import (
	"slices"
	"sort"
	"unicode/utf8"
	"unsafe"
)

// This file is an NFC normaliser that keeps track of where every output
// character comes from, reproducing what HF tokenizers computes (its NFC
// normaliser is the unicode-normalization-alignments crate feeding
// NormalizedString.transform). Each output character carries a "change":
// 0 when it replaces one original character, -N when it also absorbs the N
// characters that follow, +1 when it is inserted. The characters keep their
// change through canonical reordering, and the alignment is then assigned
// positionally: an output character with change <= 0 takes the span of the
// next unconsumed original character; an inserted one takes the span of the
// last consumed one. Hence "composed characters map to their first original
// character, absorbed marks belong to no token, reordering maps positionally".

type cccRange struct {
	lo, hi rune
	ccc    uint8
}

type runeRange struct{ lo, hi rune }

type decompEntry struct {
	r rune
	d string
}

type composeEntry struct{ a, b, c rune }

// invalidBase offsets the pseudo-runes that stand for invalid UTF-8 bytes
// inside the normaliser: they behave as starters that never compose.
const invalidBase = utf8.MaxRune + 1

const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulLCount = 19
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = hangulLCount * hangulNCount
)

func combiningClass(r rune) uint8 {
	if r < 0x300 || r >= invalidBase {
		return 0
	}
	i := sort.Search(len(cccTable), func(i int) bool { return cccTable[i].hi >= r })
	if i < len(cccTable) && cccTable[i].lo <= r {
		return cccTable[i].ccc
	}
	return 0
}

// nfcUnsafe reports whether r may make NFC change a text that contains it.
func nfcUnsafe(r rune) bool {
	if r < 0x300 {
		return false
	}
	i := sort.Search(len(nfcUnsafeTable), func(i int) bool { return nfcUnsafeTable[i].hi >= r })
	return i < len(nfcUnsafeTable) && nfcUnsafeTable[i].lo <= r
}

// appendDecomposition appends the full canonical decomposition of r.
func appendDecomposition(dst []rune, r rune) []rune {
	if r >= hangulSBase && r < hangulSBase+hangulSCount {
		s := r - hangulSBase
		dst = append(dst, hangulLBase+s/hangulNCount, hangulVBase+(s%hangulNCount)/hangulTCount)
		if t := s % hangulTCount; t != 0 {
			dst = append(dst, hangulTBase+t)
		}
		return dst
	}
	if r >= 0xC0 && r < invalidBase {
		i := sort.Search(len(decompTable), func(i int) bool { return decompTable[i].r >= r })
		if i < len(decompTable) && decompTable[i].r == r {
			for _, d := range decompTable[i].d {
				dst = append(dst, d)
			}
			return dst
		}
	}
	return append(dst, r)
}

// compose returns the primary composite of the pair (a, b).
func compose(a, b rune) (rune, bool) {
	if a >= hangulLBase && a < hangulLBase+hangulLCount && b >= hangulVBase && b < hangulVBase+hangulVCount {
		return hangulSBase + ((a-hangulLBase)*hangulVCount+(b-hangulVBase))*hangulTCount, true
	}
	if a >= hangulSBase && a < hangulSBase+hangulSCount && (a-hangulSBase)%hangulTCount == 0 &&
		b > hangulTBase && b < hangulTBase+hangulTCount {
		return a + (b - hangulTBase), true
	}
	i := sort.Search(len(composeTable), func(i int) bool {
		e := composeTable[i]
		return e.a > a || (e.a == a && e.b >= b)
	})
	if i < len(composeTable) && composeTable[i].a == a && composeTable[i].b == b {
		return composeTable[i].c, true
	}
	return 0, false
}

// origSpan is the span of one original character: bytes [bs,be) and code
// points [cs,ce), relative to the normalised segment.
type origSpan struct{ bs, be, cs, ce int }

// normRegion is a stretch of the normalised text that differs from the
// original; everything between regions is the original verbatim.
type normRegion struct {
	normStart, normEnd int        // bytes of the normalised text
	origEnd, origCPEnd int        // where the region ends in the original
	origStart, origCP  int        // where it starts in the original
	align              []origSpan // per byte of text[normStart:normEnd]
}

// normText is a segment after NFC, with what is needed to map normalised
// byte positions back to the original.
type normText struct {
	text    string
	regions []normRegion
	ascii   bool // text is the original and pure ASCII: every map is the identity
}

// unit decodes the character at s[i]: a rune, or invalidBase+byte for a byte
// that is not valid UTF-8 (one byte per unit, as Go's range loop does).
func unit(s string, i int) (rune, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && w == 1 {
		return invalidBase + rune(c), 1
	}
	return r, w
}

// normalize applies NFC to s. Text without any character that NFC could
// touch (all ASCII and nearly all code) is returned as is without copying.
func normalize(s string) normText { return normalizeCtx(s, nil) }

// normalizeCtx is normalize that gives up early (returning what it has, a
// prefix of the text) when c reports a cancelled context.
func normalizeCtx(s string, c *canceller) normText {
	ascii := true
	first := -1
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			if i&(checkEvery-1) == 0 && c.tick(checkEvery) {
				return normText{text: s[:i]}
			}
			continue
		}
		ascii = false
		if c.tick(1) {
			return normText{text: s[:i]}
		}
		r, w := unit(s, i)
		if nfcUnsafe(r) {
			first = i
			break
		}
		i += w
	}
	if first < 0 {
		return normText{text: s, ascii: ascii}
	}
	return normalizeSlow(s, c)
}

// normalizeSlow splits s into stretches that NFC leaves alone and regions
// around the characters it may change. A region starts at the last safe
// character before an unsafe one (it may be the base a mark composes with)
// and ends before the next safe character: NFC never lets anything interact
// across a safe character, so the regions can be normalised independently.
func normalizeSlow(s string, c *canceller) normText {
	var (
		// NFC rarely changes the length much: one allocation, not a
		// doubling series of copies of a large text.
		out      = make([]byte, 0, len(s)+len(s)/16+16)
		regions  []normRegion
		units    []origSpan
		runes    []rune
		scratch  nfcScratch
		cp       int
		copied   int // s[copied:] not yet appended to out
		safeAt   = -1
		safeCP   int
		prevSpan = origSpan{} // span of the character before safeAt
		lastSpan origSpan     // span of the character before i
	)
	for i := 0; i < len(s); {
		if c.tick(1) {
			s = s[:i]
			break
		}
		r, w := unit(s, i)
		if !nfcUnsafe(r) {
			safeAt, safeCP, prevSpan = i, cp, lastSpan
			lastSpan = origSpan{i, i + w, cp, cp + 1}
			i += w
			cp++
			continue
		}
		// Region [start, end): from the last safe character (if not already
		// copied out) to the next safe character.
		start, startCP, before := i, cp, lastSpan
		if safeAt >= copied {
			start, startCP, before = safeAt, safeCP, prevSpan
		}
		units, runes = units[:0], runes[:0]
		j, jcp := start, startCP
		for j < len(s) {
			r2, w2 := unit(s, j)
			if j >= i && !nfcUnsafe(r2) {
				break
			}
			units = append(units, origSpan{j, j + w2, jcp, jcp + 1})
			runes = append(runes, r2)
			j += w2
			jcp++
		}
		out = append(out, s[copied:start]...)
		reg := normRegion{normStart: len(out), origStart: start, origCP: startCP, origEnd: j, origCPEnd: jcp}
		if start == 0 {
			before = origSpan{}
		}
		out, reg.align = scratch.run(out, runes, units, before)
		reg.normEnd = len(out)
		regions = append(regions, reg)
		copied = j
		lastSpan = units[len(units)-1]
		safeAt = -1
		i, cp = j, jcp
	}
	out = append(out, s[copied:]...)
	// out is never written again: the string shares its bytes rather than
	// copying a text that may be megabytes.
	return normText{text: unsafe.String(unsafe.SliceData(out), len(out)), regions: regions}
}

type nfcChar struct {
	r      rune
	ccc    uint8
	change int
}

type nfcScratch struct {
	dec  []rune
	seq  []nfcChar
	outs []nfcChar
	buf  []nfcChar
}

// run normalises one region given as runes with their original spans, and
// appends the result to out. before is the span of the character preceding
// the region (zero at the start of the text), used by HF for an inserted
// character that comes before any consumed one.
func (sc *nfcScratch) run(out []byte, runes []rune, units []origSpan, before origSpan) ([]byte, []origSpan) {
	// Decomposition: the first character of a decomposition replaces the
	// original (change 0), the others are inserted (+1).
	seq := sc.seq[:0]
	for _, r := range runes {
		sc.dec = appendDecomposition(sc.dec[:0], r)
		for k, d := range sc.dec {
			ch := 1
			if k == 0 {
				ch = 0
			}
			seq = append(seq, nfcChar{r: d, ccc: combiningClass(d), change: ch})
		}
	}
	// Canonical ordering: stable sort of each run of non-starters; the
	// change travels with its character.
	for a := 0; a < len(seq); {
		if seq[a].ccc == 0 {
			a++
			continue
		}
		b := a
		for b < len(seq) && seq[b].ccc != 0 {
			b++
		}
		slices.SortStableFunc(seq[a:b], func(x, y nfcChar) int { return int(x.ccc) - int(y.ccc) })
		a = b
	}
	sc.seq = seq

	// Canonical composition, in the order the crate's iterator emits.
	outs := sc.outs[:0]
	buf := sc.buf[:0]
	var composee nfcChar
	hasComposee := false
	lastCCC := -1
	for _, c := range seq {
		if !hasComposee {
			if c.ccc != 0 {
				outs = append(outs, c)
				continue
			}
			composee, hasComposee = c, true
			continue
		}
		if lastCCC < 0 {
			if r, ok := compose(composee.r, c.r); ok {
				composee = nfcChar{r: r, change: composee.change + c.change - 1}
				continue
			}
			if c.ccc == 0 {
				outs = append(outs, composee)
				composee = c
				continue
			}
			buf = append(buf, c)
			lastCCC = int(c.ccc)
			continue
		}
		if lastCCC >= int(c.ccc) {
			if c.ccc == 0 {
				outs = append(outs, composee)
				outs = append(outs, buf...)
				buf = buf[:0]
				composee = c
				lastCCC = -1
				continue
			}
			buf = append(buf, c)
			lastCCC = int(c.ccc)
			continue
		}
		if r, ok := compose(composee.r, c.r); ok {
			composee = nfcChar{r: r, change: composee.change + c.change - 1}
			continue
		}
		buf = append(buf, c)
		lastCCC = int(c.ccc)
	}
	if hasComposee {
		outs = append(outs, composee)
	}
	outs = append(outs, buf...)
	sc.outs, sc.buf = outs, buf

	// Alignment, as NormalizedString.transform assigns it.
	align := make([]origSpan, 0, 4*len(outs))
	k := 0
	for _, c := range outs {
		var a origSpan
		if c.change > 0 {
			a = before
			if k > 0 {
				a = units[k-1]
			}
		} else {
			a = units[min(k, len(units)-1)]
			k += 1 - c.change
		}
		n := len(out)
		if c.r >= invalidBase {
			out = append(out, byte(c.r-invalidBase))
		} else {
			out = utf8.AppendRune(out, c.r)
		}
		for range len(out) - n {
			align = append(align, a)
		}
	}
	return out, align
}
