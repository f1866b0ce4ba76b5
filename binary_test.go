package pruner

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
)

func randomBytes(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return string(b)
}

func pngImage(t *testing.T) string {
	r := rand.New(rand.NewPCG(3, 4))
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = byte(r.UintN(256))
	}
	img.Set(0, 0, color.White)
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.String()
}

func gzipped(t *testing.T, s string) string {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.String()
}

func utf16Text(s string, bigEndian, bom bool) string {
	var buf bytes.Buffer
	var order binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		order = binary.BigEndian
	}
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xfeff}, units...)
	}
	for _, u := range units {
		_ = binary.Write(&buf, order, u)
	}
	return buf.String()
}

// latin1 encodes s (runes below 256) as ISO 8859-1.
func latin1(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}

const frenchProse = "Le cœur a ses raisons que la raison ne connaît point. Où est la bibliothèque ? " +
	"Déjà l'été, les élèves répètent leurs leçons à l'école, près du théâtre.\n"

const ansiLog = "\x1b[1m=== RUN   TestRetry\x1b[0m\n" +
	"\x1b[32m--- PASS: TestRetry (0.01s)\x1b[0m\n" +
	"\x1b[31m--- FAIL: TestBackoff (0.20s)\x1b[0m\n" +
	"    backoff_test.go:42: got 3 retries, want 5\r\n" +
	"\x1b[33mWARN\x1b[0m\tslow test\f\n" +
	"progress 10%\b\b\b20%\x1b[K\n"

const cjkCode = "// 计算重试的间隔时间（指数退避）\nfunc backoff(n int) time.Duration {\n" +
	"\t// 上限は三十秒です\n\treturn min(time.Second<<n, 30*time.Second) // 최대 30초\n}\n"

const emojiText = "🎉 Release notes 🚀\n- fixed 🐛 in parser ✅\n- faster 🏎️💨 startup\n" +
	"👩‍💻👨‍👩‍👧‍👦🏳️‍🌈 family and flags\n"

// TestBinaryInput: what the binary check refuses and what it must let
// through, with the reason it gives.
func TestBinaryInput(t *testing.T) {
	goSource, err := os.ReadFile("prune.go")
	require.NoError(t, err)
	strayNULs := []byte(strings.Repeat("2024-05-01 12:00:00 INFO request served in 3ms\n", 200))
	for _, k := range []int{100, 3000, 7000} {
		strayNULs[k] = 0
	}
	cases := []struct {
		name   string
		text   string
		binary string // substring of the reason; "" for text
	}{
		{"random bytes 100 KB", randomBytes(1, 100<<10), "invalid UTF-8 or control bytes in the first 8 KB"},
		{"random bytes 200 B", randomBytes(2, 200), "invalid UTF-8 or control bytes in the text"},
		{"PNG image", pngImage(t), "in the first 8 KB"},
		{"PNG header and random data", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + randomBytes(5, 20<<10), "in the first 8 KB"},
		{"gzip stream", gzipped(t, string(goSource)), "invalid UTF-8 or control bytes"},
		{"NUL only", strings.Repeat("\x00", 1<<20), "100% NUL bytes in the first 8 KB"},
		{"one NUL", "\x00", "100% NUL bytes in the text"},
		{"ELF-like header", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00" + strings.Repeat("text\x00", 100), "NUL bytes"},
		{"UTF-16LE with BOM", utf16Text(string(goSource), false, true), "UTF-16 text (byte order mark)"},
		{"UTF-16BE with BOM", utf16Text(frenchProse, true, true), "UTF-16 text (byte order mark)"},
		{"UTF-16LE without BOM", utf16Text(string(goSource), false, false), "UTF-16 text (NUL in every other byte)"},
		{"UTF-16BE without BOM", utf16Text(frenchProse, true, false), "UTF-16 text (NUL in every other byte)"},
		{"UTF-32LE with BOM", "\xff\xfe\x00\x00h\x00\x00\x00i\x00\x00\x00", "UTF-32"},

		{"empty", "", ""},
		{"Go source", string(goSource), ""},
		{"Latin-1 prose", latin1(strings.Repeat(frenchProse, 50)), ""},
		{"Latin-1 short line", latin1("Déjà été, où ça ?\n"), ""},
		{"Windows-1252 quotes", strings.Repeat("He said \x93hello\x94 \x96 and left.\n", 40), ""},
		{"ANSI-coloured test log", strings.Repeat(ansiLog, 50), ""},
		{"CJK code comments", strings.Repeat(cjkCode, 40), ""},
		{"emoji", strings.Repeat(emojiText, 40), ""},
		{"CRLF tabs form feeds", strings.Repeat("a\tb\r\n\fsection\v\r\n", 500), ""},
		{"stray NULs in a log", string(strayNULs), ""},
		{"UTF-8 cut at 8 KB", strings.Repeat("x", binarySample-1) + "€ and more", ""},
		{"Cyrillic, Greek, Arabic, Hindi", strings.Repeat("Привет мир. Γειά σου κόσμε. مرحبا بالعالم. नमस्ते दुनिया.\n", 100), ""},
	}
	ctx := context.Background()
	p, err := Load(ctx, "")
	require.NoError(t, err)
	accept, err := p.With(WithBinaryInput(true))
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why := binaryReason(tc.text)
			if tc.binary == "" {
				require.Empty(t, why)
				return
			}
			require.Contains(t, why, tc.binary)
			_, err := p.Prune(ctx, "how are errors handled?", tc.text)
			require.ErrorIs(t, err, ErrBinaryInput)
			require.ErrorContains(t, err, "input looks binary: "+why)
			t.Log(err)
			res, err := accept.Prune(ctx, "how are errors handled?", tc.text)
			require.NoError(t, err, "WithBinaryInput(true) prunes it as text")
			checkInvariants(t, tc.text, res)
		})
	}
}

// TestBinaryInputRefusedFirst: the check comes before any work, even with
// a blank query (which otherwise returns the text whole).
func TestBinaryInputRefusedFirst(t *testing.T) {
	p, err := Load(context.Background(), "")
	require.NoError(t, err)
	_, err = p.Prune(context.Background(), " ", "\x00\x01\x02")
	require.ErrorIs(t, err, ErrBinaryInput)
	q, err := p.With(WithSWEPrunerCompat())
	require.NoError(t, err)
	_, err = q.Prune(context.Background(), "q", "\x00\x01\x02")
	require.ErrorIs(t, err, ErrBinaryInput)
}
