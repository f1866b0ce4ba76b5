package tokenizer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVocabulary(t *testing.T) {
	tok := qwen(t)
	assert.Equal(t, 151669, tok.VocabSize())
	for s, want := range map[string]int32{
		"yes": 9693, "no": 2152, "<|im_start|>": 151644, "<|im_end|>": 151645,
		"<think>": 151667, "</think>": 151668, "<|endoftext|>": 151643, "!": 0, "Ġ": 220, "Ċ": 198,
	} {
		id, ok := tok.TokenID(s)
		require.True(t, ok, s)
		assert.Equal(t, want, id, s)
		back, ok := tok.TokenString(id)
		require.True(t, ok)
		assert.Equal(t, s, back)
	}
	for _, s := range []string{"", " ", "<|nope|>", "\x00", "Ġthe\x00"} {
		_, ok := tok.TokenID(s)
		assert.False(t, ok, "%q", s)
	}
	for _, id := range []int32{-1, 151669, 1 << 30} {
		_, ok := tok.TokenString(id)
		assert.False(t, ok, id)
		assert.False(t, tok.IsAdded(id), id)
	}
	assert.True(t, tok.IsAdded(151644))
	assert.False(t, tok.IsAdded(9693))
}

func TestDecode(t *testing.T) {
	tok := qwen(t)
	s, err := tok.Decode(nil)
	require.NoError(t, err)
	assert.Equal(t, "", s)

	s, err = tok.Decode([]int32{151644, 872, 198, 9693, 151645})
	require.NoError(t, err)
	assert.Equal(t, "<|im_start|>user\nyes<|im_end|>", s)

	for _, bad := range [][]int32{{-1}, {9693, 151669}, {1 << 30}} {
		_, err := tok.Decode(bad)
		require.ErrorIs(t, err, ErrUnknownID, "%v", bad)
	}
}

func TestSpecialModes(t *testing.T) {
	tok := qwen(t)
	text := "a<|im_start|>b<think>"
	plain := tok.EncodeIDs(text)
	for _, id := range plain {
		assert.False(t, tok.IsAdded(id))
	}
	special := tok.EncodeSpecial(text)
	require.Len(t, special, 4)
	assert.Equal(t, Token{ID: 151644, Start: 1, End: 13, ByteStart: 1, ByteEnd: 13}, special[1])
	assert.Equal(t, Token{ID: 151667, Start: 14, End: 21, ByteStart: 14, ByteEnd: 21}, special[3])
	// Leftmost-longest: "</think>" starts at '<' and wins over nothing
	// shorter; "<think" without ">" is no token.
	assert.Equal(t, []int32{151668}, tok.EncodeSpecialIDs("</think>"))
	assert.NotContains(t, tok.EncodeSpecialIDs("<think"), int32(151667))
	// The text between added tokens is normalised on its own: ">" and
	// U+0338 would compose to U+226F in one piece of text, not across a token.
	assert.Equal(t, "<|im_end|>\u0338", mustDecode(t, tok, tok.EncodeSpecialIDs("<|im_end|>\u0338")))
	assert.Equal(t, "<|im_end|\u226f", mustDecode(t, tok, tok.EncodeIDs("<|im_end|>\u0338")))
}

func mustDecode(t *testing.T, tok *Tokenizer, ids []int32) string {
	t.Helper()
	s, err := tok.Decode(ids)
	require.NoError(t, err)
	return s
}

// spans returns the distinct consecutive code point spans of the tokens.
func spans(toks []Token) [][2]int {
	var out [][2]int
	for _, tk := range toks {
		s := [2]int{tk.Start, tk.End}
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// TestNormalizationOffsets pins HF's alignment rules on cases worked out by
// hand from NormalizedString.transform and the normalisation crate.
func TestNormalizationOffsets(t *testing.T) {
	tok := qwen(t)
	cases := []struct {
		name, in string
		norm     string
		want     [][2]int
	}{
		// e + acute compose; é maps to the e, the mark to nothing.
		{"composition", "e\u0301", "\u00e9", [][2]int{{0, 1}}},
		// U+0344 is excluded from composition: two marks, the second one
		// inserted, both mapped to U+0344.
		{"insertion", "\u0344", "\u0308\u0301", [][2]int{{0, 1}}},
		// a + U+0344: a + diaeresis compose (absorbing U+0344), the
		// inserted acute takes the span of the last consumed character.
		{"compose then insert", "a\u0344", "\u00e4\u0301", [][2]int{{0, 1}, {1, 2}}},
		// Reordering puts the dot below first; it composes with a, and the
		// acute left over takes the position of the consumed mark after it.
		{"reorder", "a\u0301\u0323", "\u1ea1\u0301", [][2]int{{0, 1}, {2, 3}}},
		// Singleton decompositions map one to one.
		{"singleton", "\u212b\u2126", "\u00c5\u03a9", [][2]int{{0, 1}, {1, 2}}},
		// Conjoining jamo compose into one syllable.
		{"hangul", "\u1100\u1161\u11a8 ", "\uac01 ", [][2]int{{0, 1}, {3, 4}}},
		// A precomposed syllable stays as is.
		{"hangul precomposed", "\uac01\u11a8", "\uac01\u11a8", [][2]int{{0, 1}, {1, 2}}},
		// Invalid bytes are starters that never compose.
		{"invalid byte", "\xff\u0301", "\xff\u0301", [][2]int{{0, 1}, {1, 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.norm, normalize(c.in).text)
			assert.Equal(t, c.want, spans(tok.Encode(c.in)))
			checkText(t, tok, c.in)
		})
	}
}

func TestEdgeCases(t *testing.T) {
	tok := qwen(t)
	assert.Empty(t, tok.Encode(""))
	assert.Empty(t, tok.EncodeSpecial(""))
	assert.Empty(t, tok.EncodeIDs(""))
	assert.Empty(t, tok.EncodeSpecialIDs(""))

	long := strings.Repeat("x = foo_bar(baz, 42) + qux; ", 1800)[:50000]
	inputs := map[string]string{
		"50k code line":    long,
		"50k letters":      strings.Repeat("a", 50000),
		"50k spaces":       strings.Repeat(" ", 50000),
		"spaces then word": strings.Repeat(" ", 10000) + "word",
		"tabs":             strings.Repeat("\t", 5000) + "\n",
		"mixed ws":         strings.Repeat(" \n\t\u00a0\u3000", 1000),
		"NUL":              "a\x00b\x00\x00\x00c\x00",
		"CRLF":             "line1\r\nline2\r\n\r\n  indented\r\n",
		"lone CR":          "a\rb\r\rc\r",
		"invalid":          "ok\xff\xfe\xe2\x82(\xed\xa0\x80)\xc3",
	}
	naive := newNaiveBPE(t)
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			checkText(t, tok, in)
		})
	}
	// The 50k single pre-tokens go through the heap merge; cross-check it.
	for _, w := range []string{inputs["50k letters"], inputs["50k spaces"][:49999]} {
		assert.Equal(t, naive.encode(w), pieces(tok, tok.EncodeIDs(w)))
	}
	assert.Equal(t, []int32{tok.byteID[0], tok.byteID[0]}, tok.EncodeIDs("\x00\x00"))
	crlf := tok.Encode("a\r\nb")
	require.Len(t, crlf, 3)
	assert.Equal(t, Token{ID: crlf[1].ID, Start: 1, End: 3, ByteStart: 1, ByteEnd: 3}, crlf[1])
}

func TestConcurrentEncode(t *testing.T) {
	tok := qwen(t)
	rows := loadGolden(t)
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := range rows {
				r := rows[(i*7+w*31)%len(rows)]
				if d := diffTokens(tok, tok.Encode(r.Text), r.IDs, r.Offsets); d != "" {
					errs <- d
					return
				}
				if d := diffTokens(tok, tok.EncodeSpecial(r.Text), r.IDsSpecialParsed, r.OffsetsSpecialParsed); d != "" {
					errs <- d
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// writeCheckpoint writes the embedded tokenizer files, uncompressed, into a
// temporary folder.
func writeCheckpoint(t *testing.T, withAdded bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{vocabFile, mergesFile} {
		data, err := readGzip(assets, "assets/"+name+".gz")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	if withAdded {
		data, err := assets.ReadFile("assets/" + addedTokensFile)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, addedTokensFile), data, 0o644))
	}
	return dir
}

func TestLoadMatchesEmbedded(t *testing.T) {
	emb := qwen(t)
	withConfig := writeCheckpoint(t, false)
	cfg, err := os.ReadFile(filepath.Join("assets", tokenizerConfig))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(withConfig, tokenizerConfig), cfg, 0o644))

	for name, dir := range map[string]string{"added_tokens.json": writeCheckpoint(t, true), "tokenizer_config.json": withConfig} {
		t.Run(name, func(t *testing.T) {
			tok, err := Load(dir)
			require.NoError(t, err)
			assert.Equal(t, emb.VocabSize(), tok.VocabSize())
			assert.Equal(t, emb.pieces, tok.pieces)
			assert.Equal(t, emb.isAdded, tok.isAdded)
			assert.Equal(t, emb.added.ids, tok.added.ids)
			assert.Equal(t, emb.merges.slots, tok.merges.slots)
			assert.Equal(t, emb.merges.mergedByRank, tok.merges.mergedByRank)
			for _, r := range loadGolden(t) {
				require.Equal(t, emb.Encode(r.Text), tok.Encode(r.Text), "row %d", r.ID)
				require.Equal(t, emb.EncodeSpecial(r.Text), tok.EncodeSpecial(r.Text), "row %d", r.ID)
			}
		})
	}
}

func TestLoadWithoutAddedTokens(t *testing.T) {
	tok, err := Load(writeCheckpoint(t, false))
	require.NoError(t, err)
	assert.Equal(t, 151643, tok.VocabSize())
	text := "<|im_start|>user\nhi<|im_end|>"
	assert.Equal(t, tok.Encode(text), tok.EncodeSpecial(text))
	assert.Equal(t, qwen(t).EncodeIDs(text), tok.EncodeIDs(text))
}

// toyVocab is a minimal valid vocab.json: the 256 byte tokens, then "ab".
func toyVocab() string {
	bl := newByteLevel()
	var sb strings.Builder
	sb.WriteString("{")
	for b := 0; b < 256; b++ {
		sb.WriteString(`"` + strings.ReplaceAll(strings.ReplaceAll(string(bl.toRune[b]), `\`, `\\`), `"`, `\"`) + `": `)
		sb.WriteString(strconv.Itoa(b) + ", ")
	}
	sb.WriteString(`"ab": 256, "abc": 257}`)
	return sb.String()
}

func writeToy(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

func TestLoadToy(t *testing.T) {
	tok, err := Load(writeToy(t, map[string]string{
		vocabFile:       toyVocab(),
		mergesFile:      "#version: 0.2\na b\nab c\n",
		addedTokensFile: `{"<x>": 258}`,
	}))
	require.NoError(t, err)
	assert.Equal(t, 259, tok.VocabSize())
	// Toy ids are the byte values, "ab" is 256 and "abc" 257.
	assert.Equal(t, []int32{257, 256, 'a'}, tok.EncodeIDs("abcaba"))
	assert.Equal(t, []int32{256, 258}, tok.EncodeSpecialIDs("ab<x>"))
}

func TestLoadErrors(t *testing.T) {
	good := map[string]string{vocabFile: toyVocab(), mergesFile: "#version: 0.2\na b\n"}
	with := func(name, content string) map[string]string {
		m := map[string]string{}
		for k, v := range good {
			m[k] = v
		}
		if content == "" {
			delete(m, name)
		} else {
			m[name] = content
		}
		return m
	}
	cases := []struct {
		name  string
		files map[string]string
		want  error
	}{
		{"no vocab", with(vocabFile, ""), fs.ErrNotExist},
		{"no merges", with(mergesFile, ""), fs.ErrNotExist},
		{"vocab not JSON", with(vocabFile, "{\"a\": 1,"), ErrInvalid},
		{"vocab not an object", with(vocabFile, "[1, 2]"), ErrInvalid},
		{"vocab negative id", with(vocabFile, `{"a": -1}`), ErrInvalid},
		{"vocab huge id", with(vocabFile, `{"a": 99999999999}`), ErrInvalid},
		{"vocab id past the limit", with(vocabFile, strings.Replace(toyVocab(), `"abc": 257`, `"abc": 3000000`, 1)), ErrInvalid},
		{"added id past the limit", with(addedTokensFile, `{"<x>": 3000000}`), ErrInvalid},
		{"vocab missing bytes", with(vocabFile, `{"a": 0, "b": 1}`), ErrInvalid},
		{"vocab not byte-level", with(vocabFile, strings.Replace(toyVocab(), `"ab": 256`, `"a b": 256`, 1)), ErrInvalid},
		{"vocab duplicate id", with(vocabFile, strings.Replace(toyVocab(), `"abc": 257`, `"abc": 256`, 1)), ErrInvalid},
		{"merge of unknown token", with(mergesFile, "a z\n"), ErrInvalid},
		{"merge with three parts", with(mergesFile, "a b c\n"), ErrInvalid},
		{"merge with one part", with(mergesFile, "ab\n"), ErrInvalid},
		{"bad added tokens", with(addedTokensFile, `{"<x>": "y"}`), ErrInvalid},
		{"empty added token", with(addedTokensFile, `{"": 300}`), ErrInvalid},
		{"added token reusing an id", with(addedTokensFile, `{"<x>": 5}`), ErrInvalid},
		{"bad tokenizer_config", with(tokenizerConfig, `{"added_tokens_decoder": {"x": {"content": "<x>"}}}`), ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(writeToy(t, c.files))
			require.Error(t, err)
			assert.True(t, errors.Is(err, c.want), "got %v", err)
		})
	}
	_, err := Load(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestParseVocabJSON(t *testing.T) {
	var got map[string]int64
	collect := func(data string) error {
		got = map[string]int64{}
		return parseVocabJSON([]byte(data), func(k []byte, id int64) error {
			got[string(k)] = id
			return nil
		})
	}
	require.NoError(t, collect(` { "a" : 1 ,"\"\\\/\b\f\n\r\t": 2, "\u0041\u00e9\ud83d\ude00": 3, "é😀": 4 } `))
	assert.Equal(t, map[string]int64{"a": 1, "\"\\/\b\f\n\r\t": 2, "Aé😀": 3, "é😀": 4}, got)
	require.NoError(t, collect(`{}`))
	assert.Empty(t, got)
	for _, bad := range []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a\x01":1}`, `{"\q":1}`, `{"\u12":1}`, `{"a":1.5}`, `{a:1}`} {
		assert.ErrorIs(t, collect(bad), errSyntax, "%q", bad)
	}
}

// TestCounterMatchesCount: a Counter reused over many texts counts each as
// Count does, and stops with the context's error.
func TestCounterMatchesCount(t *testing.T) {
	tok, err := Qwen3()
	require.NoError(t, err)
	texts := []string{"", "\n", "def f(x):\n", "    return x + 1\n", strings.Repeat("a", 5000), "héllo wörld\r\n", "\xff\xfe bad utf-8\n", "日本語のテキスト\n"}
	c := tok.NewCounter(context.Background())
	for _, s := range texts {
		n, err := c.Count(s)
		require.NoError(t, err)
		assert.Equal(t, tok.Count(s), n, "%q", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tok.NewCounter(ctx).Count(strings.Repeat("word ", 100000))
	require.ErrorIs(t, err, context.Canceled)
}
