package linemodel

import (
	"context"
	_ "embed"
	"math"
	"sync"

	"github.com/prunekit/pruner/internal/lexical"
)

//go:embed encoder/encoder.bin
var encoderData []byte

// shippedEncoder parses the embedded pair encoder once; it is read-only
// after that.
var shippedEncoder = sync.OnceValues(func() (*PairEncoder, error) {
	return ReadPairEncoder(encoderData)
})

// encMatch holds the pair encoder's cosines of the query with each line,
// its ±2-line window and its innermost definition, and the best window of
// the text: the encoder reads what a line does in the words a question
// uses, which the lexical columns cannot.
type encMatch struct {
	line, win, def []float32
	best           float32
}

// encWin is the window's half width.
const encWin = 2

// maxOpenDefs bounds the definitions whose sums are held at once (their
// nesting depth); a definition past it scores 0 in enc_def.
const maxOpenDefs = 64

// newEncMatch scores the lines of a text against the query. def is each
// line's innermost definition (-1 for none) and lastRow a definition's
// last line. Memory is a vector per open definition, not per line or per
// definition: lines are summed in a ring of the window's width, and a
// definition's sum is scored and dropped when its last line is passed.
func newEncMatch(ctx context.Context, e *PairEncoder, query string, lines []string, def []int32, lastRow func(int32) int) encMatch {
	n := len(lines)
	var m encMatch
	if e == nil || n == 0 {
		return m
	}
	q := e.EncodeQuery(WordStream(query))
	if q == nil {
		return m
	}
	m.line, m.win, m.def = make([]float32, n), make([]float32, n), make([]float32, n)
	D := e.Dim
	const W = 2*encWin + 1
	ring := make([]float32, W*D)
	sum := make([]float32, D)
	type openDef struct {
		id   int32
		last int
		sum  []float32
	}
	var open []openDef
	var free [][]float32
	defCos := map[int32]float32{}
	useDefs := len(def) == n && lastRow != nil
	pieces := newPieceIDs(e.ID)
	lineVec := func(i int, dst []float32) {
		clear(dst)
		k := 0
		l := lines[i]
		_ = lexical.EachTokenBytes(ctx, l[:min(len(l), maxSoftScan)], func(b []byte) bool {
			if id := pieces.of(b); id >= 0 {
				e.AddCode(dst, id)
				k++
			}
			return k < maxSoftWords
		})
	}
	cos := func(v []float32) float32 {
		var d, nn float32
		for j, x := range v {
			d += x * q[j]
			nn += x * x
		}
		if nn == 0 {
			return 0
		}
		return d / sqrt32(nn)
	}
	// Line i enters the ring at step i; the window of line i-encWin is
	// complete then.
	for step := 0; step < n+encWin; step++ {
		if done(ctx, step) {
			return encMatch{}
		}
		slot := ring[(step%W)*D : (step%W+1)*D]
		for j, x := range slot {
			sum[j] -= x
		}
		if step < n {
			lineVec(step, slot)
			for j, x := range slot {
				sum[j] += x
			}
			m.line[step] = cos(slot)
			if d := int32(-1); useDefs {
				d = def[step]
				k := -1
				for j := range open {
					if open[j].id == d {
						k = j
					}
				}
				if k < 0 && d >= 0 && len(open) < maxOpenDefs {
					if _, done := defCos[d]; !done {
						var buf []float32
						if len(free) > 0 {
							buf, free = free[len(free)-1], free[:len(free)-1]
							clear(buf)
						} else {
							buf = make([]float32, D)
						}
						open = append(open, openDef{id: d, last: lastRow(d), sum: buf})
						k = len(open) - 1
					}
				}
				if k >= 0 {
					for j, x := range slot {
						open[k].sum[j] += x
					}
				}
				// Score and drop the definitions that end here.
				kept := open[:0]
				for _, od := range open {
					if od.last <= step {
						defCos[od.id] = cos(od.sum)
						free = append(free, od.sum)
					} else {
						kept = append(kept, od)
					}
				}
				open = kept
			}
		} else {
			clear(slot)
		}
		if c := step - encWin; c >= 0 {
			m.win[c] = cos(sum)
			m.best = max(m.best, m.win[c])
		}
	}
	if useDefs {
		for _, od := range open { // a definition past the last line
			defCos[od.id] = cos(od.sum)
		}
		for i, d := range def {
			if d >= 0 {
				m.def[i] = defCos[d]
			}
		}
	}
	return m
}

// encColumns (enc_line … enc_best): the encoder's cosine of the query with
// the line, its window and its definition, and the text's best window (a
// text no part of which does what the question asks reads low there).
func (f *featureState) encColumns(w *rowWriter, i int) {
	if len(f.enc.line) != f.n {
		w.skip(4)
		return
	}
	w.put(float64(f.enc.line[i]))
	w.put(float64(f.enc.win[i]))
	w.put(float64(f.enc.def[i]))
	w.put(float64(f.enc.best))
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
