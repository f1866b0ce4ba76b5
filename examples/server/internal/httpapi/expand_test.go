package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

// TestNativeExpand: /v1/prune's expand option shows input line ranges in
// full (a string as placeholders print ranges, or an array), byte-identical
// to the input, and answers 400 to ranges outside the input or
// overlapping. full_view asks for the whole view (follow-ups answer with
// the new lines by default: followup_test.go).
func TestNativeExpand(t *testing.T) {
	srv := newServer(t, Config{})
	// At threshold 1 only the last line stays: lines 1-5 fold.
	base := map[string]any{"min_tokens": 0, "threshold": 1, "keep_last_line": true, "language": "text", "full_view": true}
	tests := []struct {
		name    string
		expand  any
		status  int
		text    string
		kept    []int
		errPart string
	}{
		{"none", nil, http.StatusOK, "... 5 lines omitted (1-5) ...\n    return a - b\n", []int{6}, ""},
		{"string", "2-3", http.StatusOK, "... 1 line omitted (1) ...\n    return a + b\n\n... 2 lines omitted (4-5) ...\n    return a - b\n", []int{2, 3, 6}, ""},
		{"strings", []string{"4-5", "1"}, http.StatusOK, "def add(a, b):\n... 2 lines omitted (2-3) ...\n\ndef sub(a, b):\n    return a - b\n", []int{1, 4, 5, 6}, ""},
		{"objects", []map[string]int{{"first_line": 1, "last_line": 6}}, http.StatusOK, snippet, []int{1, 2, 3, 4, 5, 6}, ""},
		{"outside the input", "5-9", http.StatusBadRequest, "", nil, "5-9 is outside the input's lines 1-6"},
		{"overlapping", "1-3,3-4", http.StatusBadRequest, "", nil, "1-3 and 3-4 overlap"},
		{"reversed", []string{"3-1"}, http.StatusBadRequest, "", nil, "want 1 ≤ FIRST ≤ LAST"},
		{"not a range: a name, and an unknown one", "one-two", http.StatusBadRequest, "", nil, "names no definition or record of the text (it has none to unfold by name; ask for a line range)"},
		{"a malformed range", "3-", http.StatusBadRequest, "", nil, "invalid line range"},
		{"not a range", 12, http.StatusBadRequest, "", nil, "malformed JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := map[string]any{}
			for k, v := range base {
				opts[k] = v
			}
			if tc.expand != nil {
				opts["expand"] = tc.expand
			}
			// A reader per case: each unfolds the first view, not the last case's.
			status, body := post(t, srv.URL+"/v1/prune", map[string]any{"query": "add two numbers", "text": snippet, "reader": tc.name, "options": opts})
			require.Equal(t, tc.status, status, string(body))
			if tc.status != http.StatusOK {
				assert.Contains(t, string(body), tc.errPart)
				return
			}
			var got pruner.Result
			require.NoError(t, json.Unmarshal(body, &got))
			assert.Equal(t, tc.text, got.Text)
			assert.Equal(t, tc.kept, got.KeptLines())
			for _, n := range tc.kept {
				if n != 6 {
					assert.Equal(t, pruner.ReasonExpanded, got.Lines[n-1].Reason)
				}
			}
		})
	}
}

// TestNativePlaceholderNames: placeholders name the definitions they fold
// unless placeholder_names is false.
func TestNativePlaceholderNames(t *testing.T) {
	srv := newServer(t, Config{})
	for _, tc := range []struct {
		names any
		want  string
	}{
		{nil, "# ... 5 lines omitted (1-5): def add, def sub\n    return a - b\n"},
		{false, "# ... 5 lines omitted (1-5)\n    return a - b\n"},
	} {
		opts := map[string]any{"min_tokens": 0, "threshold": 1, "keep_last_line": true, "repair": false}
		if tc.names != nil {
			opts["placeholder_names"] = tc.names
		}
		status, body := post(t, srv.URL+"/v1/prune", map[string]any{"query": "add two numbers", "text": snippet, "options": opts})
		require.Equal(t, http.StatusOK, status, string(body))
		var got pruner.Result
		require.NoError(t, json.Unmarshal(body, &got))
		assert.Equal(t, tc.want, got.Text)
	}
}

// TestNativeFoldHints: fold_hints makes a placeholder say what in its fold
// is likely relevant, an item a follow-up's expand takes.
func TestNativeFoldHints(t *testing.T) {
	srv := newServer(t, Config{})
	opts := map[string]any{"line_budget": 0.2, "fold_hints": 1}
	status, body := post(t, srv.URL+"/v1/prune", map[string]any{"query": "add two numbers", "text": classes, "options": opts})
	require.Equal(t, http.StatusOK, status, string(body))
	var got pruner.Result
	require.NoError(t, json.Unmarshal(body, &got))
	require.NotEmpty(t, got.Placeholders)
	hint := got.Placeholders[0].Hint
	require.NotEmpty(t, hint, got.Text)
	assert.Contains(t, got.Text, "; likely relevant: "+hint)
	opts["expand"] = hint
	status, body = post(t, srv.URL+"/v1/prune", map[string]any{"query": "add two numbers", "text": classes, "options": opts})
	require.Equal(t, http.StatusOK, status, string(body))
	assert.Contains(t, string(body), `"view":"delta"`)

	opts = map[string]any{"fold_hints": -1}
	status, body = post(t, srv.URL+"/v1/prune", map[string]any{"query": "add two numbers", "text": snippet, "options": opts})
	require.Equal(t, http.StatusBadRequest, status, string(body))
}
