// Package lexical is the library's lexical scorer: Okapi BM25 over lines,
// with the identifier splitting of the eval baselines
// (shared/evalsets/baselines.py). It is the built-in baseline and the
// last-resort fallback when no model is available; it needs no weights and
// scores a megabyte in milliseconds.
package lexical

import (
	"context"
	"math"
	"sort"
)

// BM25 parameters of the eval baselines.
const (
	defaultK1 = 1.2
	defaultB  = 0.75
)

// BM25 returns the raw Okapi BM25 score (k1 = 1.2, b = 0.75) of every line
// against query, with every line a document and lines the corpus. It
// reproduces bm25_scores of shared/evalsets/baselines.py, floating-point
// summation order included, so a top-k selection from these scores equals
// the baseline's. Lines without a query piece score 0; an empty query (or
// one made of stopwords only) scores every line 0.
func BM25(query string, lines []string) []float64 {
	scores, _, _ := bm25(context.Background(), query, len(lines), func(i int) string { return lines[i] })
	return scores
}

// BM25Context is BM25 that stops early, returning ctx.Err(), when ctx is
// done; it looks every few thousand lines or megabyte of text.
func BM25Context(ctx context.Context, query string, lines []string) ([]float64, error) {
	scores, _, err := bm25(ctx, query, len(lines), func(i int) string { return lines[i] })
	return scores, err
}

// Cancellation is checked after this many lines or bytes of text,
// whichever comes first: a few milliseconds of work.
const (
	checkLines = 4096
	checkBytes = 1 << 20
)

// tfEntry is the frequency of query piece q in one line.
type tfEntry struct {
	q, f int32
}

// bm25 scores n lines given by line(i). Only the pieces of the query are
// counted per line (plus each line's piece count), which keeps the pass
// allocation-free per piece and linear in the text size. coverage is the
// share of query pieces found in some line (0 for an empty query).
func bm25(ctx context.Context, query string, n int, line func(i int) string) (scores []float64, coverage float64, err error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	scores = make([]float64, n)
	qt := QueryTokens(query)
	if len(qt) == 0 || n == 0 {
		return scores, 0, nil
	}
	// Query pieces by length: a text piece is compared (ASCII case-folded,
	// in place) only with the few query pieces of its length, which is
	// cheaper than lowercasing and hashing every piece of a megabyte.
	var byLen [64][]int32
	for i, t := range qt {
		l := min(len(t), 63)
		byLen[l] = append(byLen[l], int32(i))
	}
	dl := make([]int32, n)
	off := make([]int32, n+1)
	var entries []tfEntry
	counts := make([]int32, len(qt))
	var touched []int32
	var total int64
	lastLine, bytes := 0, 0
	for i := 0; i < n; i++ {
		if i-lastLine >= checkLines || bytes >= checkBytes {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
			lastLine, bytes = i, 0
		}
		off[i] = int32(len(entries))
		var pieces int32
		text := line(i)
		bytes += len(text)
		ok := forEachPieceStop(text, func(p string) bool {
			pieces++
			for _, q := range byLen[min(len(p), 63)] {
				if equalFold(p, qt[q]) {
					if counts[q] == 0 {
						touched = append(touched, q)
					}
					counts[q]++
					return true
				}
			}
			return true
		}, func() bool { return ctx.Err() != nil })
		if !ok {
			return nil, 0, ctx.Err()
		}
		dl[i] = pieces
		total += int64(pieces)
		// The baseline sums a line's terms in query order; sorting the few
		// touched pieces keeps the floating-point sum bit-identical.
		sortInt32s(touched)
		for _, q := range touched {
			entries = append(entries, tfEntry{q: q, f: counts[q]})
			counts[q] = 0
		}
		touched = touched[:0]
	}
	off[n] = int32(len(entries))
	if len(entries) == 0 {
		return scores, 0, nil
	}

	df := make([]int, len(qt))
	for _, e := range entries {
		df[e.q]++
	}
	idf := make([]float64, len(qt))
	fn := float64(n)
	present := 0
	for q, d := range df {
		if d > 0 {
			present++
			idf[q] = math.Log(1 + (float64(n-d)+0.5)/(float64(d)+0.5))
		}
	}
	// Variables, not constants: Go folds constant expressions exactly,
	// Python rounds every step, and k1+1 must round the same way.
	k1, b := defaultK1, defaultB
	k1p1 := k1 + 1
	oneMinusB := 1 - b
	avgdl := float64(total) / fn
	for i := 0; i < n; i++ {
		es := entries[off[i]:off[i+1]]
		if len(es) == 0 {
			continue
		}
		norm := k1 * (oneMinusB + b*float64(dl[i])/avgdl)
		var s float64
		for _, e := range es {
			f := float64(e.f)
			s += idf[e.q] * f * k1p1 / (f + norm)
		}
		scores[i] = s
	}
	return scores, float64(present) / float64(len(qt)), nil
}

// equalFold reports whether piece, ASCII-lowercased, equals the lowercase
// token tok.
func equalFold(piece, tok string) bool {
	if len(piece) != len(tok) {
		return false
	}
	for i := 0; i < len(piece); i++ {
		c := piece[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != tok[i] {
			return false
		}
	}
	return true
}

// sortInt32s sorts a short slice in place (insertion sort: a line touches
// only a handful of query pieces).
func sortInt32s(a []int32) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// TopK returns the indices of the k highest scores, best first; ties go to
// the earlier index and NaN ranks below every number, as the baselines'
// sort by (-score, index) does. k is clamped to [0, len(scores)].
func TopK(scores []float64, k int) []int {
	k = max(0, min(k, len(scores)))
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := scores[order[a]], scores[order[b]]
		if math.IsNaN(y) {
			return !math.IsNaN(x)
		}
		return x > y
	})
	return order[:k:k]
}
