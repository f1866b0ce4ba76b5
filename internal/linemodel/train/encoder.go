package train

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/prunekit/pruner/internal/linemodel"
)

// A PairFile is one source file's mined natural-language / code pairs, as
// examples/pairs writes them (one JSON object per line, gzipped): the
// file's units (definitions and statement blocks, comments removed) and
// the pairs, each a comment's text and the unit it documents.
type PairFile struct {
	Src   string     `json:"src"`
	Path  string     `json:"path"`
	Lang  string     `json:"lang"`
	Split string     `json:"split"`
	Units []PairUnit `json:"units"`
	Pairs []PairItem `json:"pairs"`
}

// PairUnit is a definition ("def") or statement block ("block") of a file.
type PairUnit struct {
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Code  string `json:"code"`
}

// PairItem is a comment ("doc" above a definition, "inline" above a block)
// and the index of the unit it documents.
type PairItem struct {
	NL   string `json:"nl"`
	Unit int    `json:"unit"`
	Kind string `json:"kind"`
}

// EncoderOptions configure TrainPairEncoder.
type EncoderOptions struct {
	Dim, Epochs int
	// MinCount and MaxVocab bound the vocabulary (words of the train
	// pairs' both sides).
	MinCount, MaxVocab int
	// MaxPairs caps the train pairs (whole files, in a fixed pseudo-random
	// order); 0 keeps all. It draws the learning curve.
	MaxPairs int
	// MaxCands caps the same-file candidates of a pair (the positive
	// always among them); RandNegs adds units of other files.
	MaxCands, RandNegs int
	// Temp scales the cosines into logits.
	LR, Temp float64
	// Lexical, when positive, adds this multiple of the comment's tf-idf
	// cosine with each unit to the cosine the logits scale: the encoder
	// then learns what the lexical match misses (its residual), which is
	// what a model that has lexical columns already can use.
	Lexical float64
	Seed    uint64
}

// DefaultEncoderOptions are the options of the shipped encoder.
var DefaultEncoderOptions = EncoderOptions{
	Dim: 256, Epochs: 3, MinCount: 3, MaxVocab: 40000,
	MaxCands: 64, RandNegs: 16, LR: 0.05, Temp: 20, Seed: 1,
}

// Word caps per side: a comment's first words and a unit's first words
// say what they are about; the caps bound a step's cost.
const (
	maxNLWords   = 64
	maxUnitWords = 256
	maxValCands  = 200
)

const (
	kindDef = iota
	kindBlock
	kindMsg
	numUnitKinds
)

func unitKind(s string) (int, bool) {
	switch s {
	case "def", "doc":
		return kindDef, true
	case "block", "inline":
		return kindBlock, true
	case "msg":
		// A message and the code that emits it (examples/pairs -messages).
		return kindMsg, true
	}
	return 0, false
}

// encFile is a PairFile as word ids.
type encFile struct {
	units [][]int32
	kinds []uint8
	pairs []encPair
	val   bool
}

type encPair struct {
	q    []int32
	unit int32
	key  uint64 // hash of the comment and the unit's code, for dedup
}

// PairData is mined pair files tokenized against one vocabulary.
type PairData struct {
	Words []string
	IDF   []float32
	train []encFile
	val   []encFile
	// TrainPairs and ValPairs count the pairs kept.
	TrainPairs, ValPairs int
}

// LoadPairData reads gzipped pair files, tokenizes both sides with
// linemodel.WordStream, builds the vocabulary from the train split and
// keeps at most o.MaxPairs train pairs (whole files in an order fixed by
// a hash of their source and path) and at most maxVal val pairs.
func LoadPairData(ctx context.Context, paths []string, o EncoderOptions, maxVal int) (*PairData, error) {
	type tmpFile struct {
		key   uint64
		units [][]int32
		kinds []uint8
		pairs []encPair
		val   bool
		n     int
	}
	intern := map[string]int32{}
	var tmpWords []string
	ids := func(s string, limit int) []int32 {
		ws := linemodel.WordStream(s)
		if len(ws) > limit {
			ws = ws[:limit]
		}
		out := make([]int32, len(ws))
		for i, w := range ws {
			id, ok := intern[w]
			if !ok {
				id = int32(len(tmpWords))
				intern[w] = id
				tmpWords = append(tmpWords, w)
			}
			out[i] = id
		}
		return out
	}
	var files []tmpFile
	for _, p := range paths {
		err := eachPairFile(p, func(pf *PairFile) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			tf := tmpFile{val: pf.Split == "val"}
			h := fnv.New64a()
			io.WriteString(h, pf.Src+"\x00"+pf.Path)
			tf.key = h.Sum64()
			remap := make([]int32, len(pf.Units))
			for i, u := range pf.Units {
				remap[i] = -1
				k, ok := unitKind(u.Kind)
				if !ok {
					continue
				}
				remap[i] = int32(len(tf.units))
				tf.units = append(tf.units, ids(u.Code, maxUnitWords))
				tf.kinds = append(tf.kinds, uint8(k))
			}
			for _, it := range pf.Pairs {
				k, ok := unitKind(it.Kind)
				if !ok || it.Unit < 0 || it.Unit >= len(remap) || remap[it.Unit] < 0 || int(tf.kinds[remap[it.Unit]]) != k {
					continue
				}
				h := fnv.New64a()
				io.WriteString(h, it.NL+"\x00"+pf.Units[it.Unit].Code)
				tf.pairs = append(tf.pairs, encPair{q: ids(it.NL, maxNLWords), unit: remap[it.Unit], key: h.Sum64()})
			}
			tf.n = len(tf.pairs)
			if tf.n > 0 {
				files = append(files, tf)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("train: pairs %s: %w", p, err)
		}
	}
	slices.SortFunc(files, func(a, b tmpFile) int { return cmp.Compare(a.key, b.key) })
	// A comment and code seen twice is one pair: corpora overlap (a
	// repository's history and its module release), and generated or
	// copied files repeat their comments. A pair in val is no train pair.
	valKeys := map[uint64]bool{}
	for _, f := range files {
		if f.val {
			for _, p := range f.pairs {
				valKeys[p.key] = true
			}
		}
	}
	seen := map[uint64]bool{}
	for i := range files {
		f := &files[i]
		out := f.pairs[:0]
		for _, p := range f.pairs {
			if seen[p.key] || (!f.val && valKeys[p.key]) {
				continue
			}
			seen[p.key] = true
			out = append(out, p)
		}
		f.pairs, f.n = out, len(out)
	}
	files = slices.DeleteFunc(files, func(f tmpFile) bool { return f.n == 0 })
	// Keep whole files up to the caps.
	var kept []tmpFile
	nTrain, nVal := 0, 0
	for _, f := range files {
		switch {
		case f.val && (maxVal <= 0 || nVal < maxVal):
			kept = append(kept, f)
			nVal += f.n
		case !f.val && (o.MaxPairs <= 0 || nTrain < o.MaxPairs):
			kept = append(kept, f)
			nTrain += f.n
		}
	}
	// Vocabulary and idf from the kept train files: a word's document
	// frequency counts units and comments.
	df := make([]int32, len(tmpWords))
	docs := 0
	mark := make([]int32, len(tmpWords))
	stamp := int32(0)
	count := func(ws []int32) {
		stamp++
		docs++
		for _, w := range ws {
			if mark[w] != stamp {
				mark[w] = stamp
				df[w]++
			}
		}
	}
	for _, f := range kept {
		if f.val {
			continue
		}
		for _, u := range f.units {
			count(u)
		}
		for _, p := range f.pairs {
			count(p.q)
		}
	}
	if docs == 0 {
		return nil, errors.New("train: pairs: no train pairs")
	}
	order := make([]int32, 0, len(tmpWords))
	for w, c := range df {
		if int(c) >= max(1, o.MinCount) {
			order = append(order, int32(w))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(df[b], df[a]); c != 0 {
			return c
		}
		return cmp.Compare(tmpWords[a], tmpWords[b])
	})
	if o.MaxVocab > 0 && len(order) > o.MaxVocab {
		order = order[:o.MaxVocab]
	}
	vocab := make([]int32, len(tmpWords))
	for i := range vocab {
		vocab[i] = -1
	}
	d := &PairData{Words: make([]string, len(order)), IDF: make([]float32, len(order))}
	for i, w := range order {
		vocab[w] = int32(i)
		d.Words[i] = tmpWords[w]
		d.IDF[i] = float32(math.Log(float64(docs+1) / float64(df[w]+1)))
	}
	mapIDs := func(ws []int32) []int32 {
		out := ws[:0]
		for _, w := range ws {
			if v := vocab[w]; v >= 0 {
				out = append(out, v)
			}
		}
		return slices.Clip(out)
	}
	for _, f := range kept {
		ef := encFile{kinds: f.kinds, val: f.val}
		for _, u := range f.units {
			ef.units = append(ef.units, mapIDs(u))
		}
		for _, p := range f.pairs {
			if q := mapIDs(p.q); len(q) > 0 {
				ef.pairs = append(ef.pairs, encPair{q: q, unit: p.unit})
			}
		}
		if f.val {
			d.val = append(d.val, ef)
			d.ValPairs += len(ef.pairs)
		} else {
			d.train = append(d.train, ef)
			d.TrainPairs += len(ef.pairs)
		}
	}
	return d, nil
}

// eachPairFile calls fn with each record of a gzipped JSONL pair file.
func eachPairFile(path string, fn func(*PairFile) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(zr)
	for {
		var pf PairFile
		if err := dec.Decode(&pf); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := fn(&pf); err != nil {
			return err
		}
	}
}

// EncoderEval is the ranking of held-out pairs: each pair's unit among the
// units of the same kind in its file.
type EncoderEval struct {
	Pairs   int
	MRR, R1 float64
	// ByKind holds the same for doc (def), inline (block) and message
	// (msg) pairs.
	ByKind [numUnitKinds]struct {
		Pairs   int
		MRR, R1 float64
	}
}

func (e EncoderEval) String() string {
	s := fmt.Sprintf("MRR %.4f R@1 %.4f (%d pairs; doc %.4f/%.4f, inline %.4f/%.4f", e.MRR, e.R1, e.Pairs,
		e.ByKind[kindDef].MRR, e.ByKind[kindDef].R1, e.ByKind[kindBlock].MRR, e.ByKind[kindBlock].R1)
	if m := e.ByKind[kindMsg]; m.Pairs > 0 {
		s += fmt.Sprintf(", msg %.4f/%.4f of %d", m.MRR, m.R1, m.Pairs)
	}
	return s + ")"
}

// encModel is the float encoder being trained; gQ and gC are row-wise
// Adagrad accumulators.
type encModel struct {
	D      int
	idf    []float32
	Q, C   []float32
	gQ, gC []float32
}

func (m *encModel) sum(dst []float32, tab []float32, ws []int32) {
	clear(dst)
	D := m.D
	for _, w := range ws {
		s := m.idf[w]
		row := tab[int(w)*D : int(w+1)*D]
		for j, x := range row {
			dst[j] += s * x
		}
	}
}

// unitVec sets dst to the normalised sum and returns the sum's norm.
func (m *encModel) unitVec(dst []float32, tab []float32, ws []int32) float32 {
	m.sum(dst, tab, ws)
	n := float32(0)
	for _, x := range dst {
		n += x * x
	}
	n = float32(math.Sqrt(float64(n)))
	if n == 0 {
		return 0
	}
	for j := range dst {
		dst[j] /= n
	}
	return n
}

func dot(a, b []float32) float32 {
	s := float32(0)
	for j, x := range a {
		s += x * b[j]
	}
	return s
}

// TrainPairEncoder trains the encoder on d's train pairs, one thread so
// that a seed fixes the result: for each pair, a softmax over the cosines
// of the comment with its file's units of the same kind (and a few units
// of other files) pulls the documented unit up and the others down. Both
// tables start equal, so before training the encoder is an idf-weighted
// bag-of-words cosine (a random projection of it); logf, when not nil,
// receives the val ranking after each epoch.
func TrainPairEncoder(ctx context.Context, d *PairData, o EncoderOptions, logf func(string, ...any)) (*linemodel.PairEncoder, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	V, D := len(d.Words), o.Dim
	if V == 0 || D <= 0 {
		return nil, fmt.Errorf("train: encoder: %d words at width %d", V, D)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	m := &encModel{D: D, idf: d.IDF, Q: make([]float32, V*D), C: make([]float32, V*D), gQ: make([]float32, V), gC: make([]float32, V)}
	scale := float32(1 / math.Sqrt(float64(D)))
	for i := range m.Q {
		m.Q[i] = float32(rng.NormFloat64()) * scale
	}
	copy(m.C, m.Q)
	logf("encoder: %d words, width %d, %d train pairs in %d files, %d val pairs", V, D, d.TrainPairs, len(d.train), d.ValPairs)
	logf("encoder: epoch 0 (tables equal): val %s", evalEncoder(m, d.val, o.Lexical))
	logf("encoder: tf-idf cosine: val %s", evalTFIDF(d))

	order := make([]int, len(d.train))
	for i := range order {
		order[i] = i
	}
	st := newEncStep(D, o)
	for ep := range o.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var loss float64
		var n int
		for k, fi := range order {
			if k%256 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			// The learning rate decays linearly to a tenth over training.
			progress := (float64(ep) + float64(k)/float64(len(order))) / float64(o.Epochs)
			lr := float32(o.LR * (1 - 0.9*progress))
			l, c := st.file(m, &d.train[fi], lr, rng)
			loss += l
			n += c
		}
		logf("encoder: epoch %d: train loss %.4f; val %s", ep+1, loss/math.Max(1, float64(n)), evalEncoder(m, d.val, o.Lexical))
	}
	return linemodel.NewPairEncoder(d.Words, d.IDF, m.Q, m.C, D)
}

// encStep holds one step's scratch buffers and the ring of other files'
// unit vectors used as extra negatives.
type encStep struct {
	D        int
	o        EncoderOptions
	vecs     []float32 // candidate unit vectors, row-major
	norms    []float32
	dv       []float32
	q, dq    []float32
	grad     []float32
	scores   []float64
	ring     []float32
	ringN    int
	ringNext int
	cands    []int32
	ringIdx  []int
	// lexical match scratch: the unit bags' norms and a dense query bag
	lexNorm []float32
	qbag    []float32
}

const ringSize = 1024

func newEncStep(D int, o EncoderOptions) *encStep {
	return &encStep{D: D, o: o, q: make([]float32, D), dq: make([]float32, D), grad: make([]float32, D), ring: make([]float32, ringSize*D)}
}

// file trains on one file's pairs, kind by kind, and returns the summed
// loss and the number of pairs.
func (s *encStep) file(m *encModel, f *encFile, lr float32, rng *rand.Rand) (float64, int) {
	D := s.D
	var loss float64
	var n int
	for kind := range uint8(numUnitKinds) {
		// Candidates: the positives of this kind first, then a sample of
		// the file's other units of the kind.
		s.cands = s.cands[:0]
		pos := map[int32]int{}
		for _, p := range f.pairs {
			if f.kinds[p.unit] == kind {
				if _, ok := pos[p.unit]; !ok && len(s.cands) < s.o.MaxCands {
					pos[p.unit] = len(s.cands)
					s.cands = append(s.cands, p.unit)
				}
			}
		}
		if len(s.cands) == 0 {
			continue
		}
		var others []int32
		for u, k := range f.kinds {
			if k == kind {
				if _, ok := pos[int32(u)]; !ok {
					others = append(others, int32(u))
				}
			}
		}
		rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
		for _, u := range others {
			if len(s.cands) >= s.o.MaxCands {
				break
			}
			s.cands = append(s.cands, u)
		}
		if len(s.cands) < 2 {
			continue
		}
		K := len(s.cands)
		s.vecs = slices.Grow(s.vecs[:0], K*D)[:K*D]
		s.dv = slices.Grow(s.dv[:0], K*D)[:K*D]
		clear(s.dv)
		s.norms = slices.Grow(s.norms[:0], K)[:K]
		for j, u := range s.cands {
			s.norms[j] = m.unitVec(s.vecs[j*D:(j+1)*D], m.C, f.units[u])
		}
		if s.o.Lexical > 0 {
			s.lexNorm = slices.Grow(s.lexNorm[:0], K)[:K]
			for j, u := range s.cands {
				s.lexNorm[j] = bagNorm(m.idf, f.units[u])
			}
			if len(s.qbag) < len(m.idf) {
				s.qbag = make([]float32, len(m.idf))
			}
		}
		R := min(s.o.RandNegs, s.ringN)
		temp := float32(s.o.Temp)
		for _, p := range f.pairs {
			if f.kinds[p.unit] != kind {
				continue
			}
			j0, ok := pos[p.unit]
			if !ok || s.norms[j0] == 0 {
				continue
			}
			qn := m.unitVec(s.q, m.Q, p.q)
			if qn == 0 {
				continue
			}
			// Logits over the candidates, then R ring vectors.
			s.scores = slices.Grow(s.scores[:0], K+R)[:K+R]
			s.ringIdx = slices.Grow(s.ringIdx[:0], R)[:R]
			ringIdx := s.ringIdx
			for j := range K {
				s.scores[j] = float64(temp * dot(s.q, s.vecs[j*D:(j+1)*D]))
				if s.norms[j] == 0 {
					s.scores[j] = math.Inf(-1)
				}
			}
			if s.o.Lexical > 0 {
				qn := bagNorm(m.idf, p.q)
				for _, w := range p.q {
					s.qbag[w] += m.idf[w]
				}
				for j, u := range s.cands {
					if s.lexNorm[j] > 0 && qn > 0 {
						x := float32(0)
						for _, w := range f.units[u] {
							x += s.qbag[w] * m.idf[w]
						}
						s.scores[j] += float64(temp) * s.o.Lexical * float64(x/qn/s.lexNorm[j])
					}
				}
				for _, w := range p.q {
					s.qbag[w] = 0
				}
			}
			for r := range R {
				ringIdx[r] = rng.IntN(s.ringN)
				s.scores[K+r] = float64(temp * dot(s.q, s.ring[ringIdx[r]*D:(ringIdx[r]+1)*D]))
			}
			mx := math.Inf(-1)
			for _, x := range s.scores {
				mx = max(mx, x)
			}
			z := 0.0
			for j, x := range s.scores {
				s.scores[j] = math.Exp(x - mx)
				z += s.scores[j]
			}
			loss += -math.Log(s.scores[j0]/z + 1e-30)
			n++
			// dL/dlogit = p - y; the q gradient and the candidates' dv.
			clear(s.dq)
			for j := range K + R {
				g := float32(s.scores[j] / z)
				if j == j0 {
					g -= 1
				}
				if g == 0 {
					continue
				}
				g *= temp
				var v []float32
				if j < K {
					v = s.vecs[j*D : (j+1)*D]
					dv := s.dv[j*D : (j+1)*D]
					for t, x := range s.q {
						dv[t] += g * x
					}
				} else {
					r := ringIdx[j-K]
					v = s.ring[r*D : (r+1)*D]
				}
				for t, x := range v {
					s.dq[t] += g * x
				}
			}
			s.backNorm(s.dq, s.q, qn)
			s.update(m.Q, m.gQ, m.idf, p.q, s.dq, lr)
		}
		for j, u := range s.cands {
			if s.norms[j] == 0 {
				continue
			}
			dv := s.dv[j*D : (j+1)*D]
			s.backNorm(dv, s.vecs[j*D:(j+1)*D], s.norms[j])
			s.update(m.C, m.gC, m.idf, f.units[u], dv, lr)
		}
		// This file's unit vectors become other files' negatives.
		for j := range K {
			if s.norms[j] == 0 {
				continue
			}
			copy(s.ring[s.ringNext*D:(s.ringNext+1)*D], s.vecs[j*D:(j+1)*D])
			s.ringNext = (s.ringNext + 1) % ringSize
			s.ringN = min(s.ringN+1, ringSize)
		}
	}
	return loss, n
}

// idfBag is a bag's idf-weighted word counts and their norm.
func idfBag(idf []float32, ws []int32) (map[int32]float32, float32) {
	b := map[int32]float32{}
	for _, w := range ws {
		b[w] += idf[w]
	}
	n := float32(0)
	for _, x := range b {
		n += x * x
	}
	return b, float32(math.Sqrt(float64(n)))
}

// bagNorm is the norm of a bag's idf-weighted word counts.
func bagNorm(idf []float32, ws []int32) float32 {
	_, n := idfBag(idf, ws)
	return n
}

// backNorm turns the gradient g of a unit vector v = u/|u| into the
// gradient of u, in place: (g − (g·v)v)/|u|.
func (s *encStep) backNorm(g, v []float32, norm float32) {
	gv := dot(g, v)
	for t := range g {
		g[t] = (g[t] - gv*v[t]) / norm
	}
}

// update applies the gradient g of a bag's sum to the rows of its words
// (each weighted by its idf), with row-wise Adagrad.
func (s *encStep) update(tab, acc, idf []float32, ws []int32, g []float32, lr float32) {
	D := s.D
	gg := dot(g, g) / float32(D)
	for _, w := range ws {
		a := idf[w]
		acc[w] += a * a * gg
		step := lr * a / float32(math.Sqrt(float64(acc[w])+1e-6))
		row := tab[int(w)*D : int(w+1)*D]
		for t, x := range g {
			row[t] -= step * x
		}
	}
}

// evalEncoder ranks each val pair's unit among its file's units of the
// same kind by cosine.
func evalEncoder(m *encModel, files []encFile, lexical float64) EncoderEval {
	D := m.D
	q := make([]float32, D)
	var lex func(f *encFile, cands []int32) func(p encPair) []float32
	if lexical > 0 {
		lex = tfidfScorer(m.idf)
	}
	return evalRank(files, func(f *encFile, cands []int32) func(p encPair) []float32 {
		var lexScore func(p encPair) []float32
		if lex != nil {
			lexScore = lex(f, cands)
		}
		vecs := make([]float32, len(cands)*D)
		ok := make([]bool, len(cands))
		for j, u := range cands {
			ok[j] = m.unitVec(vecs[j*D:(j+1)*D], m.C, f.units[u]) > 0
		}
		return func(p encPair) []float32 {
			out := make([]float32, len(cands))
			if m.unitVec(q, m.Q, p.q) == 0 {
				return out
			}
			for j := range cands {
				if ok[j] {
					out[j] = dot(q, vecs[j*D:(j+1)*D])
				} else {
					out[j] = -1
				}
			}
			if lexScore != nil {
				for j, x := range lexScore(p) {
					out[j] += float32(lexical) * x
				}
			}
			return out
		}
	})
}

// evalTFIDF is the same ranking by the sparse tf-idf cosine: the lexical
// baseline the encoder starts from.
func evalTFIDF(d *PairData) EncoderEval {
	return evalRank(d.val, tfidfScorer(d.IDF))
}

// tfidfScorer scores a file's candidates by their sparse tf-idf cosine
// with a pair's comment.
func tfidfScorer(idf []float32) func(f *encFile, cands []int32) func(p encPair) []float32 {
	bag := func(ws []int32) (map[int32]float32, float32) { return idfBag(idf, ws) }
	return func(f *encFile, cands []int32) func(p encPair) []float32 {
		bags := make([]map[int32]float32, len(cands))
		norms := make([]float32, len(cands))
		for j, u := range cands {
			bags[j], norms[j] = bag(f.units[u])
		}
		return func(p encPair) []float32 {
			qb, qn := bag(p.q)
			out := make([]float32, len(cands))
			for j := range cands {
				if qn == 0 || norms[j] == 0 {
					continue
				}
				s := float32(0)
				for w, x := range qb {
					s += x * bags[j][w]
				}
				out[j] = s / qn / norms[j]
			}
			return out
		}
	}
}

// evalRank computes MRR and recall@1 of the pairs' units; a tie ranks the
// positive below the units it ties with.
func evalRank(files []encFile, scorer func(f *encFile, cands []int32) func(p encPair) []float32) EncoderEval {
	var e EncoderEval
	for fi := range files {
		f := &files[fi]
		for kind := range uint8(numUnitKinds) {
			var cands []int32
			for u, k := range f.kinds {
				if k == kind && len(cands) < maxValCands {
					cands = append(cands, int32(u))
				}
			}
			if len(cands) < 2 {
				continue
			}
			var score func(p encPair) []float32
			for _, p := range f.pairs {
				if f.kinds[p.unit] != kind {
					continue
				}
				j0 := slices.Index(cands, p.unit)
				if j0 < 0 {
					continue
				}
				if score == nil {
					score = scorer(f, cands)
				}
				sc := score(p)
				rank := 1
				for j, x := range sc {
					if j != j0 && x >= sc[j0] {
						rank++
					}
				}
				rr := 1 / float64(rank)
				r1 := b2f(rank == 1)
				e.Pairs++
				e.MRR += rr
				e.R1 += r1
				bk := &e.ByKind[kind]
				bk.Pairs++
				bk.MRR += rr
				bk.R1 += r1
			}
		}
	}
	if e.Pairs > 0 {
		e.MRR /= float64(e.Pairs)
		e.R1 /= float64(e.Pairs)
	}
	for k := range e.ByKind {
		if bk := &e.ByKind[k]; bk.Pairs > 0 {
			bk.MRR /= float64(bk.Pairs)
			bk.R1 /= float64(bk.Pairs)
		}
	}
	return e
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
