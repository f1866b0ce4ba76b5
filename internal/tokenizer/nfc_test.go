package tokenizer

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"
)

// TestNFCTables checks the generated tables against golang.org/x/text for
// every code point: combining classes, full decompositions (Hangul
// included), compositions, and that every rune the fast path calls safe is
// left alone by NFC.
func TestNFCTables(t *testing.T) {
	if testing.Short() {
		t.Skip("walks all code points")
	}
	require.Equal(t, norm.Version, nfcUnicodeVersion, "regenerate nfc_tables.go with go generate")
	var buf []rune
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		props := norm.NFD.PropertiesString(s)
		require.Equal(t, props.CCC(), combiningClass(r), "ccc %U", r)
		buf = appendDecomposition(buf[:0], r)
		require.Equal(t, norm.NFD.String(s), string(buf), "decomposition %U", r)
		if !nfcUnsafe(r) {
			require.Equal(t, s, norm.NFC.String(s), "safe %U changes under NFC", r)
			require.Zero(t, props.CCC(), "safe %U has a combining class", r)
		}
	}
	for _, c := range composeTable {
		got, ok := compose(c.a, c.b)
		require.True(t, ok)
		require.Equal(t, c.c, got)
		require.Equal(t, string(c.c), norm.NFC.String(string([]rune{c.a, c.b})), "%U %U", c.a, c.b)
	}
	got, ok := compose(0x1100, 0x1161) // Hangul L + V
	require.True(t, ok)
	require.Equal(t, rune(0xAC00), got)
	got, ok = compose(0xAC00, 0x11A8) // LV + T
	require.True(t, ok)
	require.Equal(t, rune(0xAC01), got)
	_, ok = compose(0xAC01, 0x11A8) // LVT + T does not compose
	require.False(t, ok)
	_, ok = compose('a', 'b')
	require.False(t, ok)
}
