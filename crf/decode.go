package crf

import "math"

// Viterbi decodes the best tag path exactly as the reference
// `_viterbi_decode` (and therefore the LaMR fork at inference) does, i.e.
// with the [AsCoded] convention Transitions[prev][next]. It returns one tag
// per position and the best valid-prefix score. Ties pick the lowest tag.
// Masked steps keep their scores but still record back-pointers, so with a
// mask the valid prefix of the path may differ from the best valid-prefix
// path (see the package documentation).
func Viterbi[F Float](p Params, em Emissions[F], mask []bool) ([]int, float64, error) {
	var w Workspace
	return DecodeInto(&w, nil, p, em, mask, AsCoded)
}

// ViterbiMAP decodes with the [Training] convention Transitions[next][prev]:
// with an all-valid mask it returns the true maximum a posteriori path of
// the distribution the CRF was trained to model, and its score. Masks are
// handled as in [Viterbi].
func ViterbiMAP[F Float](p Params, em Emissions[F], mask []bool) ([]int, float64, error) {
	var w Workspace
	return DecodeInto(&w, nil, p, em, mask, Training)
}

// DecodeInto runs Viterbi decoding with the given convention, writing the
// path into dst (reallocated when too small) and using the scratch buffers
// of w, so that repeated calls allocate nothing. It returns dst[:n] and the
// best score.
func DecodeInto[F Float](w *Workspace, dst []int, p Params, em Emissions[F], mask []bool, conv Convention) ([]int, float64, error) {
	n, t, err := check(p, em, mask)
	if err != nil {
		return nil, 0, err
	}
	if cap(dst) < n {
		dst = make([]int, n)
	}
	dst = dst[:n]
	w.prepare(n, t, true)
	tr := w.tr
	p.flatTransitions(tr, conv)
	score, nxt, bp := w.cur, w.nxt, w.bp
	for j := range t {
		score[j] = p.Start[j] + em.At(0, j)
	}
	if t == 2 {
		viterbi2(score, nxt, tr, bp, em.Data, mask, n)
	} else {
		for i := 1; i < n; i++ {
			row := em.Data[i*t : (i+1)*t]
			bpi := bp[i*t : (i+1)*t]
			for j := range t {
				trj := tr[j*t : (j+1)*t]
				best, arg := score[0]+trj[0], 0
				for q := 1; q < t; q++ {
					if v := score[q] + trj[q]; v > best {
						best, arg = v, q
					}
				}
				bpi[j] = int32(arg)
				nxt[j] = best + float64(row[j])
			}
			if valid(mask, i) {
				score, nxt = nxt, score
			}
		}
	}
	best, last := score[0]+p.End[0], 0
	for j := 1; j < t; j++ {
		if v := score[j] + p.End[j]; v > best {
			best, last = v, j
		}
	}
	dst[n-1] = last
	for i := n - 1; i > 0; i-- {
		dst[i-1] = int(bp[i*t+dst[i]])
	}
	return dst, best, nil
}

// viterbi2 is the forward sweep of DecodeInto unrolled for two tags, the
// case of every published checkpoint. It leaves the final scores in score.
func viterbi2[F Float](score, nxt, tr []float64, bp []int32, data []F, mask []bool, n int) {
	s0, s1 := score[0], score[1]
	t00, t01, t10, t11 := tr[0], tr[1], tr[2], tr[3]
	for i := 1; i < n; i++ {
		e0, e1 := float64(data[2*i]), float64(data[2*i+1])
		a, b := s0+t00, s1+t01
		var n0, n1 float64
		if b > a {
			n0, bp[2*i] = b, 1
		} else {
			n0, bp[2*i] = a, 0
		}
		a, b = s0+t10, s1+t11
		if b > a {
			n1, bp[2*i+1] = b, 1
		} else {
			n1, bp[2*i+1] = a, 0
		}
		if mask == nil || mask[i] {
			s0, s1 = n0+e0, n1+e1
		}
	}
	score[0], score[1] = s0, s1
	_ = nxt
}

// DecisionMargin returns the smallest gap between the best and the
// second-best candidate over every maximum Viterbi takes with the given
// convention — each step's choice of predecessor for each tag, and the final
// choice of last tag — i.e. how far the inputs are from a tie that could
// flip the decoded path. Masked steps count too, since the decoder records
// their back-pointers. It is +Inf for a single tag.
func DecisionMargin[F Float](p Params, em Emissions[F], mask []bool, conv Convention) (float64, error) {
	n, t, err := check(p, em, mask)
	if err != nil {
		return 0, err
	}
	if t < 2 {
		return math.Inf(1), nil
	}
	var w Workspace
	w.prepare(n, t, false)
	tr := w.tr
	p.flatTransitions(tr, conv)
	score, nxt := w.cur, w.nxt
	for j := range t {
		score[j] = p.Start[j] + em.At(0, j)
	}
	margin := math.Inf(1)
	gap := func(get func(q int) float64) float64 {
		b1, b2 := math.Inf(-1), math.Inf(-1)
		for q := range t {
			v := get(q)
			if v > b1 {
				b1, b2 = v, b1
			} else if v > b2 {
				b2 = v
			}
		}
		margin = min(margin, b1-b2)
		return b1
	}
	for i := 1; i < n; i++ {
		for j := range t {
			trj := tr[j*t : (j+1)*t]
			nxt[j] = gap(func(q int) float64 { return score[q] + trj[q] }) + em.At(i, j)
		}
		if valid(mask, i) {
			score, nxt = nxt, score
		}
	}
	gap(func(q int) float64 { return score[q] + p.End[q] })
	return margin, nil
}

// BestPathGap returns the score of the best tag path minus that of the
// second-best one under the given convention, over the valid positions
// (masked steps are skipped, as in the forward scores): how much the total
// score of some other path would have to move for the decoded path to
// change. It runs a 2-best Viterbi in O(n·T²) time and is +Inf when only one
// path exists (one tag).
func BestPathGap[F Float](p Params, em Emissions[F], mask []bool, conv Convention) (float64, error) {
	n, t, err := check(p, em, mask)
	if err != nil {
		return 0, err
	}
	tr := make([]float64, t*t)
	p.flatTransitions(tr, conv)
	// best[j], second[j]: the two best scores of distinct paths ending in j.
	best := make([]float64, t)
	second := make([]float64, t)
	nb := make([]float64, t)
	ns := make([]float64, t)
	for j := range t {
		best[j] = p.Start[j] + em.At(0, j)
		second[j] = math.Inf(-1)
	}
	for i := 1; i < n; i++ {
		if !valid(mask, i) {
			continue
		}
		for j := range t {
			b1, b2 := math.Inf(-1), math.Inf(-1)
			for q := range t {
				b1, b2 = top2(b1, b2, best[q]+tr[j*t+q])
				b1, b2 = top2(b1, b2, second[q]+tr[j*t+q])
			}
			e := em.At(i, j)
			nb[j], ns[j] = b1+e, b2+e
		}
		best, nb = nb, best
		second, ns = ns, second
	}
	b1, b2 := math.Inf(-1), math.Inf(-1)
	for j := range t {
		b1, b2 = top2(b1, b2, best[j]+p.End[j])
		b1, b2 = top2(b1, b2, second[j]+p.End[j])
	}
	return b1 - b2, nil
}

// top2 inserts v into the pair (b1 ≥ b2) of the two largest values.
func top2(b1, b2, v float64) (float64, float64) {
	if v > b1 {
		return v, b1
	}
	if v > b2 {
		return b1, v
	}
	return b1, b2
}
