package wordpiece

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uncased returns all-MiniLM-L6-v2's tokenizer (bert-base-uncased's
// vocabulary, testdata/uncased).
func uncased(tb testing.TB) *Tokenizer {
	tb.Helper()
	f, err := os.Open("testdata/uncased/vocab.txt.gz")
	require.NoError(tb, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(tb, err)
	vocab, err := io.ReadAll(zr)
	require.NoError(tb, err)
	cfgJSON, err := os.ReadFile("testdata/uncased/tokenizer_config.json")
	require.NoError(tb, err)
	cfg, err := parseConfig(cfgJSON)
	require.NoError(tb, err)
	tok, err := New(vocab, cfg)
	require.NoError(tb, err)
	return tok
}

type goldenRow struct {
	Text  string  `json:"text"`
	IDs   []int32 `json:"ids"`
	IDs16 []int32 `json:"ids16"`
}

func loadGolden(tb testing.TB) []goldenRow {
	tb.Helper()
	data, err := os.ReadFile("testdata/golden.json")
	require.NoError(tb, err)
	var g struct{ Rows []goldenRow }
	require.NoError(tb, json.NewDecoder(bytes.NewReader(data)).Decode(&g))
	require.NotEmpty(tb, g.Rows)
	return g.Rows
}

// TestGolden compares the ids with HF tokenizers' (testdata/gen_golden.py)
// on hostile strings: code, identifiers, accents, emoji, CJK, control
// characters, special tokens in the text, over-long words.
func TestGolden(t *testing.T) {
	tok := uncased(t)
	specials := []string{"[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]"}
	for _, row := range loadGolden(t) {
		name := row.Text
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, row.IDs, tok.Sequence(row.Text, 0), "untruncated")
			assert.Equal(t, row.IDs16, tok.Sequence(row.Text, 16), "truncated to 16")
			special := tok.EncodeSpecial(row.Text)
			assert.Equal(t, row.IDs[1:len(row.IDs)-1], special, "EncodeSpecial")
			hasSpecial := false
			for _, s := range specials {
				hasSpecial = hasSpecial || strings.Contains(row.Text, s)
			}
			if !hasSpecial {
				assert.Equal(t, special, tok.Encode(row.Text), "Encode of a text without special tokens")
			}
		})
	}
}
