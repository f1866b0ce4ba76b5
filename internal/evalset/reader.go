package evalset

import "github.com/prunekit/pruner/internal/lexical"

// The simulated reader of examples/eval -unfold and examples/navloop: it
// reads the names a placeholder prints and matches them to the question's
// words, as BM25 reads them.

// NameMatches counts the query's terms (its identifier pieces without
// stopwords, each counted once) that match a piece of one of names (see
// TermMatch).
func NameMatches(query string, names []string) int {
	var pieces []string
	for _, n := range names {
		pieces = append(pieces, lexical.Tokens(n)...)
	}
	n := 0
	for _, t := range lexical.QueryTokens(query) {
		for _, p := range pieces {
			if TermMatch(t, p) {
				n++
				break
			}
		}
	}
	return n
}

// TermMatch says whether query term t and name piece p are the same word:
// equal, or sharing a stem of at least 4 characters that is all of the
// shorter one but at most two characters ("retry"/"retries").
func TermMatch(t, p string) bool {
	if t == p {
		return true
	}
	n := 0
	for n < len(t) && n < len(p) && t[n] == p[n] {
		n++
	}
	return n >= 4 && n+2 >= min(len(t), len(p))
}
