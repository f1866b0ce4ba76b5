package linemodel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prunekit/pruner/internal/syntax"
)

// bigGoSource returns a Go file of about lines lines and ~43 bytes a line
// (700 lines ≈ 30 KB ≈ 8K Qwen tokens, the library's 8K-token benchmark
// size): goSrc-like functions repeated under distinct names.
func bigGoSource(lines int) string {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n")
	for i := 0; strings.Count(b.String(), "\n") < lines; i++ {
		fmt.Fprintf(&b, `
// parseRange%[1]d parses an HTTP byte range header such as "bytes=0-499"
// and returns the first and last offsets, or an error for a bad header.
func parseRange%[1]d(header string) (first int, last int, err error) {
	parts := strings.Split(strings.TrimPrefix(header, "bytes="), "-")
	if len(parts) != 2 || parts[0] == "" && parts[1] == "" {
		return 0, 0, fmt.Errorf("parseRange%[1]d: bad range header %%q", header)
	}
	return atoiDigits%[1]d(parts[0]), atoiDigits%[1]d(parts[1]), nil
}

// atoiDigits%[1]d converts a string of ASCII digits to an int.
func atoiDigits%[1]d(digits string) int {
	value := 0
	for _, c := range digits {
		value = value*10 + int(c-'0')
	}
	return value
}
`, i)
	}
	return b.String()
}

func benchModel(b *testing.B) *Model {
	m, err := Embedded()
	if err != nil {
		rng := rand.New(rand.NewPCG(1, 2))
		if m, err = NewModel(Config{Hidden: []int{64, 32, 32}, Embed: 16}, rng.NormFloat64); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// BenchmarkScore times Score (features included) on a 700-line Go file.
func BenchmarkScore(b *testing.B) {
	benchScore(b, "retry bad range headers when parsing fails in parseRange12", bigGoSource(700), syntax.Go)
}

func benchScore(b *testing.B, query, src string, lang syntax.Language) {
	m := benchModel(b)
	ctx := context.Background()
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Score(ctx, query, src, lang)
	}
}

// BenchmarkForward times the model alone (no features) on 700 lines.
func BenchmarkForward(b *testing.B) {
	m := benchModel(b)
	in := NewInput(context.Background(), "retry bad range headers", bigGoSource(700), syntax.Go)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Forward(in)
	}
}

// BenchmarkForwardAttention times the forward pass of the shipped shape
// (random weights) without and with a 16-wide attention head over ±128
// lines (train -attn 16 -attn-band 128), on 700 lines.
func BenchmarkForwardAttention(b *testing.B) {
	in := NewInput(context.Background(), "retry bad range headers", bigGoSource(700), syntax.Go)
	for _, attn := range []int{0, 16} {
		b.Run(fmt.Sprintf("attn=%d", attn), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			cfg := Config{Hidden: []int{96, 48, 48}, Embed: 48}
			if attn > 0 {
				cfg.Attn, cfg.AttnBand = attn, 128
			}
			m, err := NewModel(cfg, rng.NormFloat64)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Forward(in)
			}
		})
	}
}

// bigToolOutput returns about lines lines of tool output: git log commits
// with dates and stats, blame lines, grep hits and ls -l entries, the
// inputs the tool columns (records, dates, quoted code, sizes) read.
func bigToolOutput(lines int) string {
	var b strings.Builder
	for i := 0; strings.Count(b.String(), "\n") < lines; i++ {
		fmt.Fprintf(&b, "commit %040x\nAuthor: Dev %d <dev%d@example.com>\nDate:   Fri Nov %d 02:54:15 2021 +0100\n\n"+
			"    Retry range parsing %d when the header is bad\n\n lib/range%d.js | %d +++--\n\n",
			i*7919, i%13, i%13, 1+i%28, i, i, i%50)
		fmt.Fprintf(&b, "3300d2155 lib/range.js (Dev %d 2025-09-%02d 12:03:35 -0400 %4d)   parts = header.split(\"-\");\n", i%13, 1+i%28, i)
		fmt.Fprintf(&b, "src/range%d.go:%d:\tfirst, last, err := parseRange%d(header)\n", i%17, i, i)
		fmt.Fprintf(&b, "-rw-r--r--  1 root root %6d Apr 28  2025 range%d.go\n", 1000+i*37%90000, i)
	}
	return b.String()
}

// BenchmarkScoreToolOutput times Score (features included) on about 700
// lines of tool output.
func BenchmarkScoreToolOutput(b *testing.B) {
	benchScore(b, "which commits from November 2021 changed range parsing by more than 10 lines?", bigToolOutput(700), syntax.Text)
}
