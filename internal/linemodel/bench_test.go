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
	m := benchModel(b)
	src := bigGoSource(700)
	ctx := context.Background()
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Score(ctx, "retry bad range headers when parsing fails in parseRange12", src, syntax.Go)
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
