package pruner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prunekit/pruner/internal/memtest"
)

// goSource returns about n tokens of real Go source from GOROOT.
func goSource(b *testing.B, tokens int) string {
	b.Helper()
	root := runtime.GOROOT()
	var sb strings.Builder
	files, _ := filepath.Glob(filepath.Join(root, "src", "net", "http", "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sb.Write(data)
		if sb.Len() > tokens*4 {
			break
		}
	}
	if sb.Len() == 0 {
		b.Skip("no Go sources under GOROOT")
	}
	return sb.String()
}

// goSource8K returns the first 8,192 tokens (p's tokenizer) of goSource.
func goSource8K(b *testing.B, p *Pruner) string {
	b.Helper()
	src := goSource(b, 10_000)
	toks := p.tok.Encode(src)
	if len(toks) < 8192 {
		b.Skip("not enough source")
	}
	return src[:toks[8191].ByteEnd]
}

// BenchmarkPrune reports the end-to-end cost per 1K input tokens (tokenize,
// score, decide, repair, render) with the tiny checkpoint and 2048-token
// windows: the cost per token should stay flat as the text grows.
func BenchmarkPrune(b *testing.B) {
	p, err := Load(context.Background(), tinyDir("tiny-lamr"), WithMaxLength(2048))
	if err != nil {
		b.Fatal(err)
	}
	src := goSource(b, 100_000)
	toks := p.tok.Encode(src)
	for _, n := range []int{1_000, 2_000, 10_000, 100_000} {
		if n > len(toks) {
			break
		}
		text := src[:toks[n-1].ByteEnd]
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			// Compile the shape buckets outside the timed loop.
			if _, err := p.Prune(context.Background(), "how are request headers parsed?", text); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Prune(context.Background(), "how are request headers parsed?", text); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n)*1000, "ms/1Ktok")
		})
	}
}

// BenchmarkPruneDefault is the default pipeline (Load(ctx, "")): the
// embedded line model on an 8K-token Go file, end to end (tokenize, score,
// decide, repair, render), with the default threshold and with a 20% line
// budget.
func BenchmarkPruneDefault(b *testing.B) {
	p, err := Load(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	text := goSource8K(b, p)
	budget, err := p.With(WithLineBudget(0.2))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    *Pruner
	}{{"threshold", p}, {"lines=0.2", budget}} {
		b.Run("tokens=8192/"+tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.p.Prune(context.Background(), "how are request headers parsed?", text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadDefault is the cost of Load(ctx, ""): the embedded tokenizer
// and line model.
// BenchmarkPruneSemantic: the semantic scorer (the line model reranked by
// a sentence encoder) on 8K tokens of Go. PRUNER_MINILM_DIR names a real
// all-MiniLM-L6-v2 folder; without it the tiny random BERT of
// internal/bert/testdata runs (the line model's share of the time).
func BenchmarkPruneSemantic(b *testing.B) {
	dir := os.Getenv("PRUNER_MINILM_DIR")
	if dir == "" {
		dir = "internal/bert/testdata/tiny-bert"
	}
	p, err := Load(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	text := goSource8K(b, p)
	b.Run("tokens=8192/threshold", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Prune(context.Background(), "how are request headers parsed?", text); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLoadDefault(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(context.Background(), ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPruneLarge prunes 20 MB of real Go source (the input limit
// lifted) with each built-in scorer, and with the line model under a 20%
// line budget, and reports the peak memory per input byte (peak-B/byte;
// issue 15 bounds it by 50, issue 11 asks for at most 1 GB: 47.7) next to
// the time.
func BenchmarkPruneLarge(b *testing.B) {
	text := realGoSource(b, 20<<20)
	for _, c := range []struct {
		name string
		opts []Option
	}{
		{ScorerLine, []Option{WithScorer(ScorerLine)}},
		{ScorerLine + "-lines0.2", []Option{WithScorer(ScorerLine), WithLineBudget(0.2)}},
		{ScorerLexical, []Option{WithScorer(ScorerLexical)}},
	} {
		b.Run("20MB/"+c.name, func(b *testing.B) {
			p, err := Load(context.Background(), "", append(c.opts, WithMaxInputBytes(0))...)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			var peak int64
			for b.Loop() {
				peak = max(peak, memtest.Peak(func() {
					if _, err := p.Prune(context.Background(), "how are request headers parsed?", text); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/float64(len(text)), "peak-B/byte")
		})
	}
}

// deviceScorer stands in for a model on an accelerator: the host waits
// for a fixed time, then the grep scorer's line scores come back.
type deviceScorer struct{ wait time.Duration }

func (deviceScorer) Name() string { return "device" }

func (d deviceScorer) Score(ctx context.Context, query string, doc *Document) (*Scores, error) {
	time.Sleep(d.wait)
	return grepScorer{}.Score(ctx, query, doc)
}

// BenchmarkPruneHostPath is the host's share of an 8K-token call whose
// scorer waits 50 ms (as the host does while a GPU runs the model):
// host-ms is the call's time minus that wait, the work on the critical path
// (tokenizing, the render's parse unless it ran during the wait, folding).
func BenchmarkPruneHostPath(b *testing.B) {
	const wait = 50 * time.Millisecond
	p, err := New(deviceScorer{wait: wait})
	if err != nil {
		b.Fatal(err)
	}
	text := goSource8K(b, p)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Prune(context.Background(), "how are request headers parsed?", text); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed()-time.Duration(b.N)*wait)/float64(b.N)/1e6, "host-ms")
}
