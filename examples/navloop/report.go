package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// kindOrder is the order of the question kinds in tables; other kinds
// follow in name order, cases without a kind as "commit".
var kindOrder = []string{"locate", "explain", "debug", "change", "usage", "tool"}

// kindOf is a case's kind in tables.
func kindOf(r caseRecord) string {
	if r.Kind == "" {
		return "commit"
	}
	return r.Kind
}

// stats are one setting's metrics over a group of cases.
type stats struct {
	n        int
	recall   float64 // mean recall of the lines read
	hit      float64 // share of cases with every gold line read
	unfold   float64 // share of cases whose reader asked to unfold
	tokens   float64 // mean share of the input's tokens read
	median   float64 // median of the same
	grades   map[string]int
	unjudged bool // no case was judged
}

// summarize computes the stats of setting index s over recs.
func summarize(recs []caseRecord, s int) stats {
	st := stats{n: len(recs), grades: map[string]int{}, unjudged: true}
	if len(recs) == 0 {
		return st
	}
	shares := make([]float64, 0, len(recs))
	for _, r := range recs {
		e := r.Settings[s]
		st.recall += e.Recall
		st.hit += e.Hit
		if e.Unfold != "" {
			st.unfold++
		}
		shares = append(shares, e.tokensRead(r.InputTokens))
		st.tokens += shares[len(shares)-1]
		if r.Judge != nil {
			st.unjudged = false
			g, ok := r.Judge.Grades[e.Setting]
			if !ok {
				g = gradeNone
			}
			st.grades[g]++
		}
	}
	n := float64(len(recs))
	st.recall /= n
	st.hit /= n
	st.unfold /= n
	st.tokens /= n
	st.median = median(shares)
	return st
}

// median returns the median of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}

// group is a named set of cases.
type group struct {
	name string
	recs []caseRecord
}

// groups splits recs by kind, in kindOrder, then "overall" (every case).
func groups(recs []caseRecord) []group {
	by := map[string][]caseRecord{}
	var names []string
	for _, r := range recs {
		k := kindOf(r)
		if _, ok := by[k]; !ok {
			names = append(names, k)
		}
		by[k] = append(by[k], r)
	}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(kindOrder, a), slices.Index(kindOrder, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []group
	for _, k := range names {
		out = append(out, group{name: k, recs: by[k]})
	}
	return append(out, group{name: "overall", recs: recs})
}

// report prints two tables: every metric per setting for each kind and
// overall, then recall and mean tokens read per setting and kind.
func report(w io.Writer, recs []caseRecord, markdown bool) error {
	if len(recs) == 0 {
		_, err := fmt.Fprintln(w, "no cases")
		return err
	}
	first := recs[0]
	judged := slices.ContainsFunc(recs, func(r caseRecord) bool { return r.Judge != nil })
	gs := groups(recs)
	t := newTable(w, markdown)
	t.line("first view %s, reader %s, %d cases; tokens read = first view + reply, a share of the input's tokens", first.First, first.Reader, len(recs))
	t.blank()
	head := []string{"kind", "setting", "cases", "recall", "all gold", "unfold", "tokens mean", "tokens median"}
	if judged {
		head = append(head, grades...)
	}
	t.row(head...)
	for _, g := range gs {
		for i, s := range settings {
			st := summarize(g.recs, i)
			row := []string{g.name, s.label, fmt.Sprint(st.n), f3(st.recall), f3(st.hit), f3(st.unfold), f3(st.tokens), f3(st.median)}
			if judged {
				for _, gr := range grades {
					row = append(row, fmt.Sprint(st.grades[gr]))
				}
			}
			t.row(row...)
		}
	}
	t.blank()
	t.line("recall (mean tokens read) by kind")
	t.blank()
	head = []string{"setting"}
	for _, g := range gs {
		head = append(head, fmt.Sprintf("%s (%d)", g.name, len(g.recs)))
	}
	t.row(head...)
	for i, s := range settings {
		row := []string{s.label}
		for _, g := range gs {
			st := summarize(g.recs, i)
			row = append(row, fmt.Sprintf("%s (%s)", f3(st.recall), f3(st.tokens)))
		}
		t.row(row...)
	}
	return t.flush()
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

// table prints rows through a tabwriter, or as Markdown tables (a header
// rule after the first row of each).
type table struct {
	tw       *tabwriter.Writer
	markdown bool
	rows     int // rows since the last blank line
	err      error
}

func newTable(w io.Writer, markdown bool) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), markdown: markdown}
}

func (t *table) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.tw, format, args...)
	}
}

func (t *table) line(format string, args ...any) { t.printf(format+"\n", args...) }

func (t *table) blank() {
	t.printf("\n")
	t.rows = 0
}

func (t *table) row(cells ...string) {
	if !t.markdown {
		t.printf("%s\n", strings.Join(cells, "\t"))
		return
	}
	t.printf("| %s |\n", strings.Join(cells, " | "))
	if t.rows == 0 {
		t.printf("|%s\n", strings.Repeat(" --- |", len(cells)))
	}
	t.rows++
}

func (t *table) flush() error {
	if t.err != nil {
		return fmt.Errorf("report: %w", t.err)
	}
	if err := t.tw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
