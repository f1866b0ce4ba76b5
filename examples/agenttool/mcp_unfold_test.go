package agenttool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/astrepair"
)

// twoClasses has two classes with a method of the same name (__init__).
// At threshold 1 the tiny model keeps nothing and the repair pass keeps
// what main uses: the first view folds lines 2-11 (class Reader).
const twoClasses = `import time


class Reader:
    def __init__(self, path):
        self.path = path

    def close(self):
        return None


class Writer:
    def __init__(self, path):
        self.path = path

    def flush(self):
        time.sleep(1)
        return 0


def main():
    print(Writer("out.txt").flush())
`

const flushQ = "how does the writer flush?"

// newCodeHarness serves a workspace holding two.py, pruned as Python (the
// plain harness prunes everything as text, which has no definitions).
func newCodeHarness(t *testing.T, opts ...WorkspaceOption) *harness {
	t.Helper()
	f, err := NewFolder(load(t, pruner.WithThreshold(1)), WithMinChars(100), WithTailLines(2))
	require.NoError(t, err)
	h := newHarnessWith(t, f, opts...)
	h.write(t, "two.py", twoClasses)
	return h
}

func (h *harness) write(t *testing.T, name, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(h.root, name), []byte(content), 0o644))
}

// numberedLine is line n of text as a delta shows it.
func numberedLine(text string, n int) string {
	return fmt.Sprintf("%6d\t%s", n, strings.SplitAfter(text, "\n")[n-1])
}

// pruning returns the one Meta of a read_pruned result.
func pruning(t *testing.T, res *mcp.CallToolResult) Meta {
	t.Helper()
	require.NotNil(t, res.Meta)
	b, err := json.Marshal(res.Meta.AdditionalFields[MetaKey])
	require.NoError(t, err)
	var ms []Meta
	require.NoError(t, json.Unmarshal(b, &ms))
	require.Len(t, ms, 1)
	return ms[0]
}

// TestMCPReadPrunedUnfoldByName: expand takes the names the markers print
// (a label, a qualified or bare name; an ambiguous one shows each match)
// beside line ranges, and the reply holds a header saying what unfolded to
// which lines, then the new lines only; unknown names are a tool error
// listing the closest.
func TestMCPReadPrunedUnfoldByName(t *testing.T) {
	h := newCodeHarness(t)
	tests := []struct {
		name    string
		expand  any
		header  string // the reply's first line; for errors, part of the message
		shown   []int  // input lines the reply adds
		isError bool
	}{
		{name: "qualified name", expand: "Reader.close", shown: []int{8, 9},
			header: "[unfolded def close (lines 8-9) of two.py; new lines only, numbered; the rest of your earlier view stands]"},
		{name: "label", expand: "class Reader", shown: []int{4, 5, 6, 7, 8, 9},
			header: "[unfolded class Reader (lines 4-9) of two.py; new lines only, numbered; the rest of your earlier view stands]"},
		{name: "ambiguous name shows each", expand: "__init__", shown: []int{5, 6},
			header: "[unfolded def __init__ (lines 5-6), def __init__ (lines 13-14) of two.py; new lines only, numbered; the rest of your earlier view stands]"},
		{name: "name and range in one string", expand: "close, 2-3", shown: []int{2, 3, 8, 9},
			header: "[unfolded def close (lines 8-9), lines 2-3 of two.py; new lines only, numbered; the rest of your earlier view stands]"},
		{name: "an array", expand: []any{"Reader.close", "3"}, shown: []int{3, 8, 9},
			header: "[unfolded def close (lines 8-9), line 3 of two.py; new lines only, numbered; the rest of your earlier view stands]"},
		{name: "a line number", expand: 3, shown: []int{3},
			header: "[unfolded line 3 of two.py; new lines only, numbered; the rest of your earlier view stands]"},
		{name: "unknown name lists the closest", expand: "flsh", isError: true,
			header: `read_pruned: expand: pruner: expand: unknown name: "flsh" names no definition or record of the text; closest: def flush, def close`},
		{name: "unknown name in a list", expand: "close, nosuch", isError: true, header: `"nosuch"`},
		{name: "overlapping ranges", expand: "1-5,5-6", isError: true, header: "1-5 and 5-6 overlap"},
		{name: "outside the file", expand: "20-30", isError: true, header: "20-30 is outside the input's lines 1-22"},
		{name: "not a string", expand: true, isError: true, header: `expand: want a string such as "func retry, 120-159", not a boolean`},
		{name: "an array of other things", expand: []any{"close", map[string]any{"first_line": 1}}, isError: true, header: "item 2 is an object"},
		{name: "not a line number", expand: 2.5, isError: true, header: "2.5 is no line number"},
		{name: "too many names", expand: strings.Repeat("close, ", 65), isError: true, header: "65 names, at most 64 in one call"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A plain read first: each case unfolds the first view.
			_, first := h.call(t, "read_pruned", map[string]any{"path": "two.py", QuestionArg: flushQ})
			require.Contains(t, first, "# ... 10 lines omitted (2-11): class Reader, def __init__, def close\n")

			res, text := h.call(t, "read_pruned", map[string]any{"path": "two.py", QuestionArg: flushQ, ExpandArg: tc.expand})
			require.Equal(t, tc.isError, res.IsError, text)
			if tc.isError {
				assert.Contains(t, text, tc.header)
				return
			}
			head, delta, ok := strings.Cut(text, "\n")
			require.True(t, ok)
			assert.Equal(t, tc.header, head)
			for _, n := range tc.shown {
				assert.Contains(t, delta, numberedLine(twoClasses, n))
			}
			for n := 12; n <= 22; n++ {
				assert.NotContains(t, delta, fmt.Sprintf("%6d\t", n), "line %d was in the first view", n)
			}
			m := pruning(t, res)
			assert.Equal(t, "delta", m.View)
			require.NotNil(t, m.Summary)
			require.NotEmpty(t, m.Summary.Expanded)
		})
	}
}

// TestMCPReadPrunedFollowUps: follow-ups unfold the last view sent, step by
// step, each reply holding what it adds; a name already shown adds nothing
// and says so; full_view returns the whole view; a plain read starts over.
// _meta says which view the content is and what was expanded.
func TestMCPReadPrunedFollowUps(t *testing.T) {
	h := newCodeHarness(t)
	read := func(args map[string]any) (*mcp.CallToolResult, string) {
		t.Helper()
		args["path"], args[QuestionArg] = "two.py", flushQ
		res, text := h.call(t, "read_pruned", args)
		require.False(t, res.IsError, text)
		return res, text
	}
	_, first := read(map[string]any{})

	res, d1 := read(map[string]any{ExpandArg: "Reader.close"})
	assert.Equal(t, "[unfolded def close (lines 8-9) of two.py; new lines only, numbered; the rest of your earlier view stands]\n"+
		"      \t# ... 6 lines omitted (2-7): class Reader, def __init__\n"+
		"     8\t    def close(self):\n"+
		"     9\t        return None\n"+
		"      \t# ... 2 lines omitted (10-11)\n", d1)
	m := pruning(t, res)
	assert.Equal(t, "delta", m.View)
	assert.True(t, m.Pruned)
	assert.Equal(t, []pruner.Expansion{{Item: "Reader.close", Lines: []pruner.LineRange{{First: 8, Last: 9}}, Names: []string{"def close"}}}, m.Summary.Expanded)
	assert.Equal(t, []pruner.LineRange{{First: 1, Last: 1}, {First: 8, Last: 9}, {First: 12, Last: 22}}, m.Summary.KeptLines, "the whole view")

	// The next is against the view after the first: 8-9 are not sent again.
	res, d2 := read(map[string]any{ExpandArg: "class Reader"})
	assert.Contains(t, d2, numberedLine(twoClasses, 4))
	assert.NotContains(t, d2, numberedLine(twoClasses, 8))
	assert.Len(t, pruning(t, res).Summary.Expanded, 2)

	// Nothing new: said so.
	_, d3 := read(map[string]any{ExpandArg: "Reader.close"})
	assert.Equal(t, "[unfolded def close (lines 8-9) of two.py: no new lines, your earlier view shows them already; full_view: true returns the whole view]\n", d3)

	// full_view: the whole view after unfolding, with the usual header.
	res, full := read(map[string]any{ExpandArg: "2-3", FullViewArg: true})
	assert.True(t, strings.HasPrefix(full, "[pruned for \"how does the writer flush?\": kept 20 of 22 lines"), full)
	assert.Contains(t, full, "\nimport time\n\n\nclass Reader:\n")
	assert.Equal(t, "full", pruning(t, res).View)

	// A plain read starts over: the first follow-up's reply again.
	_, again := read(map[string]any{})
	assert.Equal(t, first, again)
	_, d4 := read(map[string]any{ExpandArg: "Reader.close"})
	assert.Equal(t, d1, d4)

	// A call without a question has nothing to unfold: the file, whole.
	res, whole := h.call(t, "read_pruned", map[string]any{"path": "two.py", ExpandArg: "Reader.close"})
	require.False(t, res.IsError)
	assert.Equal(t, twoClasses, whole)
}

// TestMCPReadPrunedFollowUpAfterEdit: a follow-up on an edited file is
// unfolded from the edited file's own view, never from the old one's.
func TestMCPReadPrunedFollowUpAfterEdit(t *testing.T) {
	tests := []struct {
		name   string
		edited string
		want   []string
	}{
		{"same line count", strings.Replace(twoClasses, "        return None\n", "        return self.path\n", 1),
			[]string{"     8\t    def close(self):\n", "     9\t        return self.path\n"}},
		{"a line inserted", strings.Replace(twoClasses, "    def close(self):\n", "    # closes nothing\n    def close(self):\n", 1),
			[]string{"     8\t    # closes nothing\n", "     9\t    def close(self):\n", "    10\t        return None\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newCodeHarness(t)
			h.call(t, "read_pruned", map[string]any{"path": "two.py", QuestionArg: flushQ})
			h.call(t, "read_pruned", map[string]any{"path": "two.py", QuestionArg: flushQ, ExpandArg: "Reader.close"})
			h.write(t, "two.py", tc.edited)
			res, text := h.call(t, "read_pruned", map[string]any{"path": "two.py", QuestionArg: flushQ, ExpandArg: "Reader.close"})
			require.False(t, res.IsError, text)
			for _, w := range tc.want {
				assert.Contains(t, text, w)
			}
			assert.Len(t, pruning(t, res).Summary.Expanded, 1, "the old view's unfold is not in the new one")
		})
	}
}

// TestMCPReadPrunedSessions: clients of one server get deltas against
// their own views, also when they call at once (run with -race).
func TestMCPReadPrunedSessions(t *testing.T) {
	h := newCodeHarness(t)
	args := func(expand string) map[string]any {
		a := map[string]any{"path": "two.py", QuestionArg: flushQ}
		if expand != "" {
			a[ExpandArg] = expand
		}
		return a
	}
	other := connect(t, h.server)
	h.call(t, "read_pruned", args(""))
	callWith(t, other, "read_pruned", args(""))
	_, mine := h.call(t, "read_pruned", args("Reader.close"))
	_, theirs := callWith(t, other, "read_pruned", args("Reader.close"))
	assert.Equal(t, mine, theirs, "what one session unfolded is still new to the other")
	assert.Contains(t, theirs, numberedLine(twoClasses, 8))

	clients := make([]*mcpClient, 6)
	for i := range clients {
		clients[i] = &mcpClient{c: connect(t, h.server)}
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for range 3 {
				c.call(t, args(""))
				d1 := c.call(t, args("Reader.close"))
				d2 := c.call(t, args("__init__, Reader.close"))
				assert.Contains(t, d1, numberedLine(twoClasses, 8))
				assert.NotContains(t, d2, numberedLine(twoClasses, 8))
				assert.Contains(t, d2, numberedLine(twoClasses, 5))
			}
		})
	}
	wg.Wait()
	n, _ := h.ws.views.Len()
	assert.Equal(t, len(clients)+2, n)
}

// mcpClient calls read_pruned from a goroutine: failures are reported with
// t.Errorf, not FailNow.
type mcpClient struct{ c *client.Client }

func (m *mcpClient) call(t *testing.T, args map[string]any) string {
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_pruned"
	req.Params.Arguments = args
	res, err := m.c.CallTool(context.Background(), req)
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Errorf("read_pruned %v: %v %+v", args, err, res)
		return ""
	}
	tc, _ := mcp.AsTextContent(res.Content[0])
	return tc.Text
}

// TestMCPReadPrunedViewCache: the memory of views stays under its bound, a
// session whose view was forgotten gets the new lines against the first
// view, and with no memory every follow-up unfolds the first view.
func TestMCPReadPrunedViewCache(t *testing.T) {
	t.Run("bounded", func(t *testing.T) {
		const bound = 24 << 10
		h := newCodeHarness(t, WithViewBytes(bound))
		for i := range 20 {
			name := fmt.Sprintf("f%d.py", i)
			h.write(t, name, fmt.Sprintf("# file %d\n", i)+twoClasses)
			res, _ := h.call(t, "read_pruned", map[string]any{"path": name, QuestionArg: flushQ})
			require.False(t, res.IsError)
			_, bytes := h.ws.views.Len()
			require.LessOrEqual(t, bytes, int64(bound))
		}
		n, _ := h.ws.views.Len()
		assert.Less(t, n, 20, "old views are forgotten")
		assert.Positive(t, n)
		res, text := h.call(t, "read_pruned", map[string]any{"path": "f0.py", QuestionArg: flushQ, ExpandArg: "Reader.close"})
		require.False(t, res.IsError, text)
		assert.Contains(t, text, numberedLine("# file 0\n"+twoClasses, 9))
	})
	t.Run("none", func(t *testing.T) {
		h := newCodeHarness(t, WithViewBytes(0))
		assert.Nil(t, h.ws.views)
		h.call(t, "read_pruned", map[string]any{"path": "two.py", QuestionArg: flushQ})
		_, d1 := h.call(t, "read_pruned", map[string]any{"path": "two.py", QuestionArg: flushQ, ExpandArg: "Reader.close"})
		_, d2 := h.call(t, "read_pruned", map[string]any{"path": "two.py", QuestionArg: flushQ, ExpandArg: "Reader.close"})
		assert.Equal(t, d1, d2, "each follow-up against the first view")
		assert.Contains(t, d2, numberedLine(twoClasses, 8))
	})
}

// TestFoldUnfold: the Unfold call option shows names and ranges in Fold's
// view (with Expand's ranges), recorded in the Result; an unknown name
// fails open with the closest names.
func TestFoldUnfold(t *testing.T) {
	f, err := NewFolder(load(t, pruner.WithThreshold(1)), WithMinChars(100))
	require.NoError(t, err)
	ctx := context.Background()
	o := f.Fold(ctx, flushQ, twoClasses, FileName("two.py"), Unfold("Reader.close"), Expand(pruner.LineRange{First: 2, Last: 3}))
	require.NoError(t, o.Err)
	require.NotNil(t, o.Result)
	assert.Contains(t, o.Text, "\nimport time\n\n\n# ... 4 lines omitted (4-7): class Reader, def __init__\n    def close(self):\n        return None\n")
	require.Len(t, o.Result.Expanded, 2)
	assert.Equal(t, "2-3", o.Result.Expanded[0].Item)
	assert.Equal(t, []string{"def close"}, o.Result.Expanded[1].Names)

	o = f.Fold(ctx, flushQ, twoClasses, FileName("two.py"), Unfold("flsh"))
	require.ErrorIs(t, o.Err, pruner.ErrUnknownName)
	une, ok := errors.AsType[*astrepair.UnknownNameError](o.Err)
	require.True(t, ok)
	assert.Equal(t, "def flush", une.Closest[0])
	assert.True(t, strings.HasPrefix(o.Text, twoClasses), "fails open")
	assert.Contains(t, o.Text, "closest: def flush")
}

// FuzzExpandArg: any JSON value for expand is read or refused with a
// reason, never a panic; what is read is non-blank and within the names
// bound.
func FuzzExpandArg(f *testing.F) {
	for _, s := range []string{`"func (c *Client) do, 120-159"`, `["do","7"]`, `7`, `7.5`, `-1`, `1e300`, `true`, `null`, `[1]`, `{}`, `""`, `"  "`, `[""]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		items, err := expandItems(v)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		assert.NoError(t, pruner.CheckUnfoldItems(items...))
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			assert.Equal(t, []string{s}, items)
		}
	})
}
