package linemodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// A PairEncoder maps a question and a piece of code to vectors whose
// cosine ranks the code that does what the question says above the rest
// of its file. It is a bag of code-aware words (WordStream: identifier
// pieces, stemmed) with two tables, one for the natural-language side and
// one for the code side, trained contrastively on pairs that code carries
// itself: a doc comment and the definition under it, an inline comment and
// the statements it introduces, with the other definitions and blocks of
// the same file as negatives (train.TrainPairEncoder; go run
// ./examples/train -encoder). Both sides weigh a word by its corpus idf.
type PairEncoder struct {
	Words []string
	Dim   int
	IDF   []float32 // per word
	// Q and C are the natural-language and code tables, len(Words)×Dim,
	// quantized to int8 per row: value = int8 · scale of the row.
	Q, C           []int8
	QScale, CScale []float32
	index          wordIndex
}

// NewPairEncoder quantizes row-major float tables (len(words)×dim each).
func NewPairEncoder(words []string, idf, q, c []float32, dim int) (*PairEncoder, error) {
	V := len(words)
	if dim <= 0 || len(idf) != V || len(q) != V*dim || len(c) != V*dim {
		return nil, fmt.Errorf("linemodel: pair encoder: %d words, %d idfs, %d+%d values at width %d", V, len(idf), len(q), len(c), dim)
	}
	e := &PairEncoder{Words: words, Dim: dim, IDF: idf}
	e.Q, e.QScale = quantizeRows(q, dim)
	e.C, e.CScale = quantizeRows(c, dim)
	e.index = newWordIndex(e.Words)
	return e, nil
}

func quantizeRows(v []float32, dim int) ([]int8, []float32) {
	rows := len(v) / dim
	out, scale := make([]int8, len(v)), make([]float32, rows)
	for r := range rows {
		m := float32(0)
		for _, x := range v[r*dim : (r+1)*dim] {
			m = max(m, float32(math.Abs(float64(x))))
		}
		if m == 0 {
			continue
		}
		scale[r] = m / 127
		for j, x := range v[r*dim : (r+1)*dim] {
			out[r*dim+j] = int8(math.Round(float64(x / scale[r])))
		}
	}
	return out, scale
}

// ID returns w's row, or -1.
func (e *PairEncoder) ID(w string) int32 { return e.index.id(w) }

// AddQuery adds word id's idf-weighted natural-language vector to dst.
func (e *PairEncoder) AddQuery(dst []float32, id int32) {
	e.add(dst, e.Q, e.QScale, id)
}

// AddCode adds word id's idf-weighted code vector to dst.
func (e *PairEncoder) AddCode(dst []float32, id int32) {
	e.add(dst, e.C, e.CScale, id)
}

func (e *PairEncoder) add(dst []float32, tab []int8, scale []float32, id int32) {
	D := e.Dim
	s := scale[id] * e.IDF[id]
	for j, x := range tab[int(id)*D : int(id+1)*D] {
		dst[j] += s * float32(x)
	}
}

// EncodeQuery returns the unit vector of words on the natural-language
// side (nil when none of them is in the vocabulary).
func (e *PairEncoder) EncodeQuery(words []string) []float32 {
	return e.encode(words, e.AddQuery)
}

// EncodeCode returns the unit vector of words on the code side (nil when
// none of them is in the vocabulary).
func (e *PairEncoder) EncodeCode(words []string) []float32 {
	return e.encode(words, e.AddCode)
}

func (e *PairEncoder) encode(words []string, add func([]float32, int32)) []float32 {
	v := make([]float32, e.Dim)
	k := 0
	for _, w := range words {
		if id := e.ID(w); id >= 0 {
			add(v, id)
			k++
		}
	}
	if k == 0 || !Normalize(v) {
		return nil
	}
	return v
}

// Normalize scales v to unit length in place; it reports false for a zero
// vector.
func Normalize(v []float32) bool {
	n := float32(0)
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(float64(n)))
	for j := range v {
		v[j] *= inv
	}
	return true
}

const pairEncMagic = "PRPE1\n"

// WriteTo writes the encoder: a magic line, the word count and width, the
// words (newline-terminated), the idfs, the row scales of Q and C
// (float32) and the tables Q and C (int8), little-endian.
func (e *PairEncoder) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	writeWordTable(&b, pairEncMagic, e.Words, e.Dim)
	_ = binary.Write(&b, binary.LittleEndian, e.IDF)
	_ = binary.Write(&b, binary.LittleEndian, e.QScale)
	_ = binary.Write(&b, binary.LittleEndian, e.CScale)
	_ = binary.Write(&b, binary.LittleEndian, e.Q)
	_ = binary.Write(&b, binary.LittleEndian, e.C)
	return b.WriteTo(w)
}

// ReadPairEncoder parses what WriteTo wrote. The tables alias data (the
// embedded encoder is 20 MB that need not be copied into the heap), which
// must not be modified afterwards.
func ReadPairEncoder(data []byte) (*PairEncoder, error) {
	bad := func(what string) error { return fmt.Errorf("linemodel: pair encoder: %s", what) }
	words, D, data, err := readWordTable(data, pairEncMagic, "a pair-encoder")
	if err != nil {
		return nil, bad(err.Error())
	}
	V := len(words)
	if V == 0 {
		return nil, bad("no words")
	}
	e := &PairEncoder{Dim: D, Words: words}
	if want := V*12 + 2*V*D; len(data) != want {
		return nil, bad(fmt.Sprintf("%d bytes of idfs, scales and tables, want %d", len(data), want))
	}
	e.IDF, data = readFloats(data, V)
	e.QScale, data = readFloats(data, V)
	e.CScale, data = readFloats(data, V)
	ints := func(n int) []int8 {
		out := unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(data))), n)
		data = data[n:]
		return out
	}
	e.Q, e.C = ints(V*D), ints(V*D)
	e.index = newWordIndex(e.Words)
	return e, nil
}

// readFloats decodes n little-endian float32s from the front of data (the
// caller checked its length) and returns them with the rest.
func readFloats(data []byte, n int) ([]float32, []byte) {
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[i*4:]))
	}
	return out, data[n*4:]
}
