package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"
)

// losslessNFC is what Decode(Encode(s)) must give: NFC of every valid
// stretch of s, invalid bytes kept in place (they never compose with
// anything).
func losslessNFC(s string) string {
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			b.WriteString(norm.NFC.String(s[start:i]))
			b.WriteByte(s[i])
			start = i + 1
		}
		i += w
	}
	b.WriteString(norm.NFC.String(s[start:]))
	return b.String()
}

// checkTokens verifies the invariants every encoding must satisfy.
func checkTokens(t *testing.T, tok *Tokenizer, text string, toks []Token) {
	t.Helper()
	n := utf8.RuneCountInString(text)
	cpAt := make([]int, len(text)+1)
	isStart := make([]bool, len(text)+1)
	cp := 0
	for i := range text { // i visits each character start, invalid bytes included
		isStart[i] = true
		cpAt[i] = cp
		cp++
	}
	isStart[len(text)] = true
	cpAt[len(text)] = cp
	for i := len(text) - 1; i >= 0; i-- {
		if !isStart[i] {
			cpAt[i] = -1
		}
	}
	for i, tk := range toks {
		require.True(t, tk.ID >= 0 && int(tk.ID) < tok.VocabSize(), "token %d id %d", i, tk.ID)
		require.True(t, 0 <= tk.Start && tk.Start <= tk.End && tk.End <= n, "token %d span [%d,%d] of %d", i, tk.Start, tk.End, n)
		require.True(t, 0 <= tk.ByteStart && tk.ByteStart <= tk.ByteEnd && tk.ByteEnd <= len(text), "token %d bytes [%d,%d]", i, tk.ByteStart, tk.ByteEnd)
		require.True(t, isStart[tk.ByteStart] && isStart[tk.ByteEnd], "token %d bytes [%d,%d] split a character", i, tk.ByteStart, tk.ByteEnd)
		require.Equal(t, tk.Start, cpAt[tk.ByteStart], "token %d start", i)
		require.Equal(t, tk.End, cpAt[tk.ByteEnd], "token %d end", i)
		if i > 0 {
			p := toks[i-1]
			require.LessOrEqual(t, p.Start, tk.Start, "token %d starts before its predecessor", i)
			require.LessOrEqual(t, p.End, tk.End, "token %d ends before its predecessor", i)
		}
	}
	if normalize(text).text == text {
		// Without normalisation the offsets follow from the token lengths
		// alone: token bytes [a,b) widened to whole characters.
		charStart := func(i int) int {
			for !isStart[i] {
				i--
			}
			return i
		}
		charEnd := func(i int) int { // end of the character holding byte i
			i++
			for !isStart[i] {
				i++
			}
			return i
		}
		p := 0
		for i, tk := range toks {
			raw, err := tok.Decode([]int32{tk.ID})
			require.NoError(t, err)
			q := p + len(raw)
			require.LessOrEqual(t, q, len(text))
			require.Equal(t, text[p:q], raw, "token %d", i)
			require.Equal(t, charStart(p), tk.ByteStart, "token %d byte start", i)
			require.Equal(t, charEnd(q-1), tk.ByteEnd, "token %d byte end", i)
			p = q
		}
		require.Equal(t, len(text), p, "tokens do not cover the text")
	}
}

func ids(toks []Token) []int32 {
	out := make([]int32, len(toks))
	for i, tk := range toks {
		out[i] = tk.ID
	}
	return out
}

// checkText runs every property on one input.
func checkText(t *testing.T, tok *Tokenizer, text string) {
	t.Helper()
	plain := tok.Encode(text)
	checkTokens(t, tok, text, plain)
	require.Equal(t, ids(plain), tok.EncodeIDs(text))
	dec, err := tok.Decode(ids(plain))
	require.NoError(t, err)
	require.Equal(t, losslessNFC(text), dec, "Decode(Encode(text)) must be the lossless NFC of text")
	for _, tk := range plain {
		require.False(t, tok.IsAdded(tk.ID), "plain mode produced added token %d", tk.ID)
	}
	if utf8.ValidString(text) {
		require.Equal(t, norm.NFC.String(text), normalize(text).text)
	}

	special := tok.EncodeSpecial(text)
	checkTokens(t, tok, text, special)
	require.Equal(t, ids(special), tok.EncodeSpecialIDs(text))
	// Between added tokens, special mode is plain mode on the piece.
	want := []int32{}
	prev := 0
	for _, tk := range special {
		if tok.IsAdded(tk.ID) {
			content, _ := tok.TokenString(tk.ID)
			require.Equal(t, content, text[tk.ByteStart:tk.ByteEnd])
			want = append(append(want, tok.EncodeIDs(text[prev:tk.ByteStart])...), tk.ID)
			prev = tk.ByteEnd
		}
	}
	want = append(want, tok.EncodeIDs(text[prev:])...)
	require.Equal(t, want, ids(special))
}

func FuzzEncode(f *testing.F) {
	tok, err := Qwen3()
	require.NoError(f, err)
	for _, r := range loadGolden(f) {
		f.Add(r.Text)
	}
	for _, s := range []string{"", "\xff", "a\xe2\x82", "\xed\xa0\x80x", "e\xcc\x81\xff\xcc\x81", "<|im_end|>\u0338", "\u0344\u0F73\u0F75"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkText(t, tok, text)
	})
}

// TestRandomUnicode throws strings built from the characters that exercise
// normalisation (marks of several combining classes, composites, excluded
// and singleton decompositions, Hangul jamo, invalid bytes) at every
// property, including agreement of the NFC text with golang.org/x/text.
func TestRandomUnicode(t *testing.T) {
	tok := qwen(t)
	alphabet := []string{
		"a", "e", "o", "A", "x", " ", "\n", "1", "'", "s", "<|im_end|>", "<think>",
		"\u0300", "\u0301", "\u0308", "\u0316", "\u0323", "\u0327", "\u0338", "\u0344", "\u0345", "\u05b0",
		"\u00e9", "\u00c0", "\u1ea1", "\u212b", "\u2126", "\u0f73", "\u0f75", "\u0f71", "\u0f72",
		"\u1100", "\u1161", "\u11a8", "\uac00", "\uac01", "\u0dd9", "\u0dcf", "\u0dca",
		"\u3099", "\u304b", "\U0001d15e", "\U0001d165", "\u00a0", "\u3000", "\u2028",
		"\xff", "\xe2\x82", "\xcc", "😀", "中",
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 1500; i++ {
		var sb strings.Builder
		for n := rng.IntN(12) + 1; n > 0; n-- {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := sb.String()
		t.Run("", func(t *testing.T) {
			checkText(t, tok, text)
		})
		if t.Failed() {
			t.Fatalf("failed on %+q", text)
		}
	}
}
