package wordpiece

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tinyVocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n!\n,\nhello\nworld\nun\n##aff\n##able\nfoo\n##bar\ncafe\n"

func TestWordPiece(t *testing.T) {
	tok, err := New([]byte(tinyVocab), DefaultConfig())
	require.NoError(t, err)
	for _, tc := range []struct {
		text string
		want []int32
	}{
		{"", []int32{}},
		{"hello", []int32{7}},
		{"Hello, World!", []int32{7, 6, 8, 5}},
		{"unaffable", []int32{9, 10, 11}},
		{"unaffablex", []int32{1}}, // no piece for the tail: the whole word is [UNK]
		{"foobar foo", []int32{12, 13, 12}},
		{"CAFÉ", []int32{14}},             // lowercased, accent stripped
		{"ca\u0301fe\u0301", []int32{14}}, // combining accents dropped
		{"he\x00llo", []int32{7}},         // NUL dropped, not a split
		{"hel\xffl\xfeo", []int32{7}},     // invalid UTF-8 bytes dropped like U+FFFD
		{"hello\u00a0world", []int32{7, 8}},
		{"[SEP]", []int32{1, 1, 1}}, // Encode does not look for special tokens; "[" is not in this vocabulary
		{"\u200bhello\u200d", []int32{7}},
	} {
		assert.Equal(t, tc.want, tok.Encode(tc.text), "%q", tc.text)
	}
	assert.Equal(t, []int32{7, 3, 8, 2}, tok.EncodeSpecial("hello[SEP] world[CLS]"))
	assert.Equal(t, []int32{1, 1, 1}, tok.EncodeSpecial("[SEp]"), "special tokens are case sensitive")
}

func TestSequence(t *testing.T) {
	tok, err := New([]byte(tinyVocab), DefaultConfig())
	require.NoError(t, err)
	text := "hello world, hello world!"
	full := tok.Sequence(text, 0)
	require.Equal(t, []int32{2, 7, 8, 6, 7, 8, 5, 3}, full)
	for maxLen := 1; maxLen <= len(full)+2; maxLen++ {
		got := tok.Sequence(text, maxLen)
		n := min(max(maxLen, 2), len(full))
		want := append(append([]int32{}, full[:n-1]...), 3)
		assert.Equal(t, want, got, "maxLen %d", maxLen)
	}
	assert.Equal(t, []int32{2, 3}, tok.Sequence("", 8))
	assert.Equal(t, []int32{2, 3, 3}, tok.Sequence("[SEP]", 8))
	assert.Equal(t, []int32{2, 3}, tok.Sequence("[SEP]", 2))
}

// TestLongInput: a 50,000-character word is one [UNK]; a 50,000-character
// line of words is read only as far as a truncated sequence needs.
func TestLongInput(t *testing.T) {
	tok := uncased(t)
	assert.Equal(t, []int32{tok.UNK()}, tok.Encode(strings.Repeat("a", 50_000)))
	assert.Equal(t, []int32{tok.CLS(), tok.UNK(), tok.SEP()}, tok.Sequence(strings.Repeat("é", 50_000), 256))
	line := strings.Repeat("word ", 10_000)
	ids := tok.Sequence(line, 256)
	require.Len(t, ids, 256)
	assert.Equal(t, tok.Sequence(line, 0)[:255], ids[:255])
	assert.Len(t, tok.Encode(strings.Repeat("!", 50_000)), 50_000)
	assert.Len(t, tok.Encode(strings.Repeat("\x00", 50_000)), 0)
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, vocab string
		cfg         Config
		msg         string
	}{
		{"empty", "", DefaultConfig(), "the vocabulary is empty"},
		{"no unk", "[CLS]\n[SEP]\n", DefaultConfig(), `no unknown token "[UNK]"`},
		{"no cls sep", "[UNK]\n", DefaultConfig(), `no classifier token "[CLS]"`},
		{"renamed", tinyVocab, Config{UNK: "<unk>"}, `no unknown token "<unk>"`},
		{"not utf-8", "[UNK]\n[CLS]\n[SEP]\n\xff\n", DefaultConfig(), "line 4 is not UTF-8"},
		{"negative word", tinyVocab, Config{MaxWordChars: -1}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New([]byte(tc.vocab), tc.cfg)
			require.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestVocabLines(t *testing.T) {
	tok, err := New([]byte("[UNK]\r\n[CLS]\r\n[SEP]\r\n\r\nx\nx"), DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, 6, tok.VocabSize())
	id, ok := tok.ID("x")
	assert.True(t, ok)
	assert.Equal(t, int32(5), id, "a later duplicate takes the token")
	s, ok := tok.Token(2)
	assert.True(t, ok)
	assert.Equal(t, "[SEP]", s)
	_, ok = tok.Token(6)
	assert.False(t, ok)
	_, ok = tok.Token(-1)
	assert.False(t, ok)
	assert.Equal(t, int32(-1), tok.PAD())
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	_, err := Load(dir)
	require.ErrorIs(t, err, ErrInvalid, "no vocab.txt")

	write("vocab.txt", tinyVocab+"Hello\n")
	tok, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, DefaultConfig().Lowercase, tok.Config().Lowercase)
	assert.Equal(t, []int32{7}, tok.Encode("HELLO"))

	write("tokenizer_config.json", `{"do_lower_case": false, "unk_token": {"content": "[UNK]", "lstrip": false}, "sep_token": "[SEP]"}`)
	tok, err = Load(dir)
	require.NoError(t, err)
	assert.False(t, tok.Config().Lowercase)
	assert.False(t, tok.Config().StripAccents, "strip_accents null follows do_lower_case")
	assert.Equal(t, []int32{15, 1}, tok.Encode("Hello HELLO"))

	write("tokenizer_config.json", `{"do_lower_case": false, "strip_accents": true}`)
	tok, err = Load(dir)
	require.NoError(t, err)
	assert.True(t, tok.Config().StripAccents)

	for _, bad := range []string{`{"do_lower_case": "yes"}`, `{"unk_token": 3}`, `{"cls_token": {"lstrip": true}}`, `[`} {
		write("tokenizer_config.json", bad)
		_, err = Load(dir)
		require.ErrorIs(t, err, ErrInvalid, bad)
		assert.Contains(t, err.Error(), "tokenizer_config.json", bad)
	}
	write("tokenizer_config.json", `{"mask_token": "[NOPE]"}`)
	_, err = Load(dir)
	require.NoError(t, err, "an optional special token may be missing")

	require.NoError(t, os.Remove(filepath.Join(dir, "vocab.txt")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "vocab.txt"), 0o755))
	_, err = Load(dir)
	require.ErrorIs(t, err, ErrInvalid, "a directory named vocab.txt")
}

func TestLoadFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "vocab.txt"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	_, err := Load(dir)
	require.ErrorIs(t, err, ErrInvalid, "a FIFO is refused, not read forever")
}

func TestConcurrent(t *testing.T) {
	tok := uncased(t)
	rows := loadGolden(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, row := range rows {
				assert.Equal(t, row.IDs, tok.Sequence(row.Text, 0))
			}
		}()
	}
	wg.Wait()
}

func BenchmarkSequence(b *testing.B) {
	tok := uncased(b)
	src, err := os.ReadFile("wordpiece.go")
	require.NoError(b, err)
	text := string(src)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		tok.Sequence(text, 0)
	}
}
