package pruner

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/syntax"
)

// The scorer's relevance judgement decides off-topic texts (below the
// minimum) and, between the minimum and relevanceFull, how much of the
// threshold's mass is withheld.
func TestJudgeRelevance(t *testing.T) {
	base := tinyPruner(t)
	off, err := base.With(WithMinRelevance(0))
	require.NoError(t, err)
	strict, err := base.With(WithMinRelevance(0.2))
	require.NoError(t, err)
	tests := []struct {
		name     string
		p        *Pruner
		judged   bool
		prob     float64
		offTopic bool
		withheld float64
	}{
		{"not judged", base, false, 0, false, 0},
		{"off-topic", base, true, 0.05, true, 0},
		{"doubtful", base, true, 0.15, false, 0.5},
		{"doubtful, near full", base, true, 0.27, false, 0.1},
		{"relevant", base, true, 0.3, false, 0},
		{"very relevant", base, true, 0.9, false, 0},
		{"judgement off", off, true, 0.05, false, 0},
		{"caller's minimum", strict, true, 0.15, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := &tokenScores{Judged: tc.judged, Relevance: tc.prob, RelevanceMin: 0.11}
			v, err := tc.p.judgeRelevance(context.Background(), ts)
			require.NoError(t, err)
			assert.Equal(t, tc.offTopic, v.offTopic)
			assert.InDelta(t, tc.withheld, v.withheld, 1e-9)
			assert.Equal(t, v.offTopic || v.withheld > 0, v.note != "", v.note)
		})
	}
}

// A doubtful text keeps less of its ranking than a relevant one, and says
// so; the lines it keeps are the best ones.
func TestThresholdWithholdsDoubtfulMass(t *testing.T) {
	p := tinyPruner(t)
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "log line %d: something happened in step %d\n", i, i)
	}
	text := b.String()
	lines := chunk.SplitLines(text)
	scores := make([]float64, len(lines))
	covered := make([]bool, len(lines))
	for i := range scores {
		// Nucleus scores of a flat ranking: line i has i/n of the mass
		// above it.
		scores[i] = 1 - float64(i)/float64(len(lines))
		covered[i] = true
	}
	tokCost, err := p.lineTokens(context.Background(), text, lines)
	require.NoError(t, err)
	f := &folder{p: p, text: text, lines: lines, lang: syntax.Text, tokCost: tokCost}
	kept := func(v relevanceVerdict) (int, []string) {
		fo, err := f.thresholded(context.Background(), scores, covered, make([]bool, len(lines)), v, 1<<20)
		require.NoError(t, err)
		n := 0
		for i, k := range fo.keep {
			if k {
				n++
				assert.Equal(t, i+1, n, "the kept lines are the best ones (a prefix here)")
			}
		}
		return n, fo.notes
	}
	full, notes := kept(relevanceVerdict{judged: true, prob: 0.9})
	assert.Empty(t, notes)
	half, notes := kept(relevanceVerdict{judged: true, prob: 0.15, withheld: 0.5, note: "doubtful"})
	assert.Contains(t, notes, "doubtful")
	assert.Greater(t, full, 0)
	assert.Less(t, half, full)
	assert.InDelta(t, float64(full)/2, float64(half), 2)
}

// A window that starts and ends inside docstrings does not parse, and
// repair then asks for more than a line budget allows: the best lines are
// kept unrepaired, within the budget, never folded away whole. (Dev
// python cases kept 0 lines: unfolding repaired the unrepaired selection
// back over the budget, and the budget loop gave up.)
func TestUnparsableWindowKeepsLinesUnderBudget(t *testing.T) {
	b, err := os.ReadFile("testdata/docstring_window.py")
	require.NoError(t, err)
	text := string(b)
	p, err := Load(context.Background(), "", WithLineBudget(0.2))
	require.NoError(t, err)
	res, err := p.Prune(context.Background(), "Added note on send_file security.", text)
	require.NoError(t, err)
	checkInvariants(t, text, res)
	n := len(res.Lines)
	assert.Greater(t, len(res.KeptLines()), 0, "notes: %v", res.Notes)
	assert.LessOrEqual(t, len(res.KeptLines())+len(res.Placeholders), int(math.Round(0.2*float64(n))))
	assert.Contains(t, res.Text, "def send_file(filename, mimetype=None):")
}
