package main

import (
	"slices"
	"strings"
	"unicode"

	"github.com/prunekit/pruner/examples/train/thesaurus"
	"github.com/prunekit/pruner/internal/evalset"
)

// expandQueries appends to every case's query the code words the
// programming thesaurus relates to it (examples/train/thesaurus): the
// first three terms of each concept whose head words all occur in the query
// (in a plain or a lightly stemmed form), phrases first, at most max new
// words. It
// measures whether query expansion alone, with the scorers unchanged,
// reaches lines that name the asked-for behaviour in other words.
func expandQueries(files []evalset.File, max int) []evalset.File {
	t, err := thesaurus.Default()
	if err != nil {
		return files
	}
	out := make([]evalset.File, len(files))
	for i, f := range files {
		f.Cases = append([]evalset.Case(nil), f.Cases...)
		for k := range f.Cases {
			f.Cases[k].Query = expandQuery(t, f.Cases[k].Query, max)
		}
		out[i] = f
	}
	return out
}

func expandQuery(t map[string][]string, q string, max int) string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	have := map[string]bool{}
	var in []string
	for _, w := range words {
		for _, v := range []string{w, strings.TrimSuffix(w, "s"), strings.TrimSuffix(w, "es"), strings.TrimSuffix(w, "ing"), strings.TrimSuffix(w, "ed"), strings.TrimSuffix(w, "d")} {
			if len(v) >= 2 && !have[v] {
				have[v] = true
				in = append(in, v)
			}
		}
	}
	// Concepts whose head words all occur in the query, phrases first;
	// from each, its first (most specific) perConcept new terms.
	const perConcept = 3
	heads := thesaurus.Matches(t, in)
	slices.SortStableFunc(heads, func(a, b string) int {
		return len(strings.Fields(b)) - len(strings.Fields(a))
	})
	var add []string
	for _, h := range heads {
		n := 0
		for _, w := range t[h] {
			if n == perConcept || len(add) == max {
				break
			}
			if !have[w] && !strings.Contains(w, " ") {
				have[w] = true
				add = append(add, w)
				n++
			}
		}
	}
	if len(add) == 0 {
		return q
	}
	var b strings.Builder
	b.WriteString(q)
	for _, a := range add {
		b.WriteString(" ")
		b.WriteString(a)
	}
	return b.String()
}
