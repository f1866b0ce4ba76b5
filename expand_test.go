package pruner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

// A placeholder says which input lines it folds and what they define; a
// reader that wants them asks for their range and gets them verbatim, the
// rest still folded.
func ExampleResult_Expand() {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.4))
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Prune(ctx, "how long do we wait between retries?", clientSource)
	if err != nil {
		log.Fatal(err)
	}
	ph := res.Placeholders[1] // "    # ... 15 lines omitted (9-23): def __init__, def _headers, def get"
	fmt.Println(ph.FirstLine, ph.LastLine, ph.Names)
	// The retries call self.get, and the fold names it: a reader who wants
	// to see what is retried unfolds it (and the blank line after it),
	// lines 19-23 of the folded 9-23.
	more, err := res.Expand(pruner.LineRange{First: 19, Last: 23})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(more.Text)
	// Output:
	// 9 23 [def __init__ def _headers def get]
	// import json
	// import time
	// import urllib.request
	// # ... 4 lines omitted (4-7): DEFAULT_TIMEOUT
	// class Client:
	//     # ... 10 lines omitted (9-18): def __init__, def _headers
	//     def get(self, path):
	//         req = urllib.request.Request(self.base_url + path, headers=self._headers())
	//         with urllib.request.urlopen(req, timeout=DEFAULT_TIMEOUT) as resp:
	//             return json.load(resp)
	//
	//     def get_with_retries(self, path, attempts=5):
	//         for attempt in range(attempts):
	//             try:
	//                 return self.get(path)
	//             except ConnectionError:
	//                 time.sleep(backoff(attempt))
	//         raise RuntimeError("gave up after %d attempts" % attempts)
	// # ... 2 lines omitted (31-32)
	// def backoff(attempt):
	//     return min(30, 2 ** attempt)
	// # ... 8 lines omitted (35-42): def parse_link_header
}

// checkRendering requires res.Text to be the kept input lines verbatim, in
// order, with one placeholder line per folded run at the place and with
// the range res.Placeholders says.
func checkRendering(t *testing.T, text string, res *pruner.Result) {
	t.Helper()
	in := strings.SplitAfter(text, "\n")
	out := strings.SplitAfter(res.Text, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	phAt := map[int]pruner.Placeholder{}
	for _, ph := range res.Placeholders {
		phAt[ph.OutputLine] = ph
	}
	o := 0
	for i := 0; i < len(res.Lines); {
		require.Less(t, o, len(out), "output too short")
		if res.Lines[i].Kept {
			require.Equal(t, in[i], out[o], "input line %d", i+1)
			i, o = i+1, o+1
			continue
		}
		ph, ok := phAt[o+1]
		require.True(t, ok, "no placeholder at output line %d for input line %d", o+1, i+1)
		require.Equal(t, i+1, ph.FirstLine)
		for i < len(res.Lines) && !res.Lines[i].Kept {
			i++
		}
		require.Equal(t, i, ph.LastLine)
		require.Contains(t, out[o], fmt.Sprintf("(%s)", pruner.LineRange{First: ph.FirstLine, Last: ph.LastLine}))
		o++
	}
	require.Equal(t, len(out), o, "output too long")
}

func TestExpand(t *testing.T) {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.4))
	require.NoError(t, err)
	res, err := p.Prune(ctx, "how long do we wait between retries?", clientSource)
	require.NoError(t, err)
	checkRendering(t, clientSource, res)
	// The cases below take their ranges from the folds the model made:
	// the last fold, and the widest fold (split at its middle line, or
	// left alone while everything around it unfolds).
	require.GreaterOrEqual(t, len(res.Placeholders), 2)
	srcLines := strings.Split(clientSource, "\n")
	last := res.Placeholders[len(res.Placeholders)-1]
	wideIdx := 0
	for i, ph := range res.Placeholders {
		if ph.LastLine-ph.FirstLine > res.Placeholders[wideIdx].LastLine-res.Placeholders[wideIdx].FirstLine {
			wideIdx = i
		}
	}
	wide := res.Placeholders[wideIdx]
	require.GreaterOrEqual(t, wide.LastLine-wide.FirstLine, 2, "the widest fold has a middle line")
	mid := (wide.FirstLine + wide.LastLine) / 2

	tests := []struct {
		name    string
		ranges  []pruner.LineRange
		wantErr string
		check   func(t *testing.T, got *pruner.Result)
	}{
		{name: "none", check: func(t *testing.T, got *pruner.Result) {
			assert.Equal(t, res.Text, got.Text)
		}},
		{name: "a whole fold", ranges: []pruner.LineRange{{First: last.FirstLine, Last: last.LastLine}}, check: func(t *testing.T, got *pruner.Result) {
			assert.True(t, strings.HasSuffix(got.Text, strings.Join(srcLines[last.FirstLine-1:], "\n")))
			assert.Len(t, got.Placeholders, len(res.Placeholders)-1)
			assert.Equal(t, pruner.ReasonExpanded, got.Lines[last.FirstLine-1].Reason)
		}},
		{name: "inside a fold splits it", ranges: []pruner.LineRange{{First: mid, Last: mid}}, check: func(t *testing.T, got *pruner.Result) {
			require.Len(t, got.Placeholders, len(res.Placeholders)+1)
			assert.Equal(t, [2]int{wide.FirstLine, mid - 1}, [2]int{got.Placeholders[wideIdx].FirstLine, got.Placeholders[wideIdx].LastLine})
			assert.Equal(t, [2]int{mid + 1, wide.LastLine}, [2]int{got.Placeholders[wideIdx+1].FirstLine, got.Placeholders[wideIdx+1].LastLine})
		}},
		{name: "several, unsorted, over kept lines", ranges: around(wide, len(res.Lines)), check: func(t *testing.T, got *pruner.Result) {
			require.Len(t, got.Placeholders, 1)
			assert.Equal(t, [2]int{wide.FirstLine, wide.LastLine}, [2]int{got.Placeholders[0].FirstLine, got.Placeholders[0].LastLine})
		}},
		{name: "everything", ranges: []pruner.LineRange{{First: 1, Last: 42}}, check: func(t *testing.T, got *pruner.Result) {
			assert.Equal(t, clientSource, got.Text)
			assert.Empty(t, got.Placeholders)
			assert.Greater(t, got.Tokens.Kept, res.Tokens.Kept)
		}},
		{name: "past the end", ranges: []pruner.LineRange{{First: 40, Last: 43}}, wantErr: "40-43 is outside the input's lines 1-42"},
		{name: "zero", ranges: []pruner.LineRange{{First: 0, Last: 3}}, wantErr: "0-3: want 1 ≤ first ≤ last"},
		{name: "reversed", ranges: []pruner.LineRange{{First: 9, Last: 3}}, wantErr: "9-3: want 1 ≤ first ≤ last"},
		{name: "overlapping", ranges: []pruner.LineRange{{First: 20, Last: 30}, {First: 9, Last: 20}}, wantErr: "9-20 and 20-30 overlap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := res.Expand(tt.ranges...)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, pruner.ErrLineRange)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			checkRendering(t, clientSource, got)
			for _, rg := range tt.ranges {
				for n := rg.First; n <= rg.Last; n++ {
					assert.True(t, got.Lines[n-1].Kept, "line %d", n)
				}
			}
			tt.check(t, got)
		})
	}
	t.Run("the result is unchanged", func(t *testing.T) {
		before := res.Text
		_, err := res.Expand(pruner.LineRange{First: 1, Last: 42})
		require.NoError(t, err)
		assert.Equal(t, before, res.Text)
		assert.False(t, res.Lines[wide.FirstLine-1].Kept)
	})
	t.Run("decoded from JSON", func(t *testing.T) {
		b, err := res.MarshalJSON()
		require.NoError(t, err)
		var back pruner.Result
		require.NoError(t, json.Unmarshal(b, &back))
		_, err = back.Expand(pruner.LineRange{First: 9, Last: 12})
		require.ErrorIs(t, err, pruner.ErrNotExpandable)
	})
}

func TestExpandKinds(t *testing.T) {
	ctx := context.Background()
	var log strings.Builder
	for i := range 30 {
		fmt.Fprintf(&log, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i, i)
	}
	log.WriteString("=== RUN   TestRetryBackoff\n    retry_test.go:41: backoff after 3 attempts = 8s, want 4s\n--- FAIL: TestRetryBackoff (0.01s)\nFAIL\n")
	tests := []struct {
		name, query, text string
		opts              []pruner.Option
	}{
		{"python", "how long do we wait between retries?", clientSource, []pruner.Option{pruner.WithLineBudget(0.3)}},
		{"tool output", "which test failed?", log.String(), []pruner.Option{pruner.WithLineBudget(0.1)}},
		{"token budget", "how long do we wait between retries?", clientSource, []pruner.Option{pruner.WithTokenBudget(80)}},
		{"swe-pruner renderer", "retries", clientSource, []pruner.Option{pruner.WithScorer(pruner.ScorerLexical), pruner.WithSWEPrunerCompat(), pruner.WithThreshold(0.3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pruner.Load(ctx, "", tt.opts...)
			require.NoError(t, err)
			res, err := p.Prune(ctx, tt.query, tt.text)
			require.NoError(t, err)
			require.NotEmpty(t, res.Placeholders, res.Text)
			ph := res.Placeholders[0]
			got, err := res.Expand(pruner.LineRange{First: ph.FirstLine, Last: ph.LastLine})
			require.NoError(t, err)
			lines := strings.SplitAfter(tt.text, "\n")
			assert.Contains(t, got.Text, strings.Join(lines[ph.FirstLine-1:ph.LastLine], ""))
			assert.Len(t, got.Placeholders, len(res.Placeholders)-1)
			if tt.name != "swe-pruner renderer" {
				checkRendering(t, tt.text, got)
			}
		})
	}
}

// A budget below the smallest output returns no line and no placeholder;
// the input is still folded, and Expand must unfold what it is asked for.
func TestExpandAfterEmptyBudget(t *testing.T) {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithTokenBudget(1))
	require.NoError(t, err)
	res, err := p.Prune(ctx, "how long do we wait between retries?", clientSource)
	require.NoError(t, err)
	require.Empty(t, res.Text)
	require.Empty(t, res.Placeholders)
	require.Empty(t, res.KeptLines())
	got, err := res.Expand(pruner.LineRange{First: 1, Last: 10})
	require.NoError(t, err)
	lines := strings.SplitAfter(clientSource, "\n")
	assert.Contains(t, got.Text, strings.Join(lines[:10], ""))
	for n := 1; n <= 10; n++ {
		assert.True(t, got.Lines[n-1].Kept, "line %d", n)
	}
	assert.NotEmpty(t, got.Placeholders, "the lines after 10 stay folded")
	checkRendering(t, clientSource, got)
}

func TestParseLineRanges(t *testing.T) {
	tests := []struct {
		in      string
		want    []pruner.LineRange
		wantErr bool
	}{
		{"", nil, false},
		{"120-159,300-310", []pruner.LineRange{{First: 120, Last: 159}, {First: 300, Last: 310}}, false},
		{" 7 , 9-9", []pruner.LineRange{{First: 7, Last: 7}, {First: 9, Last: 9}}, false},
		{"a-b", nil, true},
		{"5-3", nil, true},
		{"0", nil, true},
		{"1,,2", nil, true},
		{"1-", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := pruner.ParseLineRanges(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, pruner.ErrLineRange)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	var rs []pruner.LineRange
	require.NoError(t, json.Unmarshal([]byte(`["120-159", {"first_line": 3, "last_line": 4}]`), &rs))
	assert.Equal(t, []pruner.LineRange{{First: 120, Last: 159}, {First: 3, Last: 4}}, rs)
	require.ErrorIs(t, json.Unmarshal([]byte(`["9-1"]`), &rs), pruner.ErrLineRange)
}

// around returns the ranges that unfold every line of 1..n outside ph,
// the later range first (Expand takes them in any order).
func around(ph pruner.Placeholder, n int) []pruner.LineRange {
	var rs []pruner.LineRange
	if ph.LastLine < n {
		rs = append(rs, pruner.LineRange{First: ph.LastLine + 1, Last: n})
	}
	if ph.FirstLine > 1 {
		rs = append(rs, pruner.LineRange{First: 1, Last: ph.FirstLine - 1})
	}
	return rs
}
