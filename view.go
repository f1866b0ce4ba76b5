package pruner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/prunekit/pruner/internal/lines"
)

// ErrOtherInput is returned by Delta for two results that are not views of
// one input.
var ErrOtherInput = errors.New("results of different inputs")

// outRow is one line of a Result's Text: its input line number, 0 for a
// placeholder (or filler) line.
type outRow struct {
	num  int
	text string // with its terminator
}

// rows splits r.Text into its lines and numbers them: the kept input
// lines in order, the placeholders at the output lines they name.
func (r *Result) rows() []outRow {
	ph := make(map[int]bool, len(r.Placeholders))
	for _, p := range r.Placeholders {
		ph[p.OutputLine] = true
	}
	kept := r.KeptLines()
	parts := strings.SplitAfter(r.Text, "\n")
	if n := len(parts); n > 0 && parts[n-1] == "" {
		parts = parts[:n-1]
	}
	out := make([]outRow, len(parts))
	next := 0
	for i, l := range parts {
		out[i].text = l
		if !ph[i+1] && next < len(kept) {
			out[i].num = kept[next]
			next++
		}
	}
	return out
}

// writeNumbered writes one row as nl -ba does (lines.AppendNumbered): a
// placeholder's number column is blank.
func writeNumbered(b *[]byte, row outRow) {
	*b = lines.AppendNumbered(*b, row.num, row.text)
}

// Numbered returns r.Text with every line prefixed by its input line
// number as `nl -ba` prints it (six columns and a tab); placeholder lines
// get a blank number column.
func (r *Result) Numbered() string {
	b := make([]byte, 0, len(r.Text)+(lines.NumberWidth+1)*(strings.Count(r.Text, "\n")+1))
	for _, row := range r.rows() {
		writeNumbered(&b, row)
	}
	return string(b)
}

// Delta returns only what r shows that prev did not: each run of input
// lines r keeps and prev folded, numbered as Numbered numbers them, with
// r's placeholders right above and below the run (what is still folded
// around it). It is the reply to a reader who has prev already and asked
// to unfold (r = prev.Unfold(...), in one step or several): the reader's
// context holds prev's view, so only the new lines need sending. Delta
// returns "" when r shows no line prev did not.
//
// r and prev must be results of one input (ErrOtherInput): Delta compares
// their texts when both come from Prune, their line counts otherwise.
func (r *Result) Delta(prev *Result) (string, error) {
	if prev == nil {
		return "", fmt.Errorf("pruner: delta: %w: no earlier result", ErrOtherInput)
	}
	if len(r.Lines) != len(prev.Lines) || r.src != nil && prev.src != nil && r.src.text != prev.src.text {
		return "", fmt.Errorf("pruner: delta: %w: the inputs differ (%d and %d lines)", ErrOtherInput, len(r.Lines), len(prev.Lines))
	}
	rows := r.rows()
	fresh := func(i int) bool {
		n := rows[i].num
		return n > 0 && r.Lines[n-1].Kept && !prev.Lines[n-1].Kept
	}
	show := make([]bool, len(rows))
	found := false
	for i := range rows {
		if !fresh(i) {
			continue
		}
		found = true
		show[i] = true
		if i > 0 && rows[i-1].num == 0 {
			show[i-1] = true
		}
		if i+1 < len(rows) && rows[i+1].num == 0 {
			show[i+1] = true
		}
	}
	if !found {
		return "", nil
	}
	var b []byte
	for i, row := range rows {
		if show[i] {
			writeNumbered(&b, row)
			if !strings.HasSuffix(row.text, "\n") {
				b = append(b, '\n')
			}
		}
	}
	return string(b), nil
}
