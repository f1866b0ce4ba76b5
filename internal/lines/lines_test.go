package lines

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\rb\n", []string{"a\rb"}},
		{"\n\n", []string{"", ""}},
		{"a\vb\fc\u2028d\n", []string{"a\vb\fc\u2028d"}},
		{"\xff\n\x00", []string{"\xff", "\x00"}},
	}
	for _, tc := range tests {
		ls := Split(tc.text)
		assert.Equal(t, tc.want, nilIfEmpty(Contents(tc.text, ls)), "%q", tc.text)
		assert.Equal(t, len(ls), Count(tc.text), "%q", tc.text)
	}
}

func TestSplitPython(t *testing.T) {
	// Expected: Python 3.11's str.splitlines().
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a\n", []string{"a"}},
		{"a\r\nb\rc\n\nd", []string{"a", "b", "c", "", "d"}},
		{"a\vb\fc\x1cd\x1de\x1ef\u0085g\u2028h\u2029i", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}},
		{"a\x1fb", []string{"a\x1fb"}},
		{"\xff\r", []string{"\xff"}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, nilIfEmpty(Contents(tc.text, SplitPython(tc.text))), "%q", tc.text)
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestAppendNumbered(t *testing.T) {
	assert.Equal(t, "    12\tx\n", string(AppendNumbered(nil, 12, "x\n")))
	assert.Equal(t, "      \t# ...\n", string(AppendNumbered(nil, 0, "# ...\n")))
	assert.Equal(t, "1234567\ty", string(AppendNumbered(nil, 1234567, "y")))
}

// FuzzSplit: both rules give back the text, in order, with numbers 1..n;
// Count agrees with Split.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"", "a\r\nb", "\r\r\n\n", "x\u2028y\vz", "\xff\xfe\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, split := range []func(string) []Line{Split, SplitPython} {
			var b strings.Builder
			for i, l := range split(text) {
				require.Equal(t, i+1, l.Number)
				require.LessOrEqual(t, l.Start, l.End)
				require.LessOrEqual(t, l.End, l.TermEnd)
				require.Equal(t, b.Len(), l.Start)
				b.WriteString(text[l.Start:l.TermEnd])
			}
			require.Equal(t, text, b.String())
		}
		require.Equal(t, len(Split(text)), Count(text))
	})
}
