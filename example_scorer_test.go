package pruner_test

import (
	"context"
	"fmt"
	"log"
	"regexp"
	"strings"

	"github.com/prunekit/pruner"
)

// grepScorer is a Scorer of one's own: in a build or test log, lines that
// report a failure matter most, then lines naming a word of the question.
type grepScorer struct{ failure *regexp.Regexp }

func (grepScorer) Name() string { return "grep" }

func (g grepScorer) Score(ctx context.Context, query string, doc *pruner.Document) (*pruner.Scores, error) {
	words := strings.Fields(strings.ToLower(query))
	s := &pruner.Scores{Lines: make([]float64, len(doc.Lines))}
	for i := range doc.Lines {
		line := strings.ToLower(doc.Line(i))
		switch {
		case g.failure.MatchString(line):
			s.Lines[i] = 1
		default:
			for _, w := range words {
				if len(w) > 4 && strings.Contains(line, strings.Trim(w, "?")) {
					s.Lines[i] = 0.6
				}
			}
		}
		s.Doc = max(s.Doc, s.Lines[i])
	}
	return s, ctx.Err()
}

// New composes any Scorer with the library's decision, repair and
// rendering: here a grep-like scorer for test logs, with the threshold,
// the budgets and the placeholders of the built-in models.
func ExampleNew() {
	var b strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "=== RUN   TestParse/case_%02d\n--- PASS: TestParse/case_%02d (0.00s)\n", i, i)
	}
	b.WriteString("=== RUN   TestRetryBackoff\n    retry_test.go:41: backoff after 3 attempts = 8s, want 4s\n--- FAIL: TestRetryBackoff (0.01s)\n")
	b.WriteString("=== RUN   TestClose\n--- PASS: TestClose (0.00s)\nFAIL\nexit status 1\nFAIL\texample.com/client\t0.412s\n")

	p, err := pruner.New(grepScorer{regexp.MustCompile(`fail|want|panic`)}, pruner.WithThreshold(0.5))
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Prune(context.Background(), "why does the backoff test fail?", b.String())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Text)
	fmt.Printf("%s kept %d of %d lines, %d of %d tokens\n", res.Scorer, len(res.KeptLines()), len(res.Lines), res.Tokens.Kept, res.Tokens.Input)
	// Output:
	// ... 24 lines omitted (1-24): --- PASS: TestParse/case_01, TestParse/case_02, and 10 more ...
	// === RUN   TestRetryBackoff
	//     retry_test.go:41: backoff after 3 attempts = 8s, want 4s
	// --- FAIL: TestRetryBackoff (0.01s)
	// === RUN   TestClose
	// --- PASS: TestClose (0.00s)
	// FAIL
	// exit status 1
	// FAIL	example.com/client	0.412s
	// grep kept 8 of 32 lines, 121 of 420 tokens
}
