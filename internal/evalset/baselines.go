package evalset

import (
	"crypto/sha1"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/prunekit/pruner/internal/lexical"
)

// Budget is the number of lines every method keeps at ratio r of n lines:
// max(1, min(n, round(r·n))) with Python's round-half-to-even, as in
// baselines.py. It is 0 for an empty text (where Python would ask for a
// line that does not exist).
func Budget(r float64, n int) int {
	if n <= 0 {
		return 0
	}
	return max(1, min(n, int(math.RoundToEven(r*float64(n)))))
}

// First is the first-N baseline: line numbers 1..k of n lines.
func First(n, k int) []int {
	k = max(0, min(k, n))
	out := make([]int, k)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// Random is the random baseline: k of the line numbers 1..n drawn without
// replacement, seeded by the case id and the ratio r exactly as baselines.py
// does (seed = first 12 hex digits of sha1("<id>|<repr(r)>") fed to
// Python's Mersenne Twister, then random.sample), so it draws the same
// lines, in the same order. k is clamped to [0, n].
func Random(caseID string, r float64, n, k int) []int {
	k = max(0, min(k, n))
	sum := sha1.Sum([]byte(caseID + "|" + pyFloatRepr(r)))
	seed, err := strconv.ParseUint(hex.EncodeToString(sum[:])[:12], 16, 64)
	if err != nil { // unreachable: 12 hex digits always parse
		seed = 0
	}
	return newPyRandom(seed).sample(n, k)
}

// BM25 is the BM25 baseline: the 1-based numbers of the k lines of text with
// the highest lexical.BM25 scores against query, best first, ties to the
// earlier line.
func BM25(query, text string, k int) []int {
	top := lexical.TopK(lexical.BM25(query, Lines(text)), k)
	for i := range top {
		top[i]++
	}
	return top
}

// pyFloatRepr formats f as Python's repr(float) does for the values a ratio
// takes: shortest round-trip digits, ".0" on integral values, exponent form
// below 1e-4 and from 1e16 on.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		// Go's shortest 'e' form writes exponents as Python does (1e-05,
		// 1e+16).
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
