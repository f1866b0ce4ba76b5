package linemodel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nucleusByEnumeration computes the scores NucleusScores promises directly
// from their definition: a line's score is 1 minus the share, among the
// best min(n, nucleusLines) ranked lines, of the lines ranked above it.
func nucleusByEnumeration(rank []float32, skip []bool, temp float64) []float64 {
	type line struct {
		i int
		r float64
	}
	var ls []line
	for i, r := range rank {
		if !skip[i] {
			ls = append(ls, line{i, float64(r)})
		}
	}
	slices.SortStableFunc(ls, func(a, b line) int {
		switch {
		case a.r > b.r:
			return -1
		case a.r < b.r:
			return 1
		}
		return 0
	})
	best := ls[0].r
	k := min(len(ls), nucleusLines)
	mass := 0.0
	for _, l := range ls[:k] {
		mass += math.Exp((l.r - best) / temp)
	}
	out := make([]float64, len(rank))
	above := 0.0
	for _, l := range ls {
		out[l.i] = 1 - above/mass
		above += math.Exp((l.r - best) / temp)
	}
	return out
}

// TestNucleusScoresLength: the threshold's nucleus is measured among the
// best nucleusLines lines, so a flat ranking over a long text keeps at
// most that many lines at any threshold above 1e-9, while a text within
// the bound scores as the plain nucleus; the scores never increase down
// the ranking, so budgets still fill in rank order.
func TestNucleusScoresLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{10, nucleusLines, nucleusLines + 1, 5 * nucleusLines, 40 * nucleusLines} {
		rank := make([]float32, n)
		skip := make([]bool, n)
		for i := range rank {
			rank[i] = float32(rng.NormFloat64() * 0.3) // flat: nothing stands out
			skip[i] = i%7 == 3
		}
		scores, order, _, _ := NucleusScores(rank, skip, 1.25)
		want := nucleusByEnumeration(rank, skip, 1.25)
		kept := 0
		for j, i := range order {
			if j > 0 {
				require.LessOrEqual(t, scores[i], scores[order[j-1]], "n=%d: scores rise down the ranking at %d", n, j)
			}
			require.Greater(t, scores[i], 0.0)
			if w := want[i]; w > 0 {
				assert.InDelta(t, w, scores[i], 1e-9, "n=%d, rank %d", n, j)
			} else {
				assert.LessOrEqual(t, scores[i], 1e-9, "n=%d: a line past the nucleus's lines scores at most 1e-9", n)
			}
			if scores[i] >= 0.2 {
				kept++
			}
		}
		assert.LessOrEqual(t, kept, min(len(order), nucleusLines), "n=%d", n)
		if len(order) > nucleusLines {
			assert.Greater(t, kept, nucleusLines/2, "n=%d: a flat ranking keeps most of the nucleus's lines", n)
		}
	}
}
