package tokenizer

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchCorpus concatenates the golden texts: real Python, Go, JS and Rust
// snippets plus the hand-written unicode rows (some not in NFC, so the whole
// text takes the aligned-normalisation path).
func benchCorpus(b *testing.B) string {
	var sb strings.Builder
	for _, r := range loadGolden(b) {
		sb.WriteString(r.Text)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// goSource is a large real Go file from the local toolchain.
func goSource(b *testing.B) string {
	data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skipf("Go source not available: %v", err)
	}
	return string(data)
}

// BenchmarkLoad measures building the embedded Qwen3 tokenizer from
// scratch (gunzip, vocab.json, merges.txt), bypassing the process-wide
// sync.OnceValues.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildEmbedded(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchEncode(b *testing.B, text string, f func(*Tokenizer, string)) {
	tok := qwen(b)
	f(tok, text) // warm the word cache like a long-running process
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f(tok, text)
	}
}

func encode(t *Tokenizer, s string)        { t.Encode(s) }
func encodeIDs(t *Tokenizer, s string)     { t.EncodeIDs(s) }
func encodeSpecial(t *Tokenizer, s string) { t.EncodeSpecial(s) }

// BenchmarkEncode encodes net/http/server.go (pure source code).
func BenchmarkEncode(b *testing.B) { benchEncode(b, goSource(b), encode) }

func BenchmarkEncodeIDs(b *testing.B) { benchEncode(b, goSource(b), encodeIDs) }

func BenchmarkEncodeSpecial(b *testing.B) { benchEncode(b, goSource(b), encodeSpecial) }

// BenchmarkEncodeGolden encodes the golden corpus (mixed code and unicode).
func BenchmarkEncodeGolden(b *testing.B) { benchEncode(b, benchCorpus(b), encode) }

// BenchmarkEncodeColdCache measures encoding with a fresh word cache each
// time, the cost for text never seen before.
func BenchmarkEncodeColdCache(b *testing.B) {
	tok := qwen(b)
	text := goSource(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		cold := *tok
		cold.cache = newWordCache()
		cold.Encode(text)
	}
}

// BenchmarkEncodeParallel encodes from all Ps at once through the shared
// tokenizer and word cache.
func BenchmarkEncodeParallel(b *testing.B) {
	tok := qwen(b)
	text := goSource(b)
	tok.Encode(text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tok.Encode(text)
		}
	})
}
