package linemodel

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prunekit/pruner/internal/syntax"
)

// Features that read tool output (logs, test runs, compiler errors,
// listings) as well as code. The lexical columns find what the query
// names; in tool output the answer is often what it does not name: the one
// failing test among hundreds that pass, the error among routine log
// lines, the biggest entry of a listing. These columns say what kind of
// line it is without reading the query, and the model learns from the
// tool-output training cases when that matters.

// errorWords mark lines that report a problem, in the words test runners,
// compilers, linters and loggers use.
var errorWords = func() [][]byte {
	var out [][]byte
	for _, w := range []string{
		"error", "fail", "panic", "exception", "traceback", "fatal", "not ok", "assert",
		"expected", "unexpected", "warn", "cannot", "can't", "undefined", "invalid",
		"denied", "refused", "timeout", "timed out", "abort", "crash", "missing", "mismatch",
	} {
		out = append(out, []byte(w))
	}
	return out
}()

// toolInfo is the per-file state of the tool columns.
type toolInfo struct {
	isText bool
	// freq is the number of lines of the file with each line's shape (its
	// text with digit runs collapsed): routine log lines repeat their
	// shape, the lines that stand out do not.
	freq []int32
	// numRank is the rank of each line's largest size-like number among
	// the lines that have one, 1 for the largest, scaled to (0, 1]; 0 for
	// lines without a number. Equal numbers share a rank.
	numRank []float32
	// errWords and loc are the err_word and loc_ref columns.
	errWords []uint8
	loc      []bool
}

// maxToolScan bounds the bytes of a line that the tool columns read: what
// makes a line an error report or a file location is near its start, and
// a 50,000-character line must cost no more than a short one.
const maxToolScan = 1024

func newToolInfo(ctx context.Context, lines []string, lang syntax.Language) toolInfo {
	n := len(lines)
	t := toolInfo{isText: !lang.IsCode(), freq: make([]int32, n), numRank: make([]float32, n),
		errWords: make([]uint8, n), loc: make([]bool, n)}
	shapes := make([]uint64, n)
	count := make(map[uint64]int32)
	type num struct {
		v float64
		i int
	}
	var nums []num
	for i, l := range lines {
		if done(ctx, i) {
			return t
		}
		shapes[i] = lineShape(l)
		count[shapes[i]]++
		head := l[:min(len(l), maxToolScan)]
		if v, ok := largestNumber(head); ok {
			nums = append(nums, num{v, i})
		}
		t.errWords[i] = uint8(min(errorWordCount(head), 2))
		t.loc[i] = hasLocation(head)
	}
	for i, h := range shapes {
		t.freq[i] = count[h]
	}
	// Descending by value, ties by line: equal numbers share no rank, but
	// the order is deterministic.
	slices.SortStableFunc(nums, func(a, b num) int {
		switch {
		case a.v > b.v:
			return -1
		case a.v < b.v:
			return 1
		}
		return a.i - b.i
	})
	for r, x := range nums {
		if r > 0 && x.v == nums[r-1].v {
			t.numRank[x.i] = t.numRank[nums[r-1].i]
			continue
		}
		t.numRank[x.i] = float32(1 - float64(r)/float64(len(nums)))
	}
	return t
}

// toolColumns (is_text … num_rank): whether the text is not code, how many
// problem words the line holds, whether it points at a file location, how
// common its shape is in the file and how large its number is.
func (f *featureState) toolColumns(w *rowWriter, i int) {
	w.put(b2f(f.tool.isText))
	if len(f.tool.freq) != f.n {
		w.skip(4)
		return
	}
	w.put(float64(f.tool.errWords[i]) / 2)
	w.put(b2f(f.tool.loc[i]))
	w.put(math.Log1p(float64(f.tool.freq[i]-1)) / math.Log1p(f.fn))
	w.put(float64(f.tool.numRank[i]))
}

// errorWordCount counts the errorWords in l (at most maxToolScan bytes),
// ignoring ASCII case.
func errorWordCount(l string) int {
	var buf [maxToolScan]byte
	b := buf[:min(len(l), maxToolScan)]
	for i := range b {
		c := l[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	c := 0
	for _, w := range errorWords {
		if bytes.Contains(b, w) {
			c++
		}
	}
	return c
}

// hasLocation reports a file location: "name.ext:12" (with or without a
// column) or ", line 12" (Python tracebacks). One pass: it tracks whether
// the token since the last delimiter holds a '.' or '/', which a path has
// and a time ("12:30:01") does not.
func hasLocation(l string) bool {
	pathy := false
	for p := 0; p < len(l); p++ {
		switch c := l[p]; c {
		case ' ', '\t', '"', '\'', '(', '<', '[':
			pathy = false
		case '.', '/':
			pathy = true
		case ':':
			if pathy && p+1 < len(l) && isDigit(l[p+1]) && p > 0 {
				return true
			}
		}
	}
	for k := 0; ; {
		j := strings.Index(l[k:], "line ")
		if j < 0 {
			return false
		}
		j += k
		if (j == 0 || l[j-1] == ' ' || l[j-1] == ',') && j+5 < len(l) && isDigit(l[j+5]) {
			return true
		}
		k = j + 5
	}
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// lineShape hashes a line with its leading and trailing blanks removed
// and every run of digits (and of hexadecimal digits mixed with them, as
// in hashes and addresses) collapsed to one '0'.
func lineShape(l string) uint64 {
	// FNV-1a, inline: a hash.Hash per line would allocate on every line
	// of every text.
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	l = strings.TrimSpace(l)
	for i := 0; i < len(l); {
		c := l[i]
		i++
		if isDigit(c) {
			for i < len(l) && (isDigit(l[i]) || isHexLetter(l[i])) {
				i++
			}
			c = '0'
		}
		h = (h ^ uint64(c)) * prime
	}
	return h
}

func isHexLetter(b byte) bool { return b >= 'a' && b <= 'f' }

// largestNumber returns the largest size-like number on a line: a
// whitespace-separated token that is a number, optionally with a K, M, G
// or T suffix (as du -h and ls -h print them).
func largestNumber(l string) (float64, bool) {
	best, ok := 0.0, false
	for _, tok := range strings.Fields(l) {
		mult := 1.0
		switch tok[len(tok)-1] {
		case 'K', 'k':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			tok = tok[:len(tok)-1]
		}
		if tok == "" || !isDigit(tok[0]) || len(tok) > 15 {
			continue
		}
		v, err := strconv.ParseFloat(tok, 64)
		if err != nil || math.IsInf(v, 0) {
			continue
		}
		if v*mult > best || !ok {
			best, ok = v*mult, true
		}
	}
	return best, ok
}
