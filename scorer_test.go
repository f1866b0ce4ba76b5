package pruner

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grepScorer is ExampleNew's user-defined Scorer, in the conformance
// suite: failure lines score 1, lines naming a long word of the query 0.6.
type grepScorer struct{}

var grepFailure = regexp.MustCompile(`(?i)fail|error|want|panic`)

func (grepScorer) Name() string { return "grep" }

func (grepScorer) Score(ctx context.Context, query string, doc *Document) (*Scores, error) {
	words := strings.Fields(strings.ToLower(query))
	s := &Scores{Lines: make([]float64, len(doc.Lines))}
	for i := range doc.Lines {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		line := doc.Line(i)
		if grepFailure.MatchString(line) {
			s.Lines[i] = 1
		} else {
			low := strings.ToLower(line)
			for _, w := range words {
				if len(w) > 4 && strings.Contains(low, w) {
					s.Lines[i] = 0.6
					break
				}
			}
		}
		s.Doc = max(s.Doc, s.Lines[i])
	}
	return s, nil
}

// fixedScorer returns what it is given, to test New's contract checks.
type fixedScorer struct {
	scores    *Scores
	err       error
	threshold float64 // ≥ 0: a DefaultThresholder
}

func (fixedScorer) Name() string { return "fixed" }

func (f fixedScorer) Score(context.Context, string, *Document) (*Scores, error) {
	return f.scores, f.err
}

type thresholdScorer struct{ fixedScorer }

func (t thresholdScorer) DefaultThreshold() float64 { return t.threshold }

// TestNewScorerContract: New refuses a nil Scorer and a default threshold
// outside [0,1]; a Scorer that returns the wrong number of scores, a score
// outside [0,1] or NaN fails the call with ErrScorer; its error is wrapped.
func TestNewScorerContract(t *testing.T) {
	ctx := context.Background()
	text := "a\nb\nc\n"
	_, err := New(nil)
	require.ErrorIs(t, err, ErrOption)
	_, err = New(thresholdScorer{fixedScorer{threshold: 2}})
	require.ErrorIs(t, err, ErrScorer)

	bad := []struct {
		name string
		s    *Scores
	}{
		{"nil scores", nil},
		{"too few", &Scores{Lines: []float64{1, 1}}},
		{"too many", &Scores{Lines: []float64{1, 1, 1, 1}}},
		{"negative", &Scores{Lines: []float64{1, -0.1, 0}}},
		{"above one", &Scores{Lines: []float64{1, 1.5, 0}}},
		{"NaN", &Scores{Lines: []float64{1, math.NaN(), 0}}},
		{"NaN document", &Scores{Lines: []float64{1, 0, 0}, Doc: math.NaN()}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(fixedScorer{scores: tc.s}, WithMinInputTokens(0))
			require.NoError(t, err)
			_, err = p.Prune(ctx, "q", text)
			require.ErrorIs(t, err, ErrScorer)
		})
	}
	p, err := New(fixedScorer{err: context.DeadlineExceeded}, WithMinInputTokens(0))
	require.NoError(t, err)
	_, err = p.Prune(ctx, "q", text)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "scorer fixed")
}

// TestNewScorerDecides: a user's scores go through the threshold (its
// DefaultThreshold, else 0.5, WithThreshold over both) and the budgets like
// the built-ins', and Result names the scorer.
func TestNewScorerDecides(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	scores := &Scores{Doc: 0.7}
	for i := range 40 {
		b.WriteString("value = compute_something_long(argument_number_" + strings.Repeat("x", i%7) + ")\n")
		scores.Lines = append(scores.Lines, float64(i%10)/10)
	}
	text := b.String()
	kept := func(p *Pruner) int {
		res, err := p.Prune(ctx, "q", text)
		require.NoError(t, err)
		checkInvariants(t, text, res)
		assert.Equal(t, "fixed", res.Scorer)
		assert.Equal(t, 0.7, res.Score)
		n := 0
		for _, l := range res.Lines {
			if l.Kept && l.Reason == ReasonModel {
				n++
			}
		}
		return n
	}
	p, err := New(fixedScorer{scores: scores}, WithMinInputTokens(0), WithRepair(false))
	require.NoError(t, err)
	assert.Equal(t, 20, kept(p), "scores 0.5-0.9 at the default 0.5")
	q, err := New(thresholdScorer{fixedScorer{scores: scores, threshold: 0.8}}, WithMinInputTokens(0), WithRepair(false))
	require.NoError(t, err)
	assert.Equal(t, 8, kept(q), "the scorer's default threshold")
	q, err = q.With(WithThreshold(0.9))
	require.NoError(t, err)
	assert.Equal(t, 4, kept(q), "WithThreshold over the scorer's default")
	q, err = p.With(WithLineBudget(0.25))
	require.NoError(t, err)
	res, err := q.Prune(ctx, "q", text)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(res.KeptLines())+len(res.Placeholders), 10, "a line budget counts placeholders")
	for _, n := range res.KeptLines() {
		assert.GreaterOrEqual(t, scores.Lines[n-1], 0.8, "a budget takes the best lines first")
	}
}
