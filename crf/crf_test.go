package crf

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type goldenCase struct {
	ID                int         `json:"id"`
	Length            int         `json:"length"`
	ValidLength       int         `json:"valid_length"`
	Emissions         [][]float64 `json:"emissions"`
	Transitions       [][]float64 `json:"transitions"`
	Start             []float64   `json:"start_transitions"`
	End               []float64   `json:"end_transitions"`
	Mask              []bool      `json:"mask"`
	Tags              []int       `json:"tags"`
	LogPartition      float64     `json:"log_partition"`
	GoldScore         float64     `json:"gold_score"`
	NLL               float64     `json:"nll"`
	NLLNormalized     float64     `json:"nll_normalized"`
	ViterbiPath       []int       `json:"viterbi_path"`
	ViterbiScore      float64     `json:"viterbi_score"`
	Gap               float64     `json:"viterbi_best_second_gap"`
	BruteValidPrefix  []int       `json:"viterbi_path_bruteforce_valid_prefix"`
	PrefixMatches     bool        `json:"viterbi_prefix_matches_bruteforce"`
	TrainPath         []int       `json:"viterbi_training_convention_path"`
	TrainScore        float64     `json:"viterbi_training_convention_score"`
	TrainBrutePrefix  []int       `json:"viterbi_training_convention_bruteforce_valid_prefix"`
	ConventionsDiffer bool        `json:"conventions_differ"`
	ArgmaxPath        []int       `json:"argmax_path"`
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	raw, err := os.ReadFile("../testdata/crf_golden.json")
	require.NoError(t, err)
	var g struct {
		Cases []goldenCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	require.Len(t, g.Cases, 20)
	return g.Cases
}

func (c goldenCase) params(t *testing.T) Params {
	p := Params{Transitions: c.Transitions, Start: c.Start, End: c.End}
	require.NoError(t, p.Validate())
	return p
}

func TestGolden(t *testing.T) {
	const atol = 1e-9
	for _, c := range loadGolden(t) {
		p := c.params(t)
		em64, err := EmissionsFromRows(c.Emissions)
		require.NoError(t, err)
		// The inputs are float32-representable, so the float32 path must give
		// the same float64 results.
		rows32 := make([][]float32, len(c.Emissions))
		for i, r := range c.Emissions {
			for _, v := range r {
				require.Equal(t, v, float64(float32(v)))
				rows32[i] = append(rows32[i], float32(v))
			}
		}
		em32, err := EmissionsFromRows(rows32)
		require.NoError(t, err)

		t.Run("", func(t *testing.T) {
			assert.Equal(t, c.ValidLength, ValidLength(c.Mask, c.Length), "case %d", c.ID)
			for name, em := range map[string]any{"f64": em64, "f32": em32} {
				var (
					logZ, gold, nll, vs, ts, gap float64
					vp, tp                       []int
				)
				switch e := em.(type) {
				case Emissions[float64]:
					logZ, _ = LogPartition(p, e, c.Mask)
					gold, _ = GoldScore(p, e, c.Tags, c.Mask)
					nll, _ = NLL(p, e, c.Tags, c.Mask)
					vp, vs, _ = Viterbi(p, e, c.Mask)
					tp, ts, _ = ViterbiMAP(p, e, c.Mask)
					gap, _ = BestPathGap(p, e, c.Mask, AsCoded)
				case Emissions[float32]:
					logZ, _ = LogPartition(p, e, c.Mask)
					gold, _ = GoldScore(p, e, c.Tags, c.Mask)
					nll, _ = NLL(p, e, c.Tags, c.Mask)
					vp, vs, _ = Viterbi(p, e, c.Mask)
					tp, ts, _ = ViterbiMAP(p, e, c.Mask)
					gap, _ = BestPathGap(p, e, c.Mask, AsCoded)
				}
				assert.InDelta(t, c.LogPartition, logZ, atol, "case %d %s log_partition", c.ID, name)
				assert.InDelta(t, c.GoldScore, gold, atol, "case %d %s gold_score", c.ID, name)
				assert.InDelta(t, c.NLLNormalized, nll, atol, "case %d %s nll_normalized", c.ID, name)
				assert.InDelta(t, c.NLL, nll*float64(max(1, c.ValidLength)), atol, "case %d %s nll", c.ID, name)
				assert.Equal(t, c.ViterbiPath, vp, "case %d %s viterbi_path", c.ID, name)
				assert.InDelta(t, c.ViterbiScore, vs, atol, "case %d %s viterbi_score", c.ID, name)
				assert.Equal(t, c.TrainPath, tp, "case %d %s training path", c.ID, name)
				assert.InDelta(t, c.TrainScore, ts, atol, "case %d %s training score", c.ID, name)
				assert.InDelta(t, c.Gap, gap, atol, "case %d %s best/second gap", c.ID, name)
				// The golden's own brute-force fields agree with our brute force.
				bp, bs := bruteMAP(p, em64, c.ValidLength, AsCoded)
				assert.Equal(t, c.BruteValidPrefix, bp, "case %d brute as-coded", c.ID)
				assert.InDelta(t, c.ViterbiScore, bs, atol, "case %d brute as-coded score", c.ID)
				assert.Equal(t, c.PrefixMatches, equalInts(vp[:c.ValidLength], bp), "case %d prefix quirk", c.ID)
				tbp, tbs := bruteMAP(p, em64, c.ValidLength, Training)
				assert.Equal(t, c.TrainBrutePrefix, tbp, "case %d brute training", c.ID)
				assert.InDelta(t, c.TrainScore, tbs, atol, "case %d brute training score", c.ID)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// pathScore scores a complete path over the first k positions under conv.
func pathScore[F Float](p Params, em Emissions[F], path []int, conv Convention) float64 {
	s := p.Start[path[0]] + em.At(0, path[0])
	for i := 1; i < len(path); i++ {
		tr := p.Transitions[path[i]][path[i-1]]
		if conv == AsCoded {
			tr = p.Transitions[path[i-1]][path[i]]
		}
		s += tr + em.At(i, path[i])
	}
	return s + p.End[path[len(path)-1]]
}

// forEachPath calls fn for every tag path of length k (fn must not keep it).
func forEachPath(k, t int, fn func(path []int)) {
	path := make([]int, k)
	for {
		fn(path)
		i := k - 1
		for i >= 0 && path[i] == t-1 {
			path[i] = 0
			i--
		}
		if i < 0 {
			return
		}
		path[i]++
	}
}

// bruteMAP enumerates every path over the first k positions and returns the
// best one (first in lexicographic order on ties) and its score.
func bruteMAP[F Float](p Params, em Emissions[F], k int, conv Convention) ([]int, float64) {
	var best []int
	bestScore := math.Inf(-1)
	forEachPath(k, p.NumTags(), func(path []int) {
		if s := pathScore(p, em, path, conv); s > bestScore {
			bestScore, best = s, append([]int(nil), path...)
		}
	})
	return best, bestScore
}

// bruteGap returns the best minus the second-best path score over the first
// k positions (+Inf with a single path).
func bruteGap[F Float](p Params, em Emissions[F], k int, conv Convention) float64 {
	b1, b2 := math.Inf(-1), math.Inf(-1)
	forEachPath(k, p.NumTags(), func(path []int) { b1, b2 = top2(b1, b2, pathScore(p, em, path, conv)) })
	return b1 - b2
}

// bruteMarginals enumerates every path over the first k positions and returns
// log Z and the posterior of each tag at each of the k positions.
func bruteMarginals[F Float](p Params, em Emissions[F], k int) (float64, [][]float64) {
	t := p.NumTags()
	var scores []float64
	forEachPath(k, t, func(path []int) { scores = append(scores, pathScore(p, em, path, Training)) })
	logZ := logSumExp(scores)
	marg := make([][]float64, k)
	for i := range marg {
		marg[i] = make([]float64, t)
	}
	idx := 0
	forEachPath(k, t, func(path []int) {
		w := math.Exp(scores[idx] - logZ)
		idx++
		for i, y := range path {
			marg[i][y] += w
		}
	})
	return logZ, marg
}

func randomParams(r *rand.Rand, t int, scale float64) Params {
	p := Params{Transitions: make([][]float64, t), Start: make([]float64, t), End: make([]float64, t)}
	for j := range t {
		p.Transitions[j] = make([]float64, t)
		for q := range t {
			p.Transitions[j][q] = scale * r.NormFloat64()
		}
		p.Start[j] = scale * r.NormFloat64()
		p.End[j] = scale * r.NormFloat64()
	}
	return p
}

func randomEmissions(r *rand.Rand, n, t int, scale float64) Emissions[float32] {
	data := make([]float32, n*t)
	for i := range data {
		data[i] = float32(scale * r.NormFloat64())
	}
	return Emissions[float32]{Data: data, NumTags: t}
}

func rightPadMask(n, k int) []bool {
	m := make([]bool, n)
	for i := range k {
		m[i] = true
	}
	return m
}

func TestBruteForceProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const atol = 1e-9
	for _, numTags := range []int{1, 2, 3} {
		for n := 1; n <= 8; n++ {
			for trial := range 4 {
				p := randomParams(r, numTags, 1.5)
				em := randomEmissions(r, n, numTags, 2)
				k := 1 + r.IntN(n) // valid length for the padded variant
				mask := rightPadMask(n, k)

				logZ, err := LogPartition(p, em, nil)
				require.NoError(t, err)
				bz, bm := bruteMarginals(p, em, n)
				assert.InDelta(t, bz, logZ, atol, "T=%d n=%d trial=%d logZ", numTags, n, trial)

				marg, err := Marginals(p, em, nil)
				require.NoError(t, err)
				for i := range n {
					assert.InDelta(t, 1, rowSum(marg[i]), 1e-12)
					assert.InDeltaSlice(t, bm[i], marg[i], 1e-9, "T=%d n=%d i=%d marginals", numTags, n, i)
				}

				for _, conv := range []Convention{AsCoded, Training} {
					var w Workspace
					path, score, err := DecodeInto(&w, nil, p, em, nil, conv)
					require.NoError(t, err)
					bp, bs := bruteMAP(p, em, n, conv)
					assert.Equal(t, bp, path, "T=%d n=%d %v path", numTags, n, conv)
					assert.InDelta(t, bs, score, atol)
					assert.InDelta(t, pathScore(p, em, path, conv), score, atol)
					gap, err := BestPathGap(p, em, nil, conv)
					require.NoError(t, err)
					assert.InDelta(t, bruteGap(p, em, n, conv), gap, atol, "T=%d n=%d %v gap", numTags, n, conv)
					// Every local max decision lies on some path comparison, so the
					// smallest local margin never exceeds the best/second-best gap.
					margin, err := DecisionMargin(p, em, nil, conv)
					require.NoError(t, err)
					assert.Positive(t, margin)
					assert.LessOrEqual(t, margin, gap+1e-12)
					if n == 1 {
						assert.InDelta(t, gap, margin, atol)
					}

					// With padding the score is the best valid-prefix score; the
					// path is the length-n as-coded path.
					mpath, mscore, err := DecodeInto(&w, nil, p, em, mask, conv)
					require.NoError(t, err)
					require.Len(t, mpath, n)
					_, bks := bruteMAP(p, em, k, conv)
					assert.InDelta(t, bks, mscore, atol, "T=%d n=%d k=%d %v masked score", numTags, n, k, conv)
					mgap, err := BestPathGap(p, em, mask, conv)
					require.NoError(t, err)
					assert.InDelta(t, bruteGap(p, em, k, conv), mgap, atol)
				}

				// Padded log-partition and marginals equal brute force over the prefix.
				logZk, err := LogPartition(p, em, mask)
				require.NoError(t, err)
				bzk, bmk := bruteMarginals(p, em, k)
				assert.InDelta(t, bzk, logZk, atol)
				mmarg, err := Marginals(p, em, mask)
				require.NoError(t, err)
				for i := range n {
					if i < k {
						assert.InDeltaSlice(t, bmk[i], mmarg[i], 1e-9)
					} else {
						assert.Equal(t, make([]float64, numTags), mmarg[i])
					}
				}

				// NLL is non-negative and consistent with the brute-force
				// probability of a random gold path over the valid prefix.
				tags := make([]int, n)
				for i := range tags {
					tags[i] = r.IntN(numTags)
				}
				nll, err := NLL(p, em, tags, mask)
				require.NoError(t, err)
				want := (bzk - pathScore(p, em, tags[:k], Training)) / float64(k)
				assert.InDelta(t, want, nll, atol)
				assert.GreaterOrEqual(t, nll, -atol)
			}
		}
	}
}

func rowSum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

func TestConventionsAreTransposes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		p := randomParams(r, 3, 1)
		em := randomEmissions(r, 6, 3, 1)
		q := Params{Transitions: make([][]float64, 3), Start: p.Start, End: p.End}
		for j := range 3 {
			q.Transitions[j] = make([]float64, 3)
			for k := range 3 {
				q.Transitions[j][k] = p.Transitions[k][j]
			}
		}
		a, as, err := Viterbi(p, em, nil)
		require.NoError(t, err)
		b, bs, err := ViterbiMAP(q, em, nil)
		require.NoError(t, err)
		assert.Equal(t, a, b)
		assert.Equal(t, as, bs)
	}
}

func TestTiesPickLowestIndex(t *testing.T) {
	p := Params{
		Transitions: [][]float64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
		Start:       []float64{0, 0, 0},
		End:         []float64{0, 0, 0},
	}
	em, err := NewEmissions(make([]float64, 5*3), 3)
	require.NoError(t, err)
	path, score, err := Viterbi(p, em, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 0, 0, 0}, path)
	assert.Zero(t, score)
	margin, err := DecisionMargin(p, em, nil, AsCoded)
	require.NoError(t, err)
	assert.Zero(t, margin)

	p2 := Params{Transitions: [][]float64{{0, 0}, {0, 0}}, Start: []float64{0, 0}, End: []float64{0, 0}}
	em2, err := NewEmissions([]float32{1, 1, 0, 0, 2, 2}, 2)
	require.NoError(t, err)
	path, _, err = Viterbi(p2, em2, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 0}, path)
}

func TestMarginalsLongSequenceStable(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 100_000
	for _, numTags := range []int{2, 3} {
		p := randomParams(r, numTags, 5)
		em := randomEmissions(r, n, numTags, 50)
		logZ, err := LogPartition(p, em, nil)
		require.NoError(t, err)
		require.False(t, math.IsNaN(logZ) || math.IsInf(logZ, 0), "logZ = %v", logZ)
		_, vscore, err := ViterbiMAP(p, em, nil)
		require.NoError(t, err)
		// log Z is bounded by the best path score and that plus n·log T.
		assert.GreaterOrEqual(t, logZ, vscore-1e-6*math.Abs(vscore))
		assert.LessOrEqual(t, logZ, vscore+float64(n)*math.Log(float64(numTags))+1e-6*math.Abs(vscore))

		marg, err := Marginals(p, em, nil)
		require.NoError(t, err)
		require.Len(t, marg, n)
		for i, row := range marg {
			s := 0.0
			for _, v := range row {
				require.True(t, v >= 0 && v <= 1, "position %d marginal %v", i, v)
				s += v
			}
			require.InDelta(t, 1, s, 1e-9, "position %d", i)
		}
	}
}

// The marginals of a long sequence agree with a windowed brute force where
// the chain is cut by a position whose emissions force a single tag.
func TestMarginalsMatchDecodeWhenPeaked(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	p := randomParams(r, 2, 1)
	em := randomEmissions(r, 5000, 2, 60)
	marg, err := Marginals(p, em, nil)
	require.NoError(t, err)
	path, _, err := ViterbiMAP(p, em, nil)
	require.NoError(t, err)
	agree := 0
	for i, row := range marg {
		if row[path[i]] >= 0.5 {
			agree++
		}
	}
	// With emissions this peaked the posterior mode and the MAP path agree
	// almost everywhere.
	assert.Greater(t, agree, 4950)
}

func TestErrors(t *testing.T) {
	p, err := NewParams([]float32{1, 2, 3, 4}, []float32{0, 1}, []float32{2, 3}, 2)
	require.NoError(t, err)
	assert.Equal(t, [][]float64{{1, 2}, {3, 4}}, p.Transitions)
	assert.Equal(t, 2, p.NumTags())

	_, err = NewParams([]float32{1, 2, 3}, []float32{0, 1}, []float32{2, 3}, 2)
	assert.ErrorIs(t, err, ErrShape)
	_, err = NewParams(nil, nil, nil, 0)
	assert.ErrorIs(t, err, ErrShape)
	_, err = NewEmissions([]float32{1, 2, 3}, 2)
	assert.ErrorIs(t, err, ErrShape)
	_, err = NewEmissions([]float32{}, 2)
	assert.ErrorIs(t, err, ErrEmpty)
	_, err = EmissionsFromRows([][]float32{{1, 2}, {3}})
	assert.ErrorIs(t, err, ErrShape)

	em, err := NewEmissions([]float32{1, 2, 3, 4, 5, 6}, 2)
	require.NoError(t, err)
	_, _, err = Viterbi(p, em, []bool{true})
	assert.ErrorIs(t, err, ErrShape)
	_, err = GoldScore(p, em, []int{0, 1, 2}, nil)
	assert.ErrorIs(t, err, ErrTag)
	_, err = NLL(p, em, []int{0, 1}, nil)
	assert.ErrorIs(t, err, ErrShape)
	em3, err := NewEmissions([]float32{1, 2, 3}, 3)
	require.NoError(t, err)
	_, err = Marginals(p, em3, nil)
	assert.ErrorIs(t, err, ErrShape)
	_, err = LogPartition(Params{Transitions: [][]float64{{1}}, Start: []float64{0, 0}, End: []float64{0, 0}}, em, nil)
	assert.ErrorIs(t, err, ErrShape)
}

func TestWorkspaceReuseDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	p := randomParams(r, 2, 1)
	em := randomEmissions(r, 1000, 2, 2)
	var w Workspace
	dst := make([]int, 1000)
	marg := make([]float64, 2000)
	_, _, err := DecodeInto(&w, dst, p, em, nil, AsCoded)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(10, func() {
		_, _, _ = DecodeInto(&w, dst, p, em, nil, AsCoded)
		_, _ = MarginalsInto(&w, marg, p, em, nil)
		_, _ = LogPartitionWith(&w, p, em, nil)
	})
	assert.Zero(t, allocs)
}

// The scaled fast path and the all-log-space path agree; and inputs whose
// scaled vectors underflow fall back to log space and stay exact.
func TestMarginalsScaledVersusLog(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, numTags := range []int{1, 2, 3, 5} {
		for trial := range 10 {
			n := 1 + r.IntN(300)
			p := randomParams(r, numTags, 3)
			em := randomEmissions(r, n, numTags, 20)
			var mask []bool
			if trial%2 == 1 {
				mask = rightPadMask(n, 1+r.IntN(n))
			}
			var w Workspace
			w.prepare(n, numTags, false)
			p.flatTransitions(w.tr, Training)
			fast := make([]float64, n*numTags)
			require.True(t, marginalsScaled(&w, fast, p, em, mask, n, numTags))
			slow := make([]float64, n*numTags)
			marginalsLog(&w, slow, p, em, mask, n, numTags)
			assert.InDeltaSlice(t, slow, fast, 1e-12, "T=%d trial=%d", numTags, trial)
		}
	}

	p := Params{
		Transitions: [][]float64{{0, -2000}, {-2000, 0}},
		Start:       []float64{0, -1000},
		End:         []float64{0, 0},
	}
	em, err := NewEmissions([]float64{0, 0, -900, 0, 0, 0}, 2)
	require.NoError(t, err)
	var w Workspace
	w.prepare(3, 2, false)
	p.flatTransitions(w.tr, Training)
	require.False(t, marginalsScaled(&w, make([]float64, 6), p, em, nil, 3, 2), "test input must exercise the fallback")
	marg, err := Marginals(p, em, nil)
	require.NoError(t, err)
	_, want := bruteMarginals(p, em, 3)
	for i := range want {
		assert.InDeltaSlice(t, want[i], marg[i], 1e-12)
	}
	assert.Greater(t, marg[1][0], 0.99) // the -900 emission beats the -1000 start
}

func BenchmarkMarginals(b *testing.B) {
	for _, numTags := range []int{2, 3} {
		for _, n := range []int{8 << 10, 100_000} {
			r := rand.New(rand.NewPCG(2, uint64(n)))
			p := randomParams(r, numTags, 1)
			em := randomEmissions(r, n, numTags, 3)
			b.Run(fmt.Sprintf("T=%d/n=%d/workspace", numTags, n), func(b *testing.B) {
				var w Workspace
				dst := make([]float64, n*numTags)
				b.ReportAllocs()
				for b.Loop() {
					_, _ = MarginalsInto(&w, dst, p, em, nil)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pos")
			})
		}
	}
}

func BenchmarkLogPartition(b *testing.B) {
	const n = 100_000
	r := rand.New(rand.NewPCG(3, 4))
	p := randomParams(r, 2, 1)
	em := randomEmissions(r, n, 2, 3)
	var w Workspace
	b.ReportAllocs()
	for b.Loop() {
		_, _ = LogPartitionWith(&w, p, em, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pos")
}
