package astrepair

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// FuzzRepairRender feeds arbitrary bytes and masks through detection,
// repair and rendering: nothing may panic, repair only adds lines, and
// every kept line comes out byte-identical.
func FuzzRepairRender(f *testing.F) {
	seeds := []string{
		pyClass, pyTry, goSrc, jsSrc, javaSrc, rustSrc, cSrc, cppSrc, tsSrc,
		"", "\n", "\r\n\r", "\x00\xff\xfe", "def f(:\n  (((\n", "}}}{{{\n", "a\rb\rc",
		"src/a.go:1:package x\n", "if x:\n\tpass\n  else\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), []byte{byte(i * 37), 0x55, 0xf0}, uint8(i))
	}
	langs := append([]syntax.Language{syntax.Text}, syntax.Languages()...)
	f.Fuzz(func(t *testing.T, data, mask []byte, pick uint8) {
		if len(data) > 1<<16 {
			return
		}
		text := string(data)
		var lang syntax.Language
		if int(pick) < len(langs) {
			lang = langs[pick]
		} else {
			lang = syntax.Detect(text, "")
		}
		n := len(syntax.SplitLines(text))
		keep := make([]bool, n)
		for i := range keep {
			if len(mask) > 0 {
				keep[i] = mask[i%len(mask)]>>(uint(i/len(mask))%8)&1 == 1
			}
		}
		ctx := context.Background()
		a, err := Analyze(ctx, text, lang)
		require.NoError(t, err)
		res, err := a.Repair(ctx, keep, WithMaxHops(2))
		require.NoError(t, err)
		require.Len(t, res.Keep, n)
		for i := range keep {
			if keep[i] {
				require.True(t, res.Keep[i])
				require.Equal(t, ReasonKept, res.Reason[i])
			}
		}
		out := renderA(t, a, res.Keep)
		assertKeptVerbatim(t, text, res.Keep, out)
		plain := render(t, text, lang, keep)
		assertKeptVerbatim(t, text, keep, plain)
		// Adding the kept lines one by one must end where Repair does.
		sel := a.NewSelection()
		for i := n - 1; i >= 0; i-- {
			if keep[i] {
				_, err := sel.Add(ctx, i)
				require.NoError(t, err)
			}
		}
		base, err := a.Repair(ctx, keep)
		require.NoError(t, err)
		require.Equal(t, base.Keep, sel.Result().Keep)
		if n > 0 {
			c, err := a.Closure(ctx, int(pick)%n)
			require.NoError(t, err)
			require.LessOrEqual(t, len(c), n)
		}
		_ = strings.TrimSpace(out.Text)
	})
}

// TestHostileInputs covers inputs named in the contract: invalid UTF-8,
// NUL bytes, a 50,000-character line and a 10 MB text.
func TestHostileInputs(t *testing.T) {
	ctx := context.Background()
	longLine := "x = [" + strings.Repeat("1, ", 16000) + "]\n"
	// 10 MB mostly of comments keeps the parse affordable on CI while the
	// code part still exercises every rule.
	code := strings.Repeat("def f(a, b):\n    if a:\n        return [a,\n                b]\n    return None\n\n", 2000)
	big := code + strings.Repeat("# "+strings.Repeat("z", 90)+"\n", (10<<20-len(code))/93)
	cases := map[string]struct {
		text string
		lang syntax.Language
	}{
		"invalid utf8": {"def f():\n    return '\xff\xfe'\n\xc3\x28 = 1\n", syntax.Python},
		"nul bytes":    {"package p\x00\nfunc f() {\x00}\n", syntax.Go},
		"long line":    {"import os\n" + longLine + "print(x)\n", syntax.Python},
		"10MB":         {big, syntax.Python},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := Analyze(ctx, tc.text, tc.lang)
			require.NoError(t, err)
			keep := make([]bool, a.Lines())
			for i := range keep {
				keep[i] = i%7 == 3
			}
			res, err := a.Repair(ctx, keep)
			require.NoError(t, err)
			out := renderA(t, a, res.Keep)
			assertKeptVerbatim(t, tc.text, res.Keep, out)
		})
	}
}

func TestUnknownLanguageIsSafe(t *testing.T) {
	ctx := context.Background()
	text := "IDENTIFICATION DIVISION.\nPROGRAM-ID. HELLO.\nPROCEDURE DIVISION.\n"
	lang := syntax.Language("cobol")
	res, err := Repair(ctx, text, lang, []bool{true, false, false})
	require.NoError(t, err)
	require.Equal(t, []bool{true, false, false}, res.Keep)
	out := render(t, text, lang, res.Keep)
	require.Equal(t, "IDENTIFICATION DIVISION.\n... 2 lines omitted ...\n", out.Text)
}
