package linemodel

import (
	"bytes"
	"context"
	_ "embed"
	"math"
	"sync"

	"github.com/prunekit/pruner/internal/lexical"
)

//go:embed encoder/encoder.bin
var encoderData []byte

// shippedEncoder parses the embedded pair encoder once; it is read-only
// after that. An embedded attention encoder (PRAE1) is returned by
// shippedAttnEncoder, and its bag of words here.
var shippedEncoder = sync.OnceValues(func() (*PairEncoder, error) {
	ae, err := shippedAttnEncoder()
	if err != nil {
		return nil, err
	}
	if ae != nil {
		return ae.PairEncoder, nil
	}
	return ReadPairEncoder(encoderData)
})

// shippedAttnEncoder parses the embedded encoder when it is an attention
// encoder, and returns nil otherwise.
var shippedAttnEncoder = sync.OnceValues(func() (*AttnEncoder, error) {
	if !bytes.HasPrefix(encoderData, []byte(attnEncMagic)) {
		return nil, nil
	}
	return ReadAttnEncoder(encoderData)
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
	m, q := startEncMatch(e, query, n)
	if q == nil {
		return m
	}
	D := e.Dim
	const W = 2*encWin + 1
	ring := make([]float32, W*D)
	sum := make([]float32, D)
	defs := newDefScores(def, lastRow, n, func(buf []float32) []float32 {
		if buf == nil {
			return make([]float32, D)
		}
		clear(buf)
		return buf
	})
	pieces := newPieceIDs(e.ID)
	var ids []int32
	lineVec := func(i int, dst []float32) {
		clear(dst)
		ids = encLineIDs(ctx, pieces, lines[i], ids)
		for _, id := range ids {
			e.AddCode(dst, id)
		}
	}
	cos := func(v []float32) float32 { return cosQ(q, v) }
	var slot []float32 // the current line's vector
	addSlot := func(acc []float32) []float32 {
		for j, x := range slot {
			acc[j] += x
		}
		return acc
	}
	// Line i enters the ring at step i; the window of line i-encWin is
	// complete then.
	for step := 0; step < n+encWin; step++ {
		if done(ctx, step) {
			return encMatch{}
		}
		slot = ring[(step%W)*D : (step%W+1)*D]
		for j, x := range slot {
			sum[j] -= x
		}
		if step < n {
			lineVec(step, slot)
			for j, x := range slot {
				sum[j] += x
			}
			m.line[step] = cos(slot)
			defs.line(step, addSlot, cos)
		} else {
			clear(slot)
		}
		if c := step - encWin; c >= 0 {
			m.win[c] = cos(sum)
			m.best = max(m.best, m.win[c])
		}
	}
	defs.finish(m.def, cos)
	return m
}

// startEncMatch returns the columns of n lines, zero, and the query's
// vector; a nil vector (no encoder, no lines, no query word in the
// vocabulary) means no columns.
func startEncMatch(e *PairEncoder, query string, n int) (encMatch, []float32) {
	if e == nil || n == 0 {
		return encMatch{}, nil
	}
	q := e.EncodeQuery(WordStream(query))
	if q == nil {
		return encMatch{}, nil
	}
	return encMatch{line: make([]float32, n), win: make([]float32, n), def: make([]float32, n)}, q
}

// encLineIDs sets dst to the encoder's words of line l, its first
// maxSoftWords within the first maxSoftScan bytes.
func encLineIDs(ctx context.Context, pieces pieceIDs, l string, dst []int32) []int32 {
	dst = dst[:0]
	_ = lexical.EachTokenBytes(ctx, l[:min(len(l), maxSoftScan)], func(b []byte) bool {
		if id := pieces.of(b); id >= 0 {
			dst = append(dst, id)
		}
		return len(dst) < maxSoftWords
	})
	return dst
}

// cosQ is the cosine of v with the unit query vector q (0 for a zero v).
func cosQ(q, v []float32) float32 {
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

// newAttnEncMatch is newEncMatch for an attention encoder: a line, its
// window and its definition are units of at most e.Len words read in
// order (a window's words centred on its line, a definition's first
// words), so the columns see which words come together, not only which
// occur. Memory is the word ids of the window's lines and of the open
// definitions' first words.
func newAttnEncMatch(ctx context.Context, e *AttnEncoder, query string, lines []string, def []int32, lastRow func(int32) int) encMatch {
	if e == nil {
		return encMatch{}
	}
	n := len(lines)
	m, q := startEncMatch(e.PairEncoder, query, n)
	if q == nil {
		return m
	}
	D, L := e.Dim, e.Len
	ue := e.NewUnitEncoder()
	vec := make([]float32, D)
	cos := func(ids []int32) float32 {
		if len(ids) == 0 {
			return 0
		}
		ue.Encode(vec, ids)
		return cosQ(q, vec)
	}
	const W = 2*encWin + 1
	ring := make([][]int32, W)
	pieces := newPieceIDs(e.ID)
	defs := newDefScores(def, lastRow, n, func(buf []int32) []int32 { return buf[:0] })
	var ids []int32 // the current line's words
	addIDs := func(acc []int32) []int32 {
		return append(acc, ids[:min(len(ids), max(0, L-len(acc)))]...)
	}
	var win []int32
	for step := 0; step < n+encWin; step++ {
		if done(ctx, step) {
			return encMatch{}
		}
		slot := step % W
		if step < n {
			ring[slot] = encLineIDs(ctx, pieces, lines[step], ring[slot])
			m.line[step] = cos(ring[slot])
			ids = ring[slot]
			defs.line(step, addIDs, cos)
		} else {
			ring[slot] = ring[slot][:0]
		}
		c := step - encWin
		if c < 0 {
			continue
		}
		// The window of line c: lines c-encWin … c+encWin, its words
		// centred on line c's when they are more than L.
		win = win[:0]
		start, cn := 0, 0
		for r := c - encWin; r <= c+encWin; r++ {
			if r < 0 || r >= n {
				continue
			}
			rw := ring[r%W]
			if r == c {
				start, cn = len(win), len(rw)
			}
			win = append(win, rw...)
		}
		if len(win) > L {
			s := max(0, min(start-(L-cn)/2, len(win)-L))
			win = win[s : s+L]
		}
		m.win[c] = cos(win)
		m.best = max(m.best, m.win[c])
	}
	defs.finish(m.def, cos)
	return m
}

// defScores scores each definition of a text once, streaming: it holds an
// accumulator (a vector sum, the first words) per open definition, not per
// line or per definition, fed the lines of the definition as they pass and
// scored and recycled when its last line is passed. At most maxOpenDefs
// are open at once (their nesting depth); a definition past it scores 0.
type defScores[T any] struct {
	def     []int32         // each line's innermost definition, -1 for none
	lastRow func(int32) int // a definition's last line
	fresh   func(buf T) T   // an empty accumulator, reusing buf (zero: none)
	open    []openDef[T]
	free    []T
	score   map[int32]float32
	use     bool
}

type openDef[T any] struct {
	id   int32
	last int
	acc  T
}

// newDefScores tracks the definitions of n lines; a def table of another
// length or no lastRow scores none.
func newDefScores[T any](def []int32, lastRow func(int32) int, n int, fresh func(T) T) *defScores[T] {
	return &defScores[T]{def: def, lastRow: lastRow, fresh: fresh, score: map[int32]float32{}, use: len(def) == n && lastRow != nil}
}

// line feeds line i to its innermost definition (add returns the grown
// accumulator) and scores the definitions that end at i.
func (d *defScores[T]) line(i int, add func(T) T, score func(T) float32) {
	if !d.use {
		return
	}
	id := d.def[i]
	k := -1
	for j := range d.open {
		if d.open[j].id == id {
			k = j
		}
	}
	if k < 0 && id >= 0 && len(d.open) < maxOpenDefs {
		if _, done := d.score[id]; !done {
			var buf T
			if len(d.free) > 0 {
				buf, d.free = d.free[len(d.free)-1], d.free[:len(d.free)-1]
			}
			d.open = append(d.open, openDef[T]{id: id, last: d.lastRow(id), acc: d.fresh(buf)})
			k = len(d.open) - 1
		}
	}
	if k >= 0 {
		d.open[k].acc = add(d.open[k].acc)
	}
	kept := d.open[:0]
	for _, od := range d.open {
		if od.last <= i {
			d.score[od.id] = score(od.acc)
			d.free = append(d.free, od.acc)
		} else {
			kept = append(kept, od)
		}
	}
	d.open = kept
}

// finish scores the definitions still open (past the last line) and sets
// dst[i] to line i's definition's score.
func (d *defScores[T]) finish(dst []float32, score func(T) float32) {
	if !d.use {
		return
	}
	for _, od := range d.open {
		d.score[od.id] = score(od.acc)
	}
	for i, id := range d.def {
		if id >= 0 {
			dst[i] = d.score[id]
		}
	}
}
