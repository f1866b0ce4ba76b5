package lexical

import "context"

// IsStopword reports whether s (a lowercased piece) is a stopword of the
// baselines' list.
func IsStopword(s string) bool { return isStopword(s) }

// isStopword reports whether s is on the English stopword list of the eval
// baselines (shared/evalsets/baselines.py, STOP). The list must stay
// identical to it so that BM25 reproduces the published baseline numbers.
func isStopword(s string) bool {
	switch s {
	case "a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to",
		"in", "on", "at", "by", "for", "with", "from", "into", "onto", "over",
		"under", "as", "is", "are", "was", "were", "be", "been", "being", "it",
		"its", "this", "that", "these", "those", "there", "here", "when", "where",
		"which", "who", "whom", "what", "why", "how", "not", "no", "do", "does",
		"did", "done", "can", "could", "should", "would", "will", "shall", "may",
		"might", "must", "so", "such", "than", "too", "very", "also", "just",
		"only", "more", "most", "some", "any", "all", "each", "both", "few",
		"other", "same", "own", "via", "per", "up", "out", "off", "about", "after",
		"before", "again", "further", "once", "we", "you", "he", "she", "they",
		"i", "me", "my", "our", "your", "their", "them", "us", "his", "her":
		return true
	}
	return false
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool { return isUpper(c) || isLower(c) || isDigit(c) }

// forEachPiece calls fn with every identifier piece of s, in order, as a
// sub-slice of s (not lowercased). It is a hand-written equivalent of the
// baselines' two regular expressions: words are runs of ASCII [A-Za-z0-9]
// (every other byte, non-ASCII and invalid UTF-8 included, separates), and a
// word is cut by
//
//	[A-Z]+(?=[A-Z][a-z]) | [A-Z]?[a-z]+ | [A-Z]+ | [0-9]+
//
// Go's regexp has no look-ahead, and a byte scanner is also several times
// faster on megabyte inputs.
func forEachPiece(s string, fn func(piece string)) {
	forEachPieceStop(s, func(p string) bool { fn(p); return true }, nil)
}

// pieceCheckBytes is how far forEachPieceStop scans between calls of stop.
const pieceCheckBytes = 64 << 10

// forEachPieceStop is forEachPiece that ends early, returning false, when
// fn returns false or stop (called every pieceCheckBytes of s; nil for
// never) returns true.
func forEachPieceStop(s string, fn func(piece string) bool, stop func() bool) bool {
	i, check := 0, pieceCheckBytes
	for i < len(s) {
		if i >= check {
			if stop != nil && stop() {
				return false
			}
			check = i + pieceCheckBytes
		}
		c := s[i]
		switch {
		case isDigit(c):
			j := i + 1
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if !fn(s[i:j]) {
				return false
			}
			i = j
		case isLower(c):
			j := i + 1
			for j < len(s) && isLower(s[j]) {
				j++
			}
			if !fn(s[i:j]) {
				return false
			}
			i = j
		case isUpper(c):
			j := i + 1
			for j < len(s) && isUpper(s[j]) {
				j++
			}
			switch {
			case j < len(s) && isLower(s[j]) && j-i >= 2:
				// "HTTPServer": the upper run minus its last letter, which
				// starts the next capitalised word.
				if !fn(s[i : j-1]) {
					return false
				}
				i = j - 1
			case j < len(s) && isLower(s[j]):
				k := j + 1
				for k < len(s) && isLower(s[k]) {
					k++
				}
				if !fn(s[i:k]) {
					return false
				}
				i = k
			default:
				if !fn(s[i:j]) {
					return false
				}
				i = j
			}
		default:
			i++
		}
	}
	return true
}

// lower appends the ASCII lowercase of piece to buf[:0]; pieces are ASCII
// by construction.
func lower(buf []byte, piece string) []byte {
	buf = buf[:0]
	for i := 0; i < len(piece); i++ {
		c := piece[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// Tokens returns the lowercased identifier pieces of s, as the baselines'
// ident_tokens does: "parseHTTPRequest_v2" gives parse, http, request, v, 2.
func Tokens(s string) []string {
	var out []string
	var buf []byte
	forEachPiece(s, func(p string) {
		buf = lower(buf, p)
		out = append(out, string(buf))
	})
	return out
}

// EachToken calls fn with the lowercased identifier pieces of s, in the
// order Tokens returns them, until fn returns false. It looks at ctx every
// 64 KB of s, so that a single huge line does not hold up a cancellation,
// and returns ctx.Err() when ctx is done.
func EachToken(ctx context.Context, s string, fn func(tok string) bool) error {
	var buf []byte
	var err error
	stop := func() bool { err = ctx.Err(); return err != nil }
	forEachPieceStop(s, func(p string) bool {
		buf = lower(buf, p)
		return fn(string(buf))
	}, stop)
	return err
}

// EachTokenBytes is EachToken without a string per piece: fn sees the
// lowercased piece in a buffer that the next call overwrites.
func EachTokenBytes(ctx context.Context, s string, fn func(tok []byte) bool) error {
	var buf []byte
	var err error
	stop := func() bool { err = ctx.Err(); return err != nil }
	forEachPieceStop(s, func(p string) bool {
		buf = lower(buf, p)
		return fn(buf)
	}, stop)
	return err
}

// QueryTokens returns the query's pieces the way the baselines match them:
// unique, in first-seen order, without stopwords and 1-character pieces.
func QueryTokens(query string) []string {
	var out []string
	seen := map[string]struct{}{}
	var buf []byte
	forEachPiece(query, func(p string) {
		if len(p) < 2 {
			return
		}
		buf = lower(buf, p)
		if isStopword(string(buf)) {
			return
		}
		if _, ok := seen[string(buf)]; ok {
			return
		}
		t := string(buf)
		seen[t] = struct{}{}
		out = append(out, t)
	})
	return out
}
