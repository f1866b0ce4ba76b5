package linemodel

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/prunekit/pruner/internal/lexical"
)

// Word vectors let a question's words meet the code that does what they
// say without naming it ("repeated stars" and "compress consecutive"): the
// soft-match columns score each line by how close its words come to the
// query's, in vectors learned here, in Go, by skip-gram over the training
// repositories' files (train.TrainWordVectors; go run ./examples/train
// -wordvec). They are part of the feature definition, like the stemmer:
// a checkpoint trained with other vectors is another feature set.

// WordVectors are unit word vectors quantized to int8 (component ·127),
// with each word's corpus idf.
type WordVectors struct {
	Words []string
	Dim   int
	Vecs  []int8    // len(Words)×Dim
	IDF   []float32 // per word
	index wordIndex
}

// NewWordVectors returns vectors of words from row-major float vectors
// (normalised and quantized here) and their idf.
func NewWordVectors(words []string, vecs []float32, idf []float32, dim int) (*WordVectors, error) {
	if dim <= 0 || len(vecs) != len(words)*dim || len(idf) != len(words) {
		return nil, fmt.Errorf("linemodel: word vectors: %d words, %d values, %d idfs at width %d", len(words), len(vecs), len(idf), dim)
	}
	wv := &WordVectors{Words: words, Dim: dim, Vecs: make([]int8, len(vecs)), IDF: idf}
	for i := range words {
		v := vecs[i*dim : (i+1)*dim]
		n := 0.0
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		n = math.Sqrt(n) + 1e-12
		for j, x := range v {
			wv.Vecs[i*dim+j] = int8(math.Round(float64(x) / n * 127))
		}
	}
	wv.index = newWordIndex(wv.Words)
	return wv, nil
}

// wordIndex maps a word table's words to their rows.
type wordIndex map[string]int32

func newWordIndex(words []string) wordIndex {
	ix := make(wordIndex, len(words))
	for i, w := range words {
		ix[w] = int32(i)
	}
	return ix
}

// id returns w's row, or -1.
func (ix wordIndex) id(w string) int32 {
	if i, ok := ix[w]; ok {
		return i
	}
	return -1
}

// ID returns w's row, or -1.
func (wv *WordVectors) ID(w string) int32 { return wv.index.id(w) }

// Cos returns the cosine of words a and b (rows).
func (wv *WordVectors) Cos(a, b int32) float32 {
	D := wv.Dim
	va, vb := wv.Vecs[int(a)*D:int(a+1)*D], wv.Vecs[int(b)*D:int(b+1)*D]
	var s int32
	for j := range va {
		s += int32(va[j]) * int32(vb[j])
	}
	return float32(s) / (127 * 127)
}

const wordVecMagic = "PRWV1\n"

// WriteTo writes the vectors: a magic line, the word count and width, the
// words (newline-terminated), the idfs (float32) and the vectors (int8),
// little-endian.
func (wv *WordVectors) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	writeWordTable(&b, wordVecMagic, wv.Words, wv.Dim)
	_ = binary.Write(&b, binary.LittleEndian, wv.IDF)
	_ = binary.Write(&b, binary.LittleEndian, wv.Vecs)
	return b.WriteTo(w)
}

// ReadWordVectors parses what WriteTo wrote.
func ReadWordVectors(data []byte) (*WordVectors, error) {
	bad := func(what string) error { return fmt.Errorf("linemodel: word vectors: %s", what) }
	words, D, data, err := readWordTable(data, wordVecMagic, "a word-vector")
	if err != nil {
		return nil, bad(err.Error())
	}
	V := len(words)
	wv := &WordVectors{Dim: D, Words: words}
	if len(data) != V*4+V*D {
		return nil, bad(fmt.Sprintf("%d bytes of idfs and vectors, want %d", len(data), V*4+V*D))
	}
	wv.IDF = make([]float32, V)
	for i := range wv.IDF {
		wv.IDF[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[i*4:]))
	}
	data = data[V*4:]
	wv.Vecs = make([]int8, V*D)
	for i, c := range data {
		wv.Vecs[i] = int8(c)
	}
	wv.index = newWordIndex(wv.Words)
	return wv, nil
}

//go:embed wordvec/wordvec.bin
var wordVecData []byte

// shippedWordVectors parses the embedded vectors once; they are read-only
// after that, like a table compiled into the binary.
var shippedWordVectors = sync.OnceValues(func() (*WordVectors, error) {
	if len(wordVecData) == 0 {
		return nil, errors.New("linemodel: no word vectors embedded")
	}
	return ReadWordVectors(wordVecData)
})

// FeatureSetID fingerprints what the features are computed from (their
// names and the shipped word vectors), for caches of computed features.
func FeatureSetID() string {
	h := fnv.New32a()
	fmt.Fprintln(h, strings.Join(FeatureNames, ","))
	h.Write(wordVecData)
	h.Write(encoderData)
	return fmt.Sprintf("%08x", h.Sum32())
}

// WordStream returns the words of s in order as the word vectors see them:
// its lowercased identifier pieces, stemmed, without stopwords, one-letter
// pieces and numbers.
func WordStream(s string) []string {
	var out []string
	_ = lexical.EachToken(context.Background(), s, func(t string) bool {
		if w, ok := vecWord(t); ok {
			out = append(out, w)
		}
		return true
	})
	return out
}

// vecWord maps a lexical piece to its vector word.
func vecWord(t string) (string, bool) {
	if len(t) < 2 || lexical.IsStopword(t) || strings.Trim(t, "0123456789") == "" {
		return "", false
	}
	return stem(t), true
}

// maxSoftScan bounds the bytes of a line that the soft-match columns read
// (a 50,000-character line costs no more than a short one), and
// maxSoftWords its words.
const (
	maxSoftScan  = 1024
	maxSoftWords = 48
)

// maxPieceCache bounds the distinct pieces whose word newSoftMatch
// remembers: a text of random identifiers costs a lookup per piece, not
// memory per piece.
const maxPieceCache = 1 << 16

// pieceIDs remembers the row of each distinct lexical piece's word in a
// word table (-1 for none): a piece costs one map lookup after its first
// stemming, and at most maxPieceCache pieces are remembered.
type pieceIDs struct {
	m  map[string]int32
	id func(word string) int32
}

func newPieceIDs(id func(word string) int32) pieceIDs {
	return pieceIDs{m: map[string]int32{}, id: id}
}

func (p pieceIDs) of(b []byte) int32 {
	if id, ok := p.m[string(b)]; ok {
		return id
	}
	id := int32(-1)
	if w, ok := vecWord(string(b)); ok {
		id = p.id(w)
	}
	if len(p.m) < maxPieceCache {
		p.m[string(b)] = id
	}
	return id
}

// softMatch is the per-file state of the soft-match columns: each line's
// soft share of the query (see softColumns).
type softMatch struct {
	share, only []float32
}

// newSoftMatch scores each line against the query's words: for each
// query word, its best cosine (clipped at 0) with a word of the line,
// weighted by the query word's corpus idf; share is their weighted mean,
// only the same counting only the query words the line does not hold
// verbatim. A word's cosines with the query are computed once per file.
func newSoftMatch(ctx context.Context, wv *WordVectors, query string, lines []string) softMatch {
	n := len(lines)
	sm := softMatch{share: make([]float32, n), only: make([]float32, n)}
	if wv == nil {
		return sm
	}
	var q []int32
	var qw []float32
	seen := map[int32]bool{}
	for _, t := range lexical.QueryTokens(query) {
		w, ok := vecWord(t)
		if !ok {
			continue
		}
		if id := wv.ID(w); id >= 0 && !seen[id] {
			seen[id] = true
			q = append(q, id)
			qw = append(qw, wv.IDF[id])
			if len(q) == maxQueryPieces {
				break
			}
		}
	}
	if len(q) == 0 {
		return sm
	}
	tot := float32(0)
	for _, w := range qw {
		tot += w
	}
	// The query cosines of each vocabulary word, and each distinct piece's
	// word, are computed once per file: a piece costs a map lookup and
	// no allocation.
	cache := map[int32][]float32{}
	pieces := newPieceIDs(wv.ID)
	best := make([]float32, len(q))
	exact := make([]bool, len(q))
	for i, l := range lines {
		if done(ctx, i) {
			return sm
		}
		clear(best)
		clear(exact)
		k := 0
		_ = lexical.EachTokenBytes(ctx, l[:min(len(l), maxSoftScan)], func(b []byte) bool {
			id := pieces.of(b)
			if id < 0 {
				return true
			}
			c, ok := cache[id]
			if !ok {
				c = make([]float32, len(q))
				for j, qi := range q {
					c[j] = max(0, wv.Cos(qi, id))
					if qi == id {
						c[j] = 1
					}
				}
				cache[id] = c
			}
			for j, v := range c {
				best[j] = max(best[j], v)
				if q[j] == id {
					exact[j] = true
				}
			}
			k++
			return k < maxSoftWords
		})
		var s, o float32
		for j, b := range best {
			s += qw[j] * b
			if !exact[j] {
				o += qw[j] * b
			}
		}
		sm.share[i], sm.only[i] = s/tot, o/tot
	}
	return sm
}

// softColumns (soft_share … quoted_win2): the line's soft match of the
// query's words, the part of it from words the line does not hold, the
// best soft match within ±2 lines, and the share of the query's quoted
// fragments the line holds verbatim, alone and within ±2 lines.
func (f *featureState) softColumns(w *rowWriter, i int) {
	if len(f.soft.share) != f.n || len(f.quoted) != f.n {
		w.skip(5)
		return
	}
	lo, hi := max(0, i-2), min(f.n-1, i+2)
	w.put(float64(f.soft.share[i]))
	w.put(float64(f.soft.only[i]))
	w.put(float64(slices.Max(f.soft.share[lo : hi+1])))
	w.put(float64(f.quoted[i]))
	w.put(float64(slices.Max(f.quoted[lo : hi+1])))
}

// maxQuoted bounds the fragments and their length: what an agent quotes
// is a flag, a literal or an identifier, not a paragraph.
const (
	maxQuoted    = 8
	maxQuotedLen = 40
)

// quotedFragments returns the fragments the query quotes: in backticks,
// or in single or double quotes that open at a word boundary (so that
// "didn't" opens nothing), at most maxQuotedLen bytes, distinct.
func quotedFragments(query string) []string {
	var out []string
	for i := 0; i < len(query) && len(out) < maxQuoted; i++ {
		c := query[i]
		if c != '`' && c != '\'' && c != '"' {
			continue
		}
		if c != '`' && i > 0 && isWordByte(query[i-1]) {
			continue
		}
		j := strings.IndexByte(query[i+1:], c)
		if j <= 0 {
			continue
		}
		frag := query[i+1 : i+1+j]
		end := i + 1 + j
		if c != '`' && end+1 < len(query) && isWordByte(query[end+1]) {
			continue // a closing quote inside a word is an apostrophe
		}
		if t := strings.TrimSpace(frag); t != "" && len(frag) <= maxQuotedLen && !slices.Contains(out, t) {
			out = append(out, t)
		}
		i = end
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// newQuotedMatch returns each line's share of the query's quoted fragments
// that it holds verbatim (reading at most maxSoftScan bytes of it).
func newQuotedMatch(ctx context.Context, query string, lines []string) []float32 {
	out := make([]float32, len(lines))
	frags := quotedFragments(query)
	if len(frags) == 0 {
		return out
	}
	for i, l := range lines {
		if done(ctx, i) {
			return out
		}
		head := l[:min(len(l), maxSoftScan)]
		k := 0
		for _, fr := range frags {
			if strings.Contains(head, fr) {
				k++
			}
		}
		out[i] = float32(k) / float32(len(frags))
	}
	return out
}

// writeWordTable writes the head of a word table file: a magic line, the
// word count and width (uint32, little-endian) and the words, each
// newline-terminated.
func writeWordTable(b *bytes.Buffer, magic string, words []string, dim int) {
	b.WriteString(magic)
	_ = binary.Write(b, binary.LittleEndian, [2]uint32{uint32(len(words)), uint32(dim)})
	for _, x := range words {
		b.WriteString(x)
		b.WriteByte('\n')
	}
}

// readWordTable parses what writeWordTable wrote and returns the words,
// the width and the bytes after them.
func readWordTable(data []byte, magic, kind string) (words []string, dim int, rest []byte, err error) {
	if !bytes.HasPrefix(data, []byte(magic)) {
		return nil, 0, nil, fmt.Errorf("not %s file", kind)
	}
	data = data[len(magic):]
	if len(data) < 8 {
		return nil, 0, nil, errors.New("truncated header")
	}
	V, D := int(binary.LittleEndian.Uint32(data)), int(binary.LittleEndian.Uint32(data[4:]))
	data = data[8:]
	if D <= 0 || D > 1024 || V < 0 || V > 1<<22 {
		return nil, 0, nil, fmt.Errorf("%d words of width %d", V, D)
	}
	words = make([]string, 0, V)
	for range V {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, 0, nil, errors.New("truncated words")
		}
		words = append(words, string(data[:i]))
		data = data[i+1:]
	}
	return words, D, data, nil
}
