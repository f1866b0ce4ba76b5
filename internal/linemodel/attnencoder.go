package linemodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// An AttnEncoder is a PairEncoder whose code side reads word order: a
// unit's first Len words get learned positions and one self-attention
// layer (with a residual) before their idf-weighted sum. The question side
// is the PairEncoder's bag of words. It is trained as the bag encoder is
// (train.TrainAttnEncoder; go run ./examples/train -encoder-attn-exp attn
// -encoder-attn-out FILE), and its code table holds the words' vectors
// without their idf, which weighs the sum instead.
type AttnEncoder struct {
	*PairEncoder
	// Len is the number of positions: a unit's words past it are not read.
	Len int
	// Pos [Len,Dim] is added to the words' vectors; WQ, WK, WV [Dim,Dim]
	// map them to the attention's queries, keys and values.
	Pos, WQ, WK, WV []float32
	// posProj [Len,3·Dim] is Pos·[WQ|WK|WV]: a projection of a word at a
	// position is its word's projection plus its position's.
	posProj []float32
}

// NewAttnEncoder quantizes the tables as NewPairEncoder does and keeps the
// attention's weights in float32. pos is [posLen,dim], wq, wk, wv
// [dim,dim], all row-major.
func NewAttnEncoder(words []string, idf, q, c, pos, wq, wk, wv []float32, dim, posLen int) (*AttnEncoder, error) {
	pe, err := NewPairEncoder(words, idf, q, c, dim)
	if err != nil {
		return nil, err
	}
	if posLen <= 0 || len(pos) != posLen*dim || len(wq) != dim*dim || len(wk) != dim*dim || len(wv) != dim*dim {
		return nil, fmt.Errorf("linemodel: attention encoder: %d positions of width %d: %d position values, %d/%d/%d projection values", posLen, dim, len(pos), len(wq), len(wk), len(wv))
	}
	e := &AttnEncoder{PairEncoder: pe, Len: posLen, Pos: pos, WQ: wq, WK: wk, WV: wv}
	e.project()
	return e, nil
}

func (e *AttnEncoder) project() {
	D := e.Dim
	e.posProj = make([]float32, e.Len*3*D)
	for l := range e.Len {
		e.projectRow(e.posProj[l*3*D:(l+1)*3*D], e.Pos[l*D:(l+1)*D])
	}
}

// projectRow writes x·WQ, x·WK, x·WV to dst [3·Dim].
func (e *AttnEncoder) projectRow(dst, x []float32) {
	D := e.Dim
	clear(dst)
	for k, w := range [3][]float32{e.WQ, e.WK, e.WV} {
		out := dst[k*D : (k+1)*D]
		for i, xi := range x {
			if xi == 0 {
				continue
			}
			row := w[i*D : (i+1)*D]
			for j, wij := range row {
				out[j] += xi * wij
			}
		}
	}
}

// A UnitEncoder encodes code units with an AttnEncoder, caching each word's
// projections: the units of one text share most of their words. The cache
// is bounded by the vocabulary (4·Dim floats a word: 41 MB for 40,000
// words of width 64, at most, whatever the text's size). It is not safe
// for concurrent use.
type UnitEncoder struct {
	e    *AttnEncoder
	slot map[int32]int32 // word → its row in vec and proj
	vec  []float32       // [words,Dim] the word's code vector (no idf)
	proj []float32       // [words,3·Dim] its projections
	// Per-unit scratch.
	q, k, v, a, s, c []float32
}

// NewUnitEncoder returns a UnitEncoder over e.
func (e *AttnEncoder) NewUnitEncoder() *UnitEncoder {
	D, L := e.Dim, e.Len
	return &UnitEncoder{e: e, slot: map[int32]int32{},
		q: make([]float32, L*D), k: make([]float32, L*D), v: make([]float32, L*D), a: make([]float32, L*D), s: make([]float32, L), c: make([]float32, L)}
}

func (u *UnitEncoder) word(id int32) int {
	if r, ok := u.slot[id]; ok {
		return int(r)
	}
	e, D := u.e, u.e.Dim
	r := len(u.slot)
	u.slot[id] = int32(r)
	sc := e.CScale[id]
	for _, x := range e.C[int(id)*D : int(id+1)*D] {
		u.vec = append(u.vec, sc*float32(x))
	}
	u.proj = append(u.proj, make([]float32, 3*D)...)
	e.projectRow(u.proj[r*3*D:(r+1)*3*D], u.vec[r*D:(r+1)*D])
	return r
}

// Encode sets dst [Dim] to the unnormalized vector of the unit whose words
// are ids (in order; the first Len are read): the idf-weighted sum of each
// word's vector plus its position and what it attends to.
func (u *UnitEncoder) Encode(dst []float32, ids []int32) {
	e, D := u.e, u.e.Dim
	clear(dst)
	ids = ids[:min(len(ids), e.Len)]
	L := len(ids)
	if L == 0 {
		return
	}
	for l, id := range ids {
		r := u.word(id)
		pp, wp := e.posProj[l*3*D:(l+1)*3*D], u.proj[r*3*D:(r+1)*3*D]
		x, p := u.vec[r*D:(r+1)*D], e.Pos[l*D:(l+1)*D]
		q, k, v, a := u.q[l*D:(l+1)*D], u.k[l*D:(l+1)*D], u.v[l*D:(l+1)*D], u.a[l*D:(l+1)*D]
		for j := range D {
			q[j] = wp[j] + pp[j]
			k[j] = wp[D+j] + pp[D+j]
			v[j] = wp[2*D+j] + pp[2*D+j]
			a[j] = x[j] + p[j]
		}
	}
	// u = Σ_l w_l·(a_l + Σ_j att_lj·v_j) = Σ_l w_l·a_l + Σ_j c_j·v_j with
	// c_j = Σ_l w_l·att_lj: only the weighted column sums of the
	// attention are needed.
	c := u.c[:L]
	clear(c)
	scale := float32(1 / math.Sqrt(float64(D)))
	for l, id := range ids {
		w := e.IDF[id]
		a := u.a[l*D : (l+1)*D]
		for j, x := range a {
			dst[j] += w * x
		}
		q := u.q[l*D : (l+1)*D]
		s := u.s[:L]
		mx := float32(math.Inf(-1))
		for j := range L {
			s[j] = dot(q, u.k[j*D:(j+1)*D]) * scale
			mx = max(mx, s[j])
		}
		var z float32
		for j := range L {
			s[j] = float32(math.Exp(float64(s[j] - mx)))
			z += s[j]
		}
		for j := range L {
			c[j] += w * s[j] / z
		}
	}
	for j, cj := range c {
		for t, x := range u.v[j*D : (j+1)*D] {
			dst[t] += cj * x
		}
	}
}

// dot is the attention's inner product: four running sums, because one
// chain of dependent adds was half of a window's cost.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

const attnEncMagic = "PRAE1\n"

// WriteTo writes the encoder: a magic line, the position count and the
// length of the pair encoder's bytes (uint32), the pair encoder
// (PairEncoder.WriteTo), then Pos, WQ, WK, WV (float32), little-endian.
func (e *AttnEncoder) WriteTo(w io.Writer) (int64, error) {
	var pe bytes.Buffer
	if _, err := e.PairEncoder.WriteTo(&pe); err != nil {
		return 0, err
	}
	var b bytes.Buffer
	b.WriteString(attnEncMagic)
	_ = binary.Write(&b, binary.LittleEndian, [2]uint32{uint32(e.Len), uint32(pe.Len())})
	b.Write(pe.Bytes())
	for _, t := range [][]float32{e.Pos, e.WQ, e.WK, e.WV} {
		_ = binary.Write(&b, binary.LittleEndian, t)
	}
	return b.WriteTo(w)
}

// ReadAttnEncoder parses what WriteTo wrote; its tables alias data as
// ReadPairEncoder's do.
func ReadAttnEncoder(data []byte) (*AttnEncoder, error) {
	bad := func(what string) error { return fmt.Errorf("linemodel: attention encoder: %s", what) }
	if !bytes.HasPrefix(data, []byte(attnEncMagic)) {
		return nil, bad("not an attention encoder (bad magic)")
	}
	data = data[len(attnEncMagic):]
	if len(data) < 8 {
		return nil, bad("truncated header")
	}
	L, n := int(binary.LittleEndian.Uint32(data)), int(binary.LittleEndian.Uint32(data[4:]))
	data = data[8:]
	if L <= 0 || L > 4096 || n > len(data) {
		return nil, bad(fmt.Sprintf("%d positions, %d bytes of tables in %d", L, n, len(data)))
	}
	pe, err := ReadPairEncoder(data[:n])
	if err != nil {
		return nil, bad(err.Error())
	}
	data = data[n:]
	D := pe.Dim
	if want := 4 * (L*D + 3*D*D); len(data) != want {
		return nil, bad(fmt.Sprintf("%d bytes of attention weights, want %d", len(data), want))
	}
	e := &AttnEncoder{PairEncoder: pe, Len: L}
	e.Pos, data = readFloats(data, L*D)
	e.WQ, data = readFloats(data, D*D)
	e.WK, data = readFloats(data, D*D)
	e.WV, _ = readFloats(data, D*D)
	e.project()
	return e, nil
}
