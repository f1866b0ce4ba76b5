package wordpiece

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAllCodePoints compares the normalised words of "x"+c+"x" with HF's
// for every code point c, uncased and cased, from the file
// testdata/codepoints.py writes (40 MB, not committed).
func TestAllCodePoints(t *testing.T) {
	path := os.Getenv("WORDPIECE_CODEPOINTS")
	if path == "" {
		t.Skip("WORDPIECE_CODEPOINTS is not set: run testdata/codepoints.py to write the file it names")
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	vocab := []byte("[UNK]\n[CLS]\n[SEP]\n")
	uncased, err := New(vocab, DefaultConfig())
	require.NoError(t, err)
	cased, err := New(vocab, Config{ChineseChars: true})
	require.NoError(t, err)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var bad []string
	rows := 0
	for sc.Scan() {
		var row [3]json.RawMessage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		var cp rune
		var want [2][]string
		require.NoError(t, json.Unmarshal(row[0], &cp))
		require.NoError(t, json.Unmarshal(row[1], &want[0]))
		require.NoError(t, json.Unmarshal(row[2], &want[1]))
		text := "x" + string(cp) + "x"
		for i, tok := range []*Tokenizer{uncased, cased} {
			if got := tok.words(text); !slices.Equal(got, want[i]) {
				bad = append(bad, fmt.Sprintf("U+%04X %v: got %q want %q", cp, []string{"uncased", "cased"}[i], got, want[i]))
			}
		}
		rows++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 0x110000-0x800, rows)
	if len(bad) > 0 {
		t.Errorf("%d differences, the first ones:\n%s", len(bad), joinFirst(bad, 100000))
	}
}

func joinFirst(lines []string, n int) string {
	s := ""
	for i, l := range lines {
		if i == n {
			break
		}
		s += l + "\n"
	}
	return s
}
