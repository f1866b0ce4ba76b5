package tokenizer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pathologicalCase is a hostile input made of long runs of one character
// class: what a pre-tokenizer and BPE must handle in linear time.
type pathologicalCase struct {
	name string
	text func(n int) string // about n bytes
}

// nestedPython is n bytes of Python made of deeply nested ifs: each line
// one level deeper, so indentation dominates.
func nestedPython(n int) string {
	var b strings.Builder
	for d := 0; b.Len() < n; d++ {
		b.WriteString(strings.Repeat(" ", 4*(d%2048)))
		b.WriteString("if x:\n")
	}
	return b.String()[:n]
}

func repeatTo(unit string, n int) string {
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

var pathologicalCases = []pathologicalCase{
	{"spaces", func(n int) string { return repeatTo(" ", n) }},
	{"spaces_then_word", func(n int) string { return repeatTo(" ", n-1) + "x" }},
	{"tabs", func(n int) string { return repeatTo("\t", n) }},
	{"newlines", func(n int) string { return repeatTo("\n", n) }},
	{"crlf", func(n int) string { return repeatTo("\r\n", n) }},
	{"mixed_whitespace", func(n int) string { return repeatTo(" \t \n\t\t \r\n  ", n) }},
	{"nested_python", nestedPython},
	{"letters", func(n int) string { return repeatTo("a", n) }},
	{"letters_mixed", func(n int) string { return repeatTo("abcdefghijklmnopqrstuvwxyz", n) }},
	{"digits", func(n int) string { return repeatTo("7", n) }},
	{"punct", func(n int) string { return repeatTo("(", n) }},
	{"punct_mixed", func(n int) string { return repeatTo("=-+*/(){}[];:", n) }},
	{"single_line_code", func(n int) string { return repeatTo("var x=foo(bar,1);if(x){y+=2} ", n) }},
	{"nul", func(n int) string { return repeatTo("\x00", n) }},
	{"invalid_utf8", func(n int) string { return repeatTo("\xff", n) }},
	{"invalid_utf8_mixed", func(n int) string { return repeatTo("\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x90\x28", n) }},
	{"cjk", func(n int) string { return repeatTo("漢字", n-n%3) }},
	{"combining", func(n int) string { return repeatTo("a\u0301", n-n%3) }},
}

// BenchmarkEncodePathological encodes 1 MB of each hostile input (the
// word cache does not help: nearly every pre-token is long).
func BenchmarkEncodePathological(b *testing.B) {
	tok := qwen(b)
	const size = 1 << 20
	for _, c := range pathologicalCases {
		b.Run(c.name, func(b *testing.B) {
			text := c.text(size)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Encode(text)
			}
		})
	}
}

// heapEncodeIDs is EncodeIDs with every word merged by mergeHeap or
// mergeSmall: the implementation before chunked merging, as a reference.
func heapEncodeIDs(tok *Tokenizer, text string) []int32 {
	var sc bpeScratch
	var out []int32
	text = normalize(text).text
	for i := 0; i < len(text); {
		end := pretokenEnd(text, i)
		w := text[i:end]
		switch {
		case len(w) <= 2:
			out = tok.appendWord(out, w, &sc)
		case len(w) <= smallWord:
			out = tok.mergeSmall(out, w, &sc)
		default:
			out = tok.mergeHeap(out, w, &sc)
		}
		i = end
	}
	return out
}

// TestEncodePathological checks Encode on every hostile input against the
// whole-word reference merge, and Count against len(Encode).
func TestEncodePathological(t *testing.T) {
	tok := qwen(t)
	sizes := []int{1, 47, 255, 256, 700, 5000, 40000}
	for _, c := range pathologicalCases {
		for _, n := range sizes {
			text := c.text(n)
			if text == "" {
				continue
			}
			toks := tok.Encode(text)
			require.Equal(t, heapEncodeIDs(tok, text), ids(toks), "%s, %d bytes", c.name, n)
			require.Equal(t, len(toks), tok.Count(text), "%s, %d bytes", c.name, n)
			if n <= 5000 {
				checkTokens(t, tok, text, toks)
			}
		}
	}
}

// TestEncodeContextCancel: a deadline is noticed inside one long
// pre-token, inside NFC and between many small ones, whatever the input.
func TestEncodeContextCancel(t *testing.T) {
	tok := qwen(t)
	const size = 8 << 20
	for _, c := range pathologicalCases {
		text := c.text(size)
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		start := time.Now()
		toks, err := tok.EncodeContext(ctx, text)
		took := time.Since(start)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, c.name)
		require.Nil(t, toks, c.name)
		n, err := tok.CountContext(ctx, text)
		require.ErrorIs(t, err, context.DeadlineExceeded, c.name)
		require.Zero(t, n)
		// Loose: a loaded shared machine can stall a goroutine, but not
		// for the seconds 8 MB of these inputs took before.
		require.Less(t, took, 2*time.Second, c.name)
		if took > 20*time.Millisecond {
			t.Logf("%s: cancelled after %v", c.name, took)
		}
	}
	// A live context changes nothing.
	text := nestedPython(50000)
	toks, err := tok.EncodeContext(context.Background(), text)
	require.NoError(t, err)
	require.Equal(t, tok.Encode(text), toks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	toks, err = tok.EncodeContext(ctx, text)
	require.NoError(t, err)
	require.Equal(t, tok.Encode(text), toks)
}
