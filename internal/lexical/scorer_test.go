package lexical_test

import (
	"context"
	"encoding/json"
	"go/build"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/lexical"
)

func TestScorerScoreLines(t *testing.T) {
	const text = "package retry\r\n\r\n" +
		"// Schedule computes the next retry time.\r\n" +
		"func Schedule(attempt int) time.Duration {\r\n" +
		"\treturn backoff(attempt)\r\n" +
		"}\r\n"
	tests := []struct {
		name  string
		query string
		text  string
		check func(t *testing.T, scores []float64, doc float64)
	}{
		{"empty query", "", text, func(t *testing.T, s []float64, doc float64) {
			assert.Equal(t, make([]float64, 6), s)
			assert.Zero(t, doc)
		}},
		{"empty text", "retry schedule", "", func(t *testing.T, s []float64, doc float64) {
			assert.Empty(t, s)
			assert.Zero(t, doc)
		}},
		{"best line scores 1", "how is the retry scheduled? Schedule backoff", text, func(t *testing.T, s []float64, doc float64) {
			require.Len(t, s, 6)
			assert.Zero(t, s[1], "blank line")
			assert.Zero(t, s[5], "closing brace")
			assert.InDelta(t, 1.0, slicesMax(s), 0)
			assert.Greater(t, s[2], 0.0)
			assert.Greater(t, s[3], 0.0)
			// "scheduled" is not a piece of the text: 3 of 4 pieces found.
			assert.InDelta(t, 0.75, doc, 1e-12)
		}},
		{"nothing matches", "tokenizer vocabulary", text, func(t *testing.T, s []float64, doc float64) {
			assert.Equal(t, make([]float64, 6), s)
			assert.Zero(t, doc)
		}},
		{"hostile bytes", "nul\x00byte \xff\xfe schedule", "a\x00nul\xffschedule\n\xc3(\x00\n" + strings.Repeat("schedule ", 100000),
			func(t *testing.T, s []float64, doc float64) {
				require.Len(t, s, 3)
				for _, x := range s {
					assert.False(t, math.IsNaN(x))
					assert.GreaterOrEqual(t, x, 0.0)
					assert.LessOrEqual(t, x, 1.0)
				}
				assert.Greater(t, s[0], 0.0)
				assert.Zero(t, s[1])
				// nul and schedule occur, byte does not.
				assert.InDelta(t, 2.0/3, doc, 1e-12)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc lexical.Scorer
			scores, doc := sc.ScoreLines(tt.query, tt.text, chunk.SplitLines(tt.text))
			tt.check(t, scores, doc)
		})
	}
}

func slicesMax(s []float64) float64 {
	m := math.Inf(-1)
	for _, x := range s {
		m = math.Max(m, x)
	}
	return m
}

// TestScorerRanksLikeBM25 checks the property budgets rely on: normalising
// keeps BM25's order, so a top-k on ScoreLines picks the baseline's lines.
// CRLF terminators do not change anything, since "\r" separates pieces.
func TestScorerRanksLikeBM25(t *testing.T) {
	var cases []struct {
		Query string `json:"query"`
		Text  string `json:"text"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "bm25_cases.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &cases))
	for _, c := range cases {
		for _, text := range []string{c.Text, strings.ReplaceAll(c.Text, "\n", "\r\n")} {
			raw := lexical.BM25(c.Query, pyLines(c.Text))
			scores, doc := lexical.Scorer{}.ScoreLines(c.Query, text, chunk.SplitLines(text))
			require.Len(t, scores, len(raw))
			k := pyBudget(0.2, len(raw))
			assert.Equal(t, lexical.TopK(raw, k), lexical.TopK(scores, k))
			best := slicesMax(raw)
			if best == 0 {
				// A vague query whose pieces are all absent from the file.
				assert.Equal(t, raw, scores)
				assert.Zero(t, doc)
				continue
			}
			for i := range raw {
				assert.InDelta(t, raw[i]/best, scores[i], 1e-12)
			}
			assert.Greater(t, doc, 0.0)
			assert.LessOrEqual(t, doc, 1.0)
		}
	}
}

func TestScorerBadOffsets(t *testing.T) {
	text := "retry here\nand retry there\n"
	lines := []chunk.Line{{Number: 1, Start: 0, End: 10}, {Number: 2, Start: 11, End: 99}, {Number: 3, Start: 5, End: 2}}
	scores, _ := lexical.Scorer{}.ScoreLines("retry there", text, lines)
	assert.Equal(t, []float64{1, 0, 0}, scores)
}

// benchSource gathers about 1 MB of real Go source from GOROOT (sorted file
// names, so every run reads the same text), or the dev-set texts in
// testdata when GOROOT's sources are absent.
func benchSource(b *testing.B) string {
	var sb strings.Builder
	for _, pkg := range []string{"net/http", "go/types", "runtime", "fmt"} {
		files, _ := filepath.Glob(filepath.Join(build.Default.GOROOT, "src", pkg, "*.go"))
		sort.Strings(files)
		for _, f := range files {
			if sb.Len() >= 1<<20 {
				return sb.String()
			}
			data, err := os.ReadFile(f)
			if err == nil {
				sb.Write(data)
			}
		}
	}
	var cases []struct{ Text string }
	data, err := os.ReadFile(filepath.Join("testdata", "bm25_cases.json"))
	require.NoError(b, err)
	require.NoError(b, json.Unmarshal(data, &cases))
	for sb.Len() < 1<<20 {
		for _, c := range cases {
			sb.WriteString(c.Text)
		}
	}
	return sb.String()
}

func BenchmarkScoreLines1MB(b *testing.B) {
	text := benchSource(b)
	lines := chunk.SplitLines(text)
	const query = "Fix the retry of idle connections when the server closes the keep-alive connection\n" +
		"The transport now retries requests whose body was not written."
	var sc lexical.Scorer
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sc.ScoreLines(query, text, lines)
	}
}

// TestScoreLinesContext: a done context stops the pass, before it starts
// and in the middle of a large text, and the result is the plain call's
// when the context stays live.
func TestScoreLinesContext(t *testing.T) {
	text := strings.Repeat("func retry(n int) error { return schedule(n) }\n", 200_000)
	lines := chunk.SplitLines(text)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := lexical.Scorer{}.ScoreLinesContext(cancelled, "how are retries scheduled?", text, lines)
	require.ErrorIs(t, err, context.Canceled)

	// A context that turns done after its first look: the pass must look
	// again before the end.
	ctx := &doneAfter{Context: context.Background(), looks: 1}
	_, err = lexical.BM25Context(ctx, "how are retries scheduled?", strings.Split(text, "\n"))
	require.ErrorIs(t, err, context.Canceled)
	require.Greater(t, ctx.calls, 1)

	want, wantDoc := lexical.Scorer{}.ScoreLines("how are retries scheduled?", text, lines)
	got, doc, err := lexical.Scorer{}.ScoreLinesContext(context.Background(), "how are retries scheduled?", text, lines)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, wantDoc, doc)
}

// doneAfter is a context whose Err turns context.Canceled after looks calls.
type doneAfter struct {
	context.Context
	looks, calls int
}

func (d *doneAfter) Err() error {
	d.calls++
	if d.calls > d.looks {
		return context.Canceled
	}
	return nil
}

// TestEachToken: the same pieces as Tokens, an early stop when fn says so,
// and a look at ctx inside one long string.
func TestEachToken(t *testing.T) {
	for _, s := range []string{"", "parseHTTPRequest_v2", "HTTPServer x42 ÄÖ\xff ABC def", strings.Repeat("fooBar ", 1000)} {
		var got []string
		require.NoError(t, lexical.EachToken(context.Background(), s, func(tok string) bool {
			got = append(got, tok)
			return true
		}))
		require.Equal(t, lexical.Tokens(s), got, s)
	}
	n := 0
	require.NoError(t, lexical.EachToken(context.Background(), "a b c d e", func(string) bool { n++; return n < 2 }))
	require.Equal(t, 2, n)

	ctx := &doneAfter{Context: context.Background(), looks: 1}
	err := lexical.EachToken(ctx, strings.Repeat("retry ", 100_000), func(string) bool { return true })
	require.ErrorIs(t, err, context.Canceled)
}
