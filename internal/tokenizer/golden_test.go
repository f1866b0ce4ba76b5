package tokenizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

const goldenPath = "../../testdata/tokenizer_golden.jsonl"

type goldenRow struct {
	ID                   int      `json:"id"`
	Category             string   `json:"category"`
	Source               string   `json:"source"`
	Text                 string   `json:"text"`
	IDs                  []int32  `json:"ids"`
	Offsets              [][2]int `json:"offsets"`
	IDsSpecialParsed     []int32  `json:"ids_special_parsed"`
	OffsetsSpecialParsed [][2]int `json:"offsets_special_parsed"`
	hasSpecial           bool
}

func loadGolden(tb testing.TB) []goldenRow {
	tb.Helper()
	f, err := os.Open(goldenPath)
	require.NoError(tb, err)
	defer f.Close()
	var rows []goldenRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var r goldenRow
		require.NoError(tb, json.Unmarshal(sc.Bytes(), &r))
		r.hasSpecial = r.IDsSpecialParsed != nil
		if !r.hasSpecial {
			r.IDsSpecialParsed, r.OffsetsSpecialParsed = r.IDs, r.Offsets
		}
		rows = append(rows, r)
	}
	require.NoError(tb, sc.Err())
	require.Len(tb, rows, 340)
	return rows
}

func qwen(tb testing.TB) *Tokenizer {
	tb.Helper()
	tok, err := Qwen3()
	require.NoError(tb, err)
	return tok
}

// diffTokens describes the first difference between got and the golden ids
// and code point offsets, or returns "".
func diffTokens(tok *Tokenizer, got []Token, ids []int32, offs [][2]int) string {
	n := max(len(got), len(ids))
	for i := 0; i < n; i++ {
		var g, w string
		if i < len(got) {
			s, _ := tok.TokenString(got[i].ID)
			g = fmt.Sprintf("%d %q [%d,%d]", got[i].ID, s, got[i].Start, got[i].End)
		}
		if i < len(ids) {
			s, _ := tok.TokenString(ids[i])
			w = fmt.Sprintf("%d %q [%d,%d]", ids[i], s, offs[i][0], offs[i][1])
		}
		if g != w {
			return fmt.Sprintf("token %d of %d/%d: got %s, want %s", i, len(got), len(ids), g, w)
		}
	}
	return ""
}

// checkByteOffsets verifies that byte offsets describe the same span as the
// code point offsets.
func checkByteOffsets(t *testing.T, text string, toks []Token) {
	t.Helper()
	cpAt := make([]int, 0, len(text)+1) // byte position → code points before it
	cp := 0
	for i := range text {
		for len(cpAt) <= i {
			cpAt = append(cpAt, cp)
		}
		cp++
	}
	for len(cpAt) <= len(text) {
		cpAt = append(cpAt, cp)
	}
	for i, tk := range toks {
		require.Equal(t, tk.Start, cpAt[tk.ByteStart], "token %d start", i)
		require.Equal(t, tk.End, cpAt[tk.ByteEnd], "token %d end", i)
		require.True(t, tk.ByteStart == len(text) || utf8.RuneStart(text[tk.ByteStart]), "token %d starts inside a character", i)
	}
}

func TestGoldenPlain(t *testing.T) {
	tok := qwen(t)
	bad := 0
	for _, r := range loadGolden(t) {
		got := tok.Encode(r.Text)
		if d := diffTokens(tok, got, r.IDs, r.Offsets); d != "" {
			bad++
			t.Errorf("row %d (%s %s) %q: %s", r.ID, r.Category, r.Source, abbreviate(r.Text), d)
			continue
		}
		checkByteOffsets(t, r.Text, got)
		require.Equal(t, r.IDs, tok.EncodeIDs(r.Text), "row %d EncodeIDs", r.ID)
	}
	require.Zero(t, bad, "rows with mismatches")
}

func TestGoldenSpecial(t *testing.T) {
	tok := qwen(t)
	special := 0
	for _, r := range loadGolden(t) {
		if r.hasSpecial {
			special++
		}
		got := tok.EncodeSpecial(r.Text)
		if d := diffTokens(tok, got, r.IDsSpecialParsed, r.OffsetsSpecialParsed); d != "" {
			t.Errorf("row %d (%s) %q: %s", r.ID, r.Category, abbreviate(r.Text), d)
			continue
		}
		checkByteOffsets(t, r.Text, got)
		require.Equal(t, r.IDsSpecialParsed, tok.EncodeSpecialIDs(r.Text), "row %d EncodeSpecialIDs", r.ID)
	}
	require.Equal(t, 11, special)
}

func abbreviate(s string) string {
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	return string([]rune(s)[:60]) + "…"
}
