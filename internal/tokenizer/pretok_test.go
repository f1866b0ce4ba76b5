package tokenizer

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// refPretok is an independent rendering of the Qwen2 pattern with Go's
// regexp: \s spelled out as White_Space, and `\s+(?!\S)` (which RE2 cannot
// express) rewritten as `\s+$|(\s+)\s` where only the group is consumed.
// Go's regexp reads an invalid byte as U+FFFD, a symbol, which is how the
// hand-written pre-tokenizer treats invalid bytes too.
var refPretok = func() *regexp.Regexp {
	const ws = `[\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]`
	const notWS = `[^\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\p{L}\p{N}]`
	return regexp.MustCompile(`^(?:(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?` + notWS + `+[\r\n]*|` +
		ws + `*[\r\n]+|` + ws + `+$|(` + ws + `+)` + ws + `|` + ws + `+)`)
}()

func refSplit(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		m := refPretok.FindStringSubmatchIndex(s[i:])
		end := m[1]
		if m[2] >= 0 {
			end = m[3]
		}
		if end == 0 {
			panic("reference pattern matched nothing at " + s[i:])
		}
		out = append(out, s[i:i+end])
		i += end
	}
	return out
}

func split(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		e := pretokenEnd(s, i)
		out = append(out, s[i:e])
		i = e
	}
	return out
}

func TestPretokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"hello world", []string{"hello", " world"}},
		{"don't I'LL we've", []string{"don", "'t", " I", "'LL", " we", "'ve"}},
		{"'sa 'Re 'ſ", []string{"'s", "a", " '", "Re", " '", "ſ"}}, // 'ſ: U+017F folds to s, but ' then ſ is not preceded
		{"x'ſy", []string{"x", "'ſ", "y"}},
		{"abc123", []string{"abc", "1", "2", "3"}},
		{"  foo", []string{" ", " foo"}},
		{"a  \n\n  b", []string{"a", "  \n\n", " ", " b"}},
		{"x\r\ny\r", []string{"x", "\r\n", "y", "\r"}},
		{"a\rb", []string{"a", "\r", "b"}},
		{"f(x) == 1;\n", []string{"f", "(x", ")", " ==", " ", "1", ";\n"}},
		{"\t\tif", []string{"\t", "\tif"}},
		{"a   ", []string{"a", "   "}},
		{" \u00a0(", []string{" ", "\u00a0", "("}},
		{"\u3000中文", []string{"\u3000中文"}},
		{"\u0085\u0085x", []string{"\u0085", "\u0085x"}},
		{"\x80\x85\x9f C1", []string{"\x80\x85\x9f", " C", "1"}},
		{"\u0080\u0085\u009f C1", []string{"\u0080", "\u0085", "\u009f", " C", "1"}},
		{"...\n\n", []string{"...\n\n"}},
		{"\ufeffa", []string{"\ufeffa"}},
	}
	for _, c := range cases {
		require.Equal(t, c.want, split(c.in), "%q", c.in)
		require.Equal(t, c.want, refSplit(c.in), "reference on %q", c.in)
	}
}

func TestPretokenizeGoldenMatchesReference(t *testing.T) {
	for _, r := range loadGolden(t) {
		text := normalize(r.Text).text
		require.Equal(t, refSplit(text), split(text), "row %d", r.ID)
	}
}
