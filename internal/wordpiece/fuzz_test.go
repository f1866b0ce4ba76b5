package wordpiece

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzEncode: no input panics, every id is in the vocabulary, a truncated
// sequence is the untruncated one's start, and invalid UTF-8 bytes count
// as U+FFFD (dropped).
func FuzzEncode(f *testing.F) {
	tok := uncased(f)
	for _, row := range loadGolden(f) {
		f.Add(row.Text, 16)
	}
	f.Add("a\xffb\xc3", 3)
	f.Add("[SEP][SEP", 0)
	f.Fuzz(func(t *testing.T, text string, maxLen int) {
		ids := tok.EncodeSpecial(text)
		for _, id := range ids {
			require.True(t, id >= 0 && int(id) < tok.VocabSize(), "id %d", id)
		}
		full := tok.Sequence(text, 0)
		require.Equal(t, len(ids)+2, len(full))
		maxLen %= 300
		seq := tok.Sequence(text, maxLen)
		if maxLen > 0 {
			n := min(max(maxLen, 2), len(full))
			require.Len(t, seq, n)
			require.Equal(t, full[:n-1], seq[:n-1])
			require.Equal(t, tok.SEP(), seq[n-1])
		}
		if !utf8.ValidString(text) {
			require.Equal(t, ids, tok.EncodeSpecial(strings.ToValidUTF8(text, "\ufffd")))
		}
		if !strings.Contains(text, "[") {
			require.Equal(t, ids, tok.Encode(text))
		}
	})
}
