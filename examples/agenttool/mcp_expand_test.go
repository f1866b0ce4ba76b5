package agenttool

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPReadPrunedExpand: read_pruned's expand shows the line ranges its
// markers printed, verbatim, the rest pruned as before (full_view: the
// whole view; follow-ups answer with the new lines by default, see
// mcp_unfold_test.go); ranges outside the file, overlapping or malformed
// are a tool error that says why.
func TestMCPReadPrunedExpand(t *testing.T) {
	h := newHarness(t)
	lines := strings.SplitAfter(buildLog(), "\n")
	q := "why did the build fail?"
	_, first := h.call(t, "read_pruned", map[string]any{"path": "build.log", QuestionArg: q})
	require.Contains(t, first, "... 16 lines omitted (13-28) ...\n", "the markers name their ranges")
	tests := []struct {
		name    string
		expand  string
		isError bool
		want    []string // substrings of the text
		notWant []string
	}{
		{name: "a range inside a marker", expand: "13-20",
			want:    []string{lines[11] + strings.Join(lines[12:20], "") + "... 8 lines omitted (21-28) ...\n" + lines[28]},
			notWant: []string{"(13-28)"}},
		{name: "two ranges", expand: "1-2, 27-28",
			want: []string{"[pruned for", strings.Join(lines[:2], "") + "... 9 lines omitted (3-11) ...\n", "... 14 lines omitted (13-26) ...\n" + strings.Join(lines[26:30], "")}},
		{name: "every folded line", expand: "1-11,13-28", want: []string{strings.Join(lines, "")}, notWant: []string{"omitted"}},
		{name: "past the end", expand: "25-40", isError: true, want: []string{"expand", "25-40 is outside the input's lines 1-30"}},
		{name: "overlapping", expand: "1-5,5-6", isError: true, want: []string{"1-5 and 5-6 overlap"}},
		{name: "malformed", expand: "3-", isError: true, want: []string{"invalid line range", "FIRST-LAST"}},
		{name: "not a range: a name, unknown", expand: "lines 3 to 5", isError: true, want: []string{`unknown name: "lines 3 to 5"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A plain read first: the follow-up unfolds the first view, not the last case's.
			h.call(t, "read_pruned", map[string]any{"path": "build.log", QuestionArg: q})
			res, text := h.call(t, "read_pruned", map[string]any{"path": "build.log", QuestionArg: q, ExpandArg: tc.expand, FullViewArg: true})
			require.Equal(t, tc.isError, res.IsError, text)
			for _, s := range tc.want {
				assert.Contains(t, text, s)
			}
			for _, s := range tc.notWant {
				assert.NotContains(t, text, s)
			}
		})
	}
	t.Run("numbered", func(t *testing.T) {
		h.call(t, "read_pruned", map[string]any{"path": "build.log", QuestionArg: q})
		_, text := h.call(t, "read_pruned", map[string]any{"path": "build.log", QuestionArg: q, ExpandArg: "14", "line_numbers": true})
		assert.Contains(t, text, "    14\t"+lines[13])
		assert.Contains(t, text, "      \t... 14 lines omitted (15-28) ...\n")
	})
}

// TestMCPReadPrunedDescribesExpand: the tool tells the calling model that
// what to expand comes from the markers it just read, by name or range,
// and that the reply holds the new lines only unless it asks for
// full_view.
func TestMCPReadPrunedDescribesExpand(t *testing.T) {
	h := newHarness(t)
	tools, err := h.client.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	for _, tool := range tools.Tools {
		if tool.Name != "read_pruned" {
			continue
		}
		assert.Contains(t, tool.Description, "expand set to what a marker you just read names: one of its names copied as printed")
		assert.Contains(t, tool.Description, "or its line range")
		assert.Contains(t, tool.Description, "only the new lines")
		prop, ok := tool.InputSchema.Properties[ExpandArg].(map[string]any)
		require.True(t, ok, "expand parameter")
		assert.Contains(t, prop["description"], "copied from the markers")
		assert.Contains(t, prop["description"], `a name as the marker prints it ("func (c *Client) do"`)
		assert.Contains(t, prop["description"], `a line range ("120-159")`)
		full, ok := tool.InputSchema.Properties[FullViewArg].(map[string]any)
		require.True(t, ok, "full_view parameter")
		assert.Equal(t, "boolean", full["type"])
		assert.NotContains(t, tool.InputSchema.Required, ExpandArg)
		assert.NotContains(t, tool.InputSchema.Required, FullViewArg)
		return
	}
	t.Fatal("no read_pruned tool")
}
