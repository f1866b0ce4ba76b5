package chunk

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSweepMatchesPaint checks that the fast sweep and the general painting
// agree bit for bit on sorted, disjoint spans, including spans that start
// inside multi-byte characters and cross line terminators.
func TestSweepMatchesPaint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "é", "😀", "\n", "\r\n", "\r", " ", "\xff", "\xe2\x82", "€"}
	compared := 0
	for iter := range 300 {
		var text string
		for range rng.IntN(60) {
			text += alphabet[rng.IntN(len(alphabet))]
		}
		var spans []ScoredSpan
		for b := 0; b < len(text); {
			e := b + 1 + rng.IntN(5)
			spans = append(spans, ScoredSpan{Start: b, End: e, Score: rng.Float64()*1.4 - 0.2})
			b = e + rng.IntN(3)
		}
		lines := SplitLines(text)
		if !sortedDisjoint(text, lines, spans) {
			// Spans cut inside a character share it: only painting applies.
			continue
		}
		compared++
		sweepSums, sweepCounts := make([]float64, len(lines)), make([]int, len(lines))
		paintSums, paintCounts := make([]float64, len(lines)), make([]int, len(lines))
		sweepLineScores(text, lines, spans, sweepSums, sweepCounts)
		paintLineScores(text, lines, spans, paintSums, paintCounts)
		require.Equal(t, paintCounts, sweepCounts, "iteration %d text %q", iter, text)
		require.Equal(t, paintSums, sweepSums, "iteration %d text %q", iter, text)
	}
	require.Greater(t, compared, 50, "too few inputs took the sweep path")
}

func TestSortedDisjoint(t *testing.T) {
	text := "ab€\ncd"
	lines := SplitLines(text)
	tests := []struct {
		name  string
		lines []Line
		spans []ScoredSpan
		want  bool
	}{
		{"sorted", lines, []ScoredSpan{{0, 1, 1}, {1, 2, 1}, {2, 5, 1}, {6, 8, 0}}, true},
		{"gaps and skipped spans", lines, []ScoredSpan{{0, 1, 1}, {5, 4, 1}, {3, 5, 1}}, true},
		{"overlap", lines, []ScoredSpan{{0, 2, 1}, {1, 3, 1}}, false},
		{"unsorted", lines, []ScoredSpan{{3, 5, 1}, {0, 2, 1}}, false},
		{"halves of one character", lines, []ScoredSpan{{2, 4, 1}, {4, 5, 1}}, false},
		{"line past the text", []Line{{Number: 1, Start: 0, End: 99, TermEnd: 99}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, sortedDisjoint(text, tt.lines, tt.spans))
		})
	}
}
