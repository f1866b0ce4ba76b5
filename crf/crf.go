package crf

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors returned (wrapped) by this package.
var (
	// ErrShape reports inputs whose sizes do not agree with each other or
	// with the number of tags.
	ErrShape = errors.New("crf: shape mismatch")
	// ErrEmpty reports a sequence with no positions; the CRF is undefined
	// there.
	ErrEmpty = errors.New("crf: empty sequence")
	// ErrTag reports a gold tag outside [0, T).
	ErrTag = errors.New("crf: tag out of range")
)

// Float is the set of emission element types accepted by the plain-Go
// routines; arithmetic is always carried out in float64.
type Float interface {
	~float32 | ~float64
}

// Convention selects how a transition from tag p to tag j is read from
// [Params.Transitions]; see the package documentation.
type Convention int

const (
	// Training reads Transitions[next][prev]: the convention of the loss and
	// normaliser, hence of the distribution the CRF models.
	Training Convention = iota
	// AsCoded reads Transitions[prev][next]: the convention of the
	// reference's Viterbi decoder, used by the LaMR fork at inference.
	AsCoded
)

// String returns the convention's name.
func (c Convention) String() string {
	switch c {
	case Training:
		return "training"
	case AsCoded:
		return "as-coded"
	default:
		return fmt.Sprintf("Convention(%d)", int(c))
	}
}

// Params are the parameters of a linear-chain CRF with T tags.
type Params struct {
	// Transitions is the T×T matrix exactly as stored in the checkpoint
	// tensor `transitions`; which index is "previous" depends on the
	// [Convention] used to read it.
	Transitions [][]float64
	// Start holds the T scores of the first tag.
	Start []float64
	// End holds the T scores of the last valid tag.
	End []float64
}

// NewParams builds Params from the row-major float32 checkpoint tensors
// transitions [numTags*numTags], start_transitions and end_transitions
// [numTags]. The slices are copied.
func NewParams(trans, start, end []float32, numTags int) (Params, error) {
	if numTags < 1 {
		return Params{}, fmt.Errorf("%w: numTags = %d, want ≥ 1", ErrShape, numTags)
	}
	if len(trans) != numTags*numTags || len(start) != numTags || len(end) != numTags {
		return Params{}, fmt.Errorf("%w: got transitions %d, start %d, end %d values for %d tags",
			ErrShape, len(trans), len(start), len(end), numTags)
	}
	p := Params{
		Transitions: make([][]float64, numTags),
		Start:       make([]float64, numTags),
		End:         make([]float64, numTags),
	}
	flat := make([]float64, numTags*numTags)
	for i, v := range trans {
		flat[i] = float64(v)
	}
	for r := range numTags {
		p.Transitions[r] = flat[r*numTags : (r+1)*numTags : (r+1)*numTags]
		p.Start[r] = float64(start[r])
		p.End[r] = float64(end[r])
	}
	return p, nil
}

// NumTags returns T, the number of tags (the length of Start).
func (p Params) NumTags() int { return len(p.Start) }

// Validate checks that the transition matrix is T×T and End has T entries.
func (p Params) Validate() error {
	t := len(p.Start)
	if t < 1 {
		return fmt.Errorf("%w: no tags", ErrShape)
	}
	if len(p.End) != t || len(p.Transitions) != t {
		return fmt.Errorf("%w: start %d, end %d, transitions %d rows", ErrShape, t, len(p.End), len(p.Transitions))
	}
	for r, row := range p.Transitions {
		if len(row) != t {
			return fmt.Errorf("%w: transitions row %d has %d entries, want %d", ErrShape, r, len(row), t)
		}
	}
	return nil
}

// flatTransitions writes into dst (len T*T) the score of moving from tag p to
// tag j at dst[j*T+p], read with the given convention, so the inner loops of
// every algorithm are the same whatever the convention.
func (p Params) flatTransitions(dst []float64, conv Convention) {
	t := len(p.Start)
	for j := range t {
		for q := range t {
			if conv == AsCoded {
				dst[j*t+q] = p.Transitions[q][j]
			} else {
				dst[j*t+q] = p.Transitions[j][q]
			}
		}
	}
}

// Emissions is an n×T matrix of per-position tag scores stored row-major in
// Data (Data[i*NumTags+t] is the score of tag t at position i). It wraps the
// caller's buffer without copying.
type Emissions[F Float] struct {
	// Data holds n*NumTags scores.
	Data []F
	// NumTags is T, the row width.
	NumTags int
}

// NewEmissions wraps a flat row-major buffer of n*numTags scores without
// copying it.
func NewEmissions[F Float](data []F, numTags int) (Emissions[F], error) {
	e := Emissions[F]{Data: data, NumTags: numTags}
	if err := e.validate(); err != nil {
		return Emissions[F]{}, err
	}
	return e, nil
}

// EmissionsFromRows copies an n×T matrix of scores into a flat Emissions.
func EmissionsFromRows[F Float](rows [][]F) (Emissions[F], error) {
	if len(rows) == 0 {
		return Emissions[F]{}, ErrEmpty
	}
	t := len(rows[0])
	data := make([]F, 0, len(rows)*t)
	for i, r := range rows {
		if len(r) != t {
			return Emissions[F]{}, fmt.Errorf("%w: row %d has %d scores, want %d", ErrShape, i, len(r), t)
		}
		data = append(data, r...)
	}
	return NewEmissions(data, t)
}

// Len returns n, the number of positions.
func (e Emissions[F]) Len() int {
	if e.NumTags <= 0 {
		return 0
	}
	return len(e.Data) / e.NumTags
}

// At returns the score of tag t at position i as float64.
func (e Emissions[F]) At(i, t int) float64 { return float64(e.Data[i*e.NumTags+t]) }

func (e Emissions[F]) validate() error {
	if e.NumTags < 1 {
		return fmt.Errorf("%w: numTags = %d, want ≥ 1", ErrShape, e.NumTags)
	}
	if len(e.Data)%e.NumTags != 0 {
		return fmt.Errorf("%w: %d scores is not a multiple of %d tags", ErrShape, len(e.Data), e.NumTags)
	}
	if len(e.Data) == 0 {
		return ErrEmpty
	}
	return nil
}

// check validates the combination of parameters, emissions and mask and
// returns (n, T).
func check[F Float](p Params, em Emissions[F], mask []bool) (int, int, error) {
	if err := p.Validate(); err != nil {
		return 0, 0, err
	}
	if err := em.validate(); err != nil {
		return 0, 0, err
	}
	t := p.NumTags()
	if em.NumTags != t {
		return 0, 0, fmt.Errorf("%w: emissions have %d tags, params %d", ErrShape, em.NumTags, t)
	}
	n := em.Len()
	if mask != nil && len(mask) != n {
		return 0, 0, fmt.Errorf("%w: mask has %d entries, emissions %d positions", ErrShape, len(mask), n)
	}
	return n, t, nil
}

// valid reports whether position i takes part in the sequence; position 0
// always does, as in the reference.
func valid(mask []bool, i int) bool { return i == 0 || mask == nil || mask[i] }

// ValidLength returns the number of positions a mask counts over n
// positions: position 0 always counts, nil means all n.
func ValidLength(mask []bool, n int) int {
	if n == 0 {
		return 0
	}
	if mask == nil {
		return n
	}
	c := 1
	for _, m := range mask[1:n] {
		if m {
			c++
		}
	}
	return c
}

// Workspace holds scratch buffers reused across calls so that repeated
// decoding or inference allocates nothing once the buffers are large enough.
// The zero value is ready to use. A Workspace must not be used by several
// goroutines at once.
type Workspace struct {
	tr, expTr []float64
	cur, nxt  []float64
	eem       []float64
	bp        []int32
}

func (w *Workspace) prepare(n, t int, withBP bool) {
	w.tr = grow(w.tr, t*t)
	w.cur = grow(w.cur, t)
	w.nxt = grow(w.nxt, t)
	if withBP {
		if cap(w.bp) < n*t {
			w.bp = make([]int32, n*t)
		}
		w.bp = w.bp[:n*t]
	}
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// logSumExp returns log Σ exp(x) computed stably; -Inf for an all -Inf input.
func logSumExp(x []float64) float64 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// forwardStep computes out[j] = logsumexp_p(in[p] + tr[j*T+p]) + em_i[j],
// the forward recursion of the training convention.
func forwardStep[F Float](out, in, tr []float64, row []F) {
	t := len(in)
	if t == 2 {
		out[0] = lse2(in[0]+tr[0], in[1]+tr[1]) + float64(row[0])
		out[1] = lse2(in[0]+tr[2], in[1]+tr[3]) + float64(row[1])
		return
	}
	for j := range t {
		trj := tr[j*t : (j+1)*t]
		m := math.Inf(-1)
		for q, a := range in {
			if v := a + trj[q]; v > m {
				m = v
			}
		}
		s := 0.0
		if !math.IsInf(m, -1) {
			for q, a := range in {
				s += math.Exp(a + trj[q] - m)
			}
		}
		out[j] = m + math.Log(s) + float64(row[j])
	}
}

func lse2(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// LogPartition returns log Z, the log of the sum over all tag paths of the
// exponentiated path score, under the [Training] convention. Masked steps
// leave the forward scores unchanged.
func LogPartition[F Float](p Params, em Emissions[F], mask []bool) (float64, error) {
	var w Workspace
	return LogPartitionWith(&w, p, em, mask)
}

// LogPartitionWith is [LogPartition] using the scratch buffers of w.
func LogPartitionWith[F Float](w *Workspace, p Params, em Emissions[F], mask []bool) (float64, error) {
	n, t, err := check(p, em, mask)
	if err != nil {
		return 0, err
	}
	w.prepare(n, t, false)
	p.flatTransitions(w.tr, Training)
	cur, nxt := w.cur, w.nxt
	for j := range t {
		cur[j] = p.Start[j] + em.At(0, j)
	}
	for i := 1; i < n; i++ {
		if !valid(mask, i) {
			continue
		}
		forwardStep(nxt, cur, w.tr, em.Data[i*t:(i+1)*t])
		cur, nxt = nxt, cur
	}
	for j := range t {
		cur[j] += p.End[j]
	}
	return logSumExp(cur), nil
}

// GoldScore returns the unnormalised score of the tag path tags under the
// [Training] convention, exactly as the reference computes it:
// start[y0] + E0[y0] + Σ_{i≥1, mask_i} (E_i[y_i] + T[y_i][y_{i−1}]) + end[y_{k−1}]
// with k the number of valid positions. tags must have one entry per
// position (entries at masked positions other than the ones the formula
// reads are ignored).
func GoldScore[F Float](p Params, em Emissions[F], tags []int, mask []bool) (float64, error) {
	n, t, err := check(p, em, mask)
	if err != nil {
		return 0, err
	}
	if len(tags) != n {
		return 0, fmt.Errorf("%w: %d tags for %d positions", ErrShape, len(tags), n)
	}
	for i, y := range tags {
		if y < 0 || y >= t {
			return 0, fmt.Errorf("%w: tags[%d] = %d with %d tags", ErrTag, i, y, t)
		}
	}
	s := p.Start[tags[0]] + em.At(0, tags[0])
	for i := 1; i < n; i++ {
		if valid(mask, i) {
			s += em.At(i, tags[i]) + p.Transitions[tags[i]][tags[i-1]]
		}
	}
	return s + p.End[tags[ValidLength(mask, n)-1]], nil
}

// NLL returns the sample-level normalised negative log-likelihood of tags,
// (log Z − gold score) / max(1, k) with k the number of valid positions, the
// per-sample training loss of the reference ([Training] convention).
func NLL[F Float](p Params, em Emissions[F], tags []int, mask []bool) (float64, error) {
	gold, err := GoldScore(p, em, tags, mask)
	if err != nil {
		return 0, err
	}
	logZ, err := LogPartition(p, em, mask)
	if err != nil {
		return 0, err
	}
	return (logZ - gold) / float64(max(1, ValidLength(mask, em.Len()))), nil
}

// Marginals returns the posterior P(y_i = t | x) of every tag at every
// position under the [Training] convention, i.e. the distribution the CRF
// was trained to model. Rows of masked positions are all zero. The rows
// share one backing array.
func Marginals[F Float](p Params, em Emissions[F], mask []bool) ([][]float64, error) {
	var w Workspace
	flat, err := MarginalsInto(&w, nil, p, em, mask)
	if err != nil {
		return nil, err
	}
	t := em.NumTags
	rows := make([][]float64, len(flat)/t)
	for i := range rows {
		rows[i] = flat[i*t : (i+1)*t : (i+1)*t]
	}
	return rows, nil
}

// MarginalsInto is [Marginals] writing the n×T posteriors row-major into dst
// (reallocated when too small) and using the scratch buffers of w; it
// returns dst[:n*T].
//
// The forward-backward recursion is the log-space one with every forward and
// backward vector renormalised at each position (Rabiner scaling): the
// vectors are kept as exp(log α_i − c_i) with the running offsets c_i held in
// log space, so nothing overflows or underflows however long the sequence,
// and only T exponentials per position are needed. If the transition matrix
// has so wide a range that a whole scaled vector underflows to zero, the
// computation is redone with every quantity in log space (log-sum-exp at
// every step, about four times slower). Each posterior row is normalised on
// its own, which keeps row sums at 1 to rounding.
func MarginalsInto[F Float](w *Workspace, dst []float64, p Params, em Emissions[F], mask []bool) ([]float64, error) {
	n, t, err := check(p, em, mask)
	if err != nil {
		return nil, err
	}
	if cap(dst) < n*t {
		dst = make([]float64, n*t)
	}
	dst = dst[:n*t]
	w.prepare(n, t, false)
	p.flatTransitions(w.tr, Training)
	if !marginalsScaled(w, dst, p, em, mask, n, t) {
		marginalsLog(w, dst, p, em, mask, n, t)
	}
	return dst, nil
}

// marginalsScaled is the fast path of MarginalsInto; it reports false when a
// scaled vector vanished (or became non-finite), leaving dst garbage.
func marginalsScaled[F Float](w *Workspace, dst []float64, p Params, em Emissions[F], mask []bool, n, t int) bool {
	// expTr[j*T+p] = exp(tr[j][p] - max tr); the shift is a constant factor
	// per step that cancels in every normalisation.
	w.expTr = grow(w.expTr, t*t)
	w.eem = grow(w.eem, n*t)
	expTr, eem := w.expTr, w.eem
	mt := w.tr[0]
	for _, v := range w.tr {
		mt = max(mt, v)
	}
	for i, v := range w.tr {
		expTr[i] = math.Exp(v - mt)
	}

	// Forward: dst row i holds the scaled alpha of valid position i and eem
	// row i the shifted exponentiated emissions, reused by the backward pass.
	last := 0
	for i := 0; i < n; i++ {
		row := dst[i*t : (i+1)*t]
		if !valid(mask, i) {
			clear(row)
			continue
		}
		e := eem[i*t : (i+1)*t]
		src := em.Data[i*t : (i+1)*t]
		if i == 0 {
			for j := range t {
				e[j] = p.Start[j] + float64(src[j])
			}
			expShifted(e, e)
			copy(row, e)
		} else {
			for j := range t {
				e[j] = float64(src[j])
			}
			expShifted(e, e)
			prev := dst[last*t : (last+1)*t]
			for j := range t {
				tj := expTr[j*t : (j+1)*t]
				s := 0.0
				for q, a := range prev {
					s += tj[q] * a
				}
				row[j] = s * e[j]
			}
		}
		if !normalise(row) {
			return false
		}
		last = i
	}

	// Backward: beta is the scaled beta of the current valid position.
	beta, tmp := w.cur, w.nxt
	expShifted(beta, p.End)
	next := -1
	for i := last; i >= 0; i-- {
		if !valid(mask, i) {
			continue
		}
		if next >= 0 {
			e := eem[next*t : (next+1)*t]
			for j := range t {
				tmp[j] = e[j] * beta[j]
			}
			for q := range t {
				s := 0.0
				for j := range t {
					s += expTr[j*t+q] * tmp[j]
				}
				beta[q] = s
			}
			if !normalise(beta) {
				return false
			}
		}
		row := dst[i*t : (i+1)*t]
		for j := range t {
			row[j] *= beta[j]
		}
		if !normalise(row) {
			return false
		}
		next = i
	}
	return true
}

// expShifted writes exp(x - max x) into dst (dst may alias x).
func expShifted(dst, x []float64) {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	for j, v := range x {
		dst[j] = math.Exp(v - m)
	}
}

// normalise scales x to sum 1 and reports whether that was possible.
func normalise(x []float64) bool {
	s := 0.0
	for _, v := range x {
		s += v
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return false
	}
	inv := 1 / s
	for j := range x {
		x[j] *= inv
	}
	return true
}

// marginalsLog is the all-log-space forward-backward used when the scaled
// recursion underflows. Forward and backward scores are shifted by their
// maximum at every position so they keep the magnitude of a single step.
func marginalsLog[F Float](w *Workspace, dst []float64, p Params, em Emissions[F], mask []bool, n, t int) {
	tr := w.tr
	// Forward pass: dst row i holds the shifted log alpha of valid position i.
	last := 0
	a0 := dst[:t]
	for j := range t {
		a0[j] = p.Start[j] + em.At(0, j)
	}
	shiftMax(a0)
	for i := 1; i < n; i++ {
		row := dst[i*t : (i+1)*t]
		if !valid(mask, i) {
			clear(row)
			continue
		}
		forwardStep(row, dst[last*t:(last+1)*t], tr, em.Data[i*t:(i+1)*t])
		shiftMax(row)
		last = i
	}

	// Backward pass: beta holds the shifted log beta of the current valid
	// position; next is the following valid position.
	beta, tmp := w.cur, w.nxt
	copy(beta, p.End)
	next := -1
	for i := last; i >= 0; i-- {
		if !valid(mask, i) {
			continue
		}
		if next >= 0 {
			backwardStep(tmp, beta, tr, em.Data[next*t:(next+1)*t])
			beta, tmp = tmp, beta
			shiftMax(beta)
		}
		row := dst[i*t : (i+1)*t]
		for j := range t {
			row[j] += beta[j]
		}
		softmaxInPlace(row)
		next = i
	}
}

// backwardStep computes out[p] = logsumexp_j(tr[j*T+p] + em_next[j] + in[j]).
func backwardStep[F Float](out, in, tr []float64, next []F) {
	t := len(in)
	if t == 2 {
		b0 := in[0] + float64(next[0])
		b1 := in[1] + float64(next[1])
		out[0] = lse2(tr[0]+b0, tr[2]+b1)
		out[1] = lse2(tr[1]+b0, tr[3]+b1)
		return
	}
	for q := range t {
		m := math.Inf(-1)
		for j := range t {
			if v := tr[j*t+q] + float64(next[j]) + in[j]; v > m {
				m = v
			}
		}
		s := 0.0
		if !math.IsInf(m, -1) {
			for j := range t {
				s += math.Exp(tr[j*t+q] + float64(next[j]) + in[j] - m)
			}
		}
		out[q] = m + math.Log(s)
	}
}

// shiftMax subtracts the maximum from x (left alone when it is not finite).
func shiftMax(x []float64) {
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return
	}
	for i := range x {
		x[i] -= m
	}
}

// softmaxInPlace replaces the log-weights x by their normalised weights.
func softmaxInPlace(x []float64) {
	lz := logSumExp(x)
	for i, v := range x {
		x[i] = math.Exp(v - lz)
	}
}
