package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/evalset"
)

// simAnswer is the simulated reader's answer: it reads, it does not answer.
const simAnswer = "ANSWER: (the simulated reader does not answer)"

// simReader is the offline reader: where the setting lets it, it unfolds
// once: the item a placeholder hints at ("likely relevant: ITEM",
// pruner.WithFoldHints), by the fold's range in the range setting and by
// the item in the name setting; else the placeholder whose names share the
// most terms with the query (chooseFold), by its range or by its
// best-matching name; then, or without either, it "answers".
type simReader struct{}

func (simReader) reply(_ context.Context, t *turn) (string, error) {
	if len(t.msgs) > 1 || t.first == nil || t.s.unfold == unfoldNone {
		return simAnswer, nil
	}
	item, ok := simChoice(t.c.Query, t.first.Placeholders, t.s.unfold == unfoldRanges)
	if !ok {
		return simAnswer, nil
	}
	return "UNFOLD: " + item, nil
}

// simChoice is what the simulated reader unfolds, in one request: the
// hinted items (by their folds' ranges when ranges is set), else the
// placeholder chooseFold picks (by its range, or by its best-matching
// name); ok is false when neither.
func simChoice(query string, phs []pruner.Placeholder, ranges bool) (item string, ok bool) {
	var hinted []string
	for _, ph := range phs {
		if ph.Hint == "" {
			continue
		}
		if ranges {
			hinted = append(hinted, fmt.Sprintf("%d-%d", ph.FirstLine, ph.LastLine))
		} else {
			hinted = append(hinted, ph.Hint)
		}
	}
	if len(hinted) > 0 {
		return strings.Join(hinted, ", "), true
	}
	ph, name, ok := chooseFold(query, phs)
	switch {
	case !ok:
		return "", false
	case ranges:
		return fmt.Sprintf("%d-%d", ph.FirstLine, ph.LastLine), true
	}
	return name, true
}

// chooseFold is the simulated reader's choice, the rule of examples/eval's
// -unfold: the placeholder whose names share the most query terms (the
// query's identifier pieces without stopwords, as BM25 reads it, each
// counted once; see evalset.NameMatches), the first on ties. name is that
// placeholder's name that matches the most terms (the first on ties). ok is
// false when no placeholder's names match: the reader reads on.
func chooseFold(query string, phs []pruner.Placeholder) (ph pruner.Placeholder, name string, ok bool) {
	best, bestScore := -1, 0
	for i, p := range phs {
		if s := evalset.NameMatches(query, p.Names); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return pruner.Placeholder{}, "", false
	}
	ph = phs[best]
	nameScore := 0
	for _, n := range ph.Names {
		if s := evalset.NameMatches(query, []string{n}); s > nameScore {
			name, nameScore = n, s
		}
	}
	return ph, name, true
}
