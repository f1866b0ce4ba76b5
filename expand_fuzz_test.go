package pruner_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/prunekit/pruner"
)

var fuzzExpand struct {
	once sync.Once
	res  *pruner.Result
	err  error
}

// FuzzParseLineRanges: any string parses to valid ranges or to an error
// wrapping ErrLineRange, with a bounded message; parsed ranges print back to
// themselves; and Expand with them either refuses them as CheckLineRanges
// does or shows their lines verbatim, every other line as before.
func FuzzParseLineRanges(f *testing.F) {
	for _, s := range []string{"", "120-159,300-310", " 7 , 9-9", "0-0", "5-3", "-1", "99999999999999999999",
		",,", "1-2,2-3", "1-42", "42", "9-23,35-42", "+3", "1 -\t2", strings.Repeat("1,", 100) + "1",
		strings.Repeat("9", 400), strings.Repeat(",", 400), "1-" + strings.Repeat("x", 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := pruner.ParseLineRanges(s)
		if err != nil {
			if !errors.Is(err, pruner.ErrLineRange) {
				t.Fatalf("%q: error %v does not wrap ErrLineRange", s, err)
			}
			if len(err.Error()) > 400 { // 64 quoted bytes at most
				t.Fatalf("%q: error message of %d bytes", s, len(err.Error()))
			}
			return
		}
		var parts []string
		for _, r := range rs {
			if r.First < 1 || r.Last < r.First {
				t.Fatalf("%q: parsed to %+v", s, r)
			}
			parts = append(parts, r.String())
		}
		again, err := pruner.ParseLineRanges(strings.Join(parts, ","))
		if err != nil || len(again) != len(rs) {
			t.Fatalf("%q: %v printed as %q parses to %v, %v", s, rs, strings.Join(parts, ","), again, err)
		}
		for i := range rs {
			if again[i] != rs[i] {
				t.Fatalf("%q: %v printed as %q parses to %v", s, rs, strings.Join(parts, ","), again)
			}
		}

		fuzzExpand.once.Do(func() {
			p, err := pruner.Load(context.Background(), "", pruner.WithLineBudget(0.4))
			if err == nil {
				fuzzExpand.res, err = p.Prune(context.Background(), "how long do we wait between retries?", clientSource)
			}
			fuzzExpand.err = err
		})
		if fuzzExpand.err != nil {
			t.Fatal(fuzzExpand.err)
		}
		res := fuzzExpand.res
		// The ranges as parsed, then moved onto the input's lines (at most
		// four lines each) so that some expand.
		for _, move := range []bool{false, true} {
			moved := make([]pruner.LineRange, len(rs))
			for i, r := range rs {
				moved[i] = r
				if move {
					moved[i] = pruner.LineRange{First: (r.First-1)%len(res.Lines) + 1, Last: (r.First-1)%len(res.Lines) + 1 + min(r.Last-r.First, 3)}
				}
			}
			checkErr := pruner.CheckLineRanges(len(res.Lines), moved...)
			got, err := res.Expand(moved...)
			if (err == nil) != (checkErr == nil) {
				t.Fatalf("%v: Expand says %v, CheckLineRanges %v", moved, err, checkErr)
			}
			if err != nil {
				if !errors.Is(err, pruner.ErrLineRange) {
					t.Fatalf("%v: %v does not wrap ErrLineRange", moved, err)
				}
				continue
			}
			checkRendering(t, clientSource, got)
			for _, r := range moved {
				for n := r.First; n <= r.Last; n++ {
					if !got.Lines[n-1].Kept {
						t.Fatalf("%v: line %d not shown", moved, n)
					}
				}
			}
			for i, l := range res.Lines {
				if l.Kept && (!got.Lines[i].Kept || got.Lines[i].Reason != l.Reason) {
					t.Fatalf("%v: line %d was kept (%s), now %v (%s)", moved, i+1, l.Reason, got.Lines[i].Kept, got.Lines[i].Reason)
				}
			}
		}
	})
}

// TestCheckLineRangesExtremes: ranges at the ends of int (a JSON request
// can hold them) are refused for what they are: the sort that finds
// overlaps compares them without overflowing.
func TestCheckLineRangesExtremes(t *testing.T) {
	var rs []pruner.LineRange
	if err := json.Unmarshal([]byte(`[{"first_line": 9223372036854775807, "last_line": 9223372036854775807}, {"first_line": -9223372036854775808, "last_line": 1}, "1-2"]`), &rs); err != nil {
		t.Fatal(err)
	}
	err := pruner.CheckLineRanges(10, rs...)
	if !errors.Is(err, pruner.ErrLineRange) || !strings.Contains(err.Error(), "-9223372036854775808-1: want 1 ≤ first ≤ last") {
		t.Fatalf("got %v", err)
	}
	long := `"` + strings.Repeat("7", 1<<20) + `"`
	var r pruner.LineRange
	err = json.Unmarshal([]byte(long), &r)
	if !errors.Is(err, pruner.ErrLineRange) || len(err.Error()) > 400 {
		t.Fatalf("a megabyte of digits: %d-byte error %.100s", len(err.Error()), err)
	}
}

// FuzzExpand: on any text, as code or as tool output, expanding any range
// of the input shows its lines verbatim, keeps what was kept, and renders
// every other fold as a placeholder naming its range (checkRendering).
func FuzzExpand(f *testing.F) {
	f.Add("package p\n\nfunc a() {\n\treturn\n}\n\nfunc b() {}\n", uint16(2), uint16(3), uint8(1))
	f.Add("--- FAIL: TestA\r\n    a_test.go:1: x\r\n4.0K\t/tmp/\r\nok  \tp\t0.1s", uint16(0), uint16(9), uint8(0))
	f.Add("def f():\n    x = 1\n\n    return x\nclass C:\n  pass\n", uint16(1), uint16(1), uint8(2))
	f.Add("a\x00\xff\n\n\r\n\u2028b\n", uint16(3), uint16(0), uint8(3))
	ctx := context.Background()
	names := []string{"", "a.go", "a.py", "a.js"}
	f.Fuzz(func(t *testing.T, text string, first, span uint16, lang uint8) {
		if len(text) > 4096 {
			return
		}
		p, err := pruner.Load(ctx, "", pruner.WithScorer(pruner.ScorerLexical), pruner.WithMinInputTokens(0),
			pruner.WithLineBudget(0.3), pruner.WithBinaryInput(true), pruner.WithFileName(names[int(lang)%len(names)]))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Prune(ctx, "retry a", text)
		if err != nil {
			t.Fatal(err)
		}
		n := len(res.Lines)
		if n == 0 || res.Unpruned != "" {
			return
		}
		r := pruner.LineRange{First: int(first)%n + 1}
		r.Last = min(n, r.First+int(span)%8)
		got, err := res.Expand(r)
		if err != nil {
			t.Fatalf("%v of %d lines: %v", r, n, err)
		}
		checkRendering(t, text, got)
		for i, l := range got.Lines {
			inRange := i+1 >= r.First && i+1 <= r.Last
			if (inRange || res.Lines[i].Kept) != l.Kept {
				t.Fatalf("%v: line %d kept %v (before %v)", r, i+1, l.Kept, res.Lines[i].Kept)
			}
		}
	})
}
