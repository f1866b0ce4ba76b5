package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

// classes has two classes with a method of the same name (__init__) and a
// function; at threshold 1 without repair only its last line is kept.
const classes = `class Reader:
    def __init__(self, path):
        self.path = path

    def close(self):
        return None


class Writer:
    def __init__(self, path):
        self.path = path

    def flush(self):
        return 0


def add(a, b):
    return a + b
`

// viewReply is a /v1/prune reply: the library's Result and, for a
// follow-up, the view its text holds.
type viewReply struct {
	pruner.Result
	View string `json:"view"`
}

func newViewServer(t *testing.T, cfg Config) (*Handler, *httptest.Server) {
	t.Helper()
	p, err := pruner.Load(t.Context(), checkpoint)
	require.NoError(t, err)
	cfg.TokenizerDir = checkpoint
	h, err := New(p, cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

// read posts a /v1/prune request for text with the options that keep its
// last line only, and expand when not nil.
func read(t *testing.T, url, reader, text string, expand any, extra ...any) (int, viewReply, []byte) {
	t.Helper()
	opts := map[string]any{"min_tokens": 0, "threshold": 1, "keep_last_line": true, "repair": false}
	if expand != nil {
		opts["expand"] = expand
	}
	for i := 0; i+1 < len(extra); i += 2 {
		opts[extra[i].(string)] = extra[i+1]
	}
	status, body := post(t, url+"/v1/prune", map[string]any{"query": "add two numbers", "text": text, "reader": reader, "options": opts})
	var got viewReply
	if status == http.StatusOK {
		require.NoError(t, json.Unmarshal(body, &got), string(body))
	}
	return status, got, body
}

// numberedLine is line n of text as a delta shows it.
func numberedLine(text string, n int) string {
	return fmt.Sprintf("%6d\t%s", n, strings.SplitAfter(text, "\n")[n-1])
}

// TestNativeUnfoldByName: expand takes the names placeholders print (a
// label, a qualified or bare name; an ambiguous one shows each match) beside
// line ranges; the reply's text holds the new lines only, the other fields
// describe the whole view; unknown names are a 400 listing the closest.
func TestNativeUnfoldByName(t *testing.T) {
	_, srv := newViewServer(t, Config{})
	tests := []struct {
		name      string
		expand    any
		status    int
		shown     []int    // input lines the delta adds
		expanded  []string // the recorded items
		names     []string // the names the first item stands for
		errPart   string
		closest   []string // the error's closest names, the first ones
		extraOpts []any
	}{
		{name: "qualified name", expand: "Reader.close", status: 200, shown: []int{5, 6},
			expanded: []string{"Reader.close"}, names: []string{"def close"}},
		{name: "label", expand: "class Writer", status: 200, shown: []int{9, 10, 11, 12, 13, 14},
			expanded: []string{"class Writer"}, names: []string{"class Writer"}},
		{name: "ambiguous name shows each", expand: "__init__", status: 200, shown: []int{2, 3, 10, 11},
			expanded: []string{"__init__"}, names: []string{"def __init__", "def __init__"}},
		{name: "name and range in one string", expand: "add, 9", status: 200, shown: []int{9, 17},
			expanded: []string{"add", "9"}, names: []string{"def add"}},
		{name: "array of a name and a range object", expand: []any{"Reader.close", map[string]int{"first_line": 9, "last_line": 9}},
			status: 200, shown: []int{5, 6, 9}, expanded: []string{"Reader.close", "9"}, names: []string{"def close"}},
		{name: "unknown name lists the closest", expand: "clos", status: 400,
			errPart: `unknown name: "clos" names no definition or record of the text; closest: def close`, closest: []string{"def close"}},
		{name: "unknown name in a list", expand: []string{"add", "nosuch"}, status: 400, errPart: `"nosuch"`},
		{name: "a range object outside the input", expand: []any{map[string]int{"first_line": 9, "last_line": 40}}, status: 400,
			errPart: "9-40 is outside the input's lines 1-18"},
		{name: "a bad range object", expand: []any{map[string]int{"first_line": 0, "last_line": 3}}, status: 400, errPart: "want 1 ≤ first ≤ last"},
		{name: "neither string nor range", expand: []any{true}, status: 400, errPart: "want strings or range objects"},
		{name: "too many names", expand: strings.Repeat("add, ", 65), status: 400, errPart: "65 names, at most 64"},
		{name: "names of a SWE-Pruner view", expand: "add", status: 400, errPart: "line ranges only",
			extraOpts: []any{"swepruner_compat", true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Each case's reader starts from the first view.
			status, first, body := read(t, srv.URL, tc.name, classes, nil, tc.extraOpts...)
			require.Equal(t, http.StatusOK, status, string(body))
			assert.Empty(t, first.View, "a first view is the library's Result as it is")
			assert.Equal(t, []int{18}, first.KeptLines())

			status, got, body := read(t, srv.URL, tc.name, classes, tc.expand, tc.extraOpts...)
			require.Equal(t, tc.status, status, string(body))
			if tc.status != http.StatusOK {
				var e errorBody
				require.NoError(t, json.Unmarshal(body, &e))
				assert.Contains(t, e.ErrorMsg, tc.errPart)
				if tc.closest != nil {
					require.GreaterOrEqual(t, len(e.Closest), len(tc.closest))
					assert.Equal(t, tc.closest, e.Closest[:len(tc.closest)])
				}
				return
			}
			assert.Equal(t, "delta", got.View)
			for _, n := range tc.shown {
				assert.Contains(t, got.Text, numberedLine(classes, n))
				assert.Equal(t, pruner.ReasonExpanded, got.Lines[n-1].Reason, "line %d", n)
			}
			assert.NotContains(t, got.Text, numberedLine(classes, 18), "line 18 was in the first view")
			// The other fields describe the whole view.
			assert.Equal(t, append(append([]int{}, tc.shown...), 18), got.KeptLines())
			require.Len(t, got.Expanded, len(tc.expanded))
			for i, e := range got.Expanded {
				assert.Equal(t, tc.expanded[i], e.Item)
			}
			assert.Equal(t, tc.names, got.Expanded[0].Names)
		})
	}
}

// TestNativeFollowUps: follow-ups unfold the last view sent, step by step,
// each reply holding what it adds; full_view returns the whole view; a
// name already shown adds nothing; a request without expand starts over.
func TestNativeFollowUps(t *testing.T) {
	_, srv := newViewServer(t, Config{})
	status, first, _ := read(t, srv.URL, "", classes, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "# ... 17 lines omitted (1-17): class Reader, class Writer, def add, and 3 more\n    return a + b\n", first.Text)

	_, d1, _ := read(t, srv.URL, "", classes, "Reader.close")
	assert.Equal(t, "delta", d1.View)
	assert.Equal(t, "      \t# ... 4 lines omitted (1-4): class Reader, def __init__\n"+
		numberedLine(classes, 5)+numberedLine(classes, 6)+
		"      \t# ... 11 lines omitted (7-17): class Writer, def add, def __init__, and 1 more\n", d1.Text)

	// The next follow-up is against the view after the first: 5-6 are not sent again.
	_, d2, _ := read(t, srv.URL, "", classes, "__init__")
	assert.NotContains(t, d2.Text, numberedLine(classes, 5))
	assert.Contains(t, d2.Text, numberedLine(classes, 2))
	assert.Contains(t, d2.Text, numberedLine(classes, 10))
	assert.Equal(t, []int{2, 3, 5, 6, 10, 11, 18}, d2.KeptLines())
	assert.Len(t, d2.Expanded, 2)

	// full_view: the whole view after unfolding, as Text renders it.
	_, full, _ := read(t, srv.URL, "", classes, "add", "full_view", true)
	assert.Equal(t, "full", full.View)
	assert.Equal(t, []int{2, 3, 5, 6, 10, 11, 17, 18}, full.KeptLines())
	assert.Contains(t, full.Text, "    def close(self):\n        return None\n")
	assert.Contains(t, full.Text, "def add(a, b):\n    return a + b\n")
	assert.NotContains(t, full.Text, "\t", "the whole view is not numbered")

	// Nothing new: an empty delta.
	_, again, _ := read(t, srv.URL, "", classes, "Reader.close")
	assert.Equal(t, "delta", again.View)
	assert.Empty(t, again.Text)
	assert.Len(t, again.Expanded, 4)

	// A plain read starts over: the next follow-up sends 5-6 again.
	_, plain, _ := read(t, srv.URL, "", classes, nil)
	assert.Equal(t, first.Text, plain.Text)
	assert.Empty(t, plain.Expanded)
	_, d3, _ := read(t, srv.URL, "", classes, "Reader.close")
	assert.Equal(t, d1.Text, d3.Text)
}

// TestNativeFollowUpAfterEdit: a follow-up on an edited text is unfolded
// from the edited text's own view, never from the old text's.
func TestNativeFollowUpAfterEdit(t *testing.T) {
	_, srv := newViewServer(t, Config{})
	sameLines := strings.Replace(classes, "        return None\n", "        return self.path\n", 1)
	moreLines := strings.Replace(classes, "class Writer:\n", "# writes\nclass Writer:\n", 1)
	tests := []struct {
		name   string
		edited string
		want   []string
	}{
		{"same line count", sameLines, []string{"     5\t    def close(self):\n", "     6\t        return self.path\n"}},
		{"a line inserted", moreLines, []string{"    10\tclass Writer:\n", "    15\t        return 0\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reader := tc.name
			status, _, _ := read(t, srv.URL, reader, classes, nil)
			require.Equal(t, http.StatusOK, status)
			_, _, _ = read(t, srv.URL, reader, classes, "class Writer") // the old text's view grows
			item := "Reader.close"
			if tc.edited == moreLines {
				item = "class Writer"
			}
			status, got, body := read(t, srv.URL, reader, tc.edited, item)
			require.Equal(t, http.StatusOK, status, string(body))
			assert.Equal(t, "delta", got.View)
			for _, w := range tc.want {
				assert.Contains(t, got.Text, w)
			}
			// The old view's unfold is not in the edited text's view.
			assert.Len(t, got.Expanded, 1)
			assert.Len(t, got.Lines, strings.Count(tc.edited, "\n"))
			// The old text keeps its own view.
			_, old, _ := read(t, srv.URL, reader, classes, "add")
			assert.Equal(t, []string{"class Writer", "add"}, []string{old.Expanded[0].Item, old.Expanded[1].Item})
		})
	}
}

// TestNativeFollowUpReaders: readers sharing the server get deltas against
// their own views: a name another reader unfolded is still new to this one.
func TestNativeFollowUpReaders(t *testing.T) {
	_, srv := newViewServer(t, Config{})
	for _, r := range []string{"a", "b"} {
		status, _, _ := read(t, srv.URL, r, classes, nil)
		require.Equal(t, http.StatusOK, status)
	}
	_, a, _ := read(t, srv.URL, "a", classes, "Reader.close")
	_, b, _ := read(t, srv.URL, "b", classes, "Reader.close")
	assert.Equal(t, a.Text, b.Text)
	assert.Contains(t, b.Text, numberedLine(classes, 5))
}

// TestNativeFollowUpsConcurrent: readers unfolding at once each get the
// deltas of their own steps (run with -race).
func TestNativeFollowUpsConcurrent(t *testing.T) {
	h, srv := newViewServer(t, Config{})
	const readers = 8
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			reader := fmt.Sprint("r", i)
			for range 3 {
				if status, _, body := read(t, srv.URL, reader, classes, nil); status != http.StatusOK {
					t.Errorf("first view: %d %s", status, body)
					return
				}
				_, d1, _ := read(t, srv.URL, reader, classes, "Reader.close")
				_, d2, _ := read(t, srv.URL, reader, classes, "__init__, Reader.close")
				assert.Contains(t, d1.Text, numberedLine(classes, 5))
				assert.NotContains(t, d2.Text, numberedLine(classes, 5))
				assert.Contains(t, d2.Text, numberedLine(classes, 10))
				assert.Equal(t, []int{2, 3, 5, 6, 10, 11, 18}, d2.KeptLines())
			}
		})
	}
	// One reader's follow-ups racing one another: whichever view is
	// remembered last, each reply is a delta against a view the reader was
	// sent, so it holds its own item's lines or fewer, never others'.
	for i := range readers {
		wg.Go(func() {
			item := []string{"Reader.close", "add", "class Writer", "__init__"}[i%4]
			status, got, body := read(t, srv.URL, "shared", classes, item)
			if status != http.StatusOK {
				t.Errorf("%s: %d %s", item, status, body)
				return
			}
			assert.Equal(t, "delta", got.View)
		})
	}
	wg.Wait()
	n, _ := h.views.Len()
	assert.Equal(t, readers+1, n)
}

// TestNativeViewCache: the memory of views stays under its bound, a reader
// whose view was forgotten gets a delta against the first view, and with
// no memory every follow-up unfolds the first view.
func TestNativeViewCache(t *testing.T) {
	t.Run("bounded", func(t *testing.T) {
		const bound = 24 << 10
		h, srv := newViewServer(t, Config{ViewBytes: bound})
		text := func(i int) string { return fmt.Sprintf("# file %d\n", i) + classes }
		for i := range 20 {
			status, _, _ := read(t, srv.URL, "", text(i), nil)
			require.Equal(t, http.StatusOK, status)
			_, bytes := h.views.Len()
			require.LessOrEqual(t, bytes, int64(bound))
		}
		n, _ := h.views.Len()
		assert.Less(t, n, 20, "old views are forgotten")
		assert.Positive(t, n)
		// The first text's view is gone: unfolded from the view pruned again.
		status, got, body := read(t, srv.URL, "", text(0), "Reader.close")
		require.Equal(t, http.StatusOK, status, string(body))
		assert.Contains(t, got.Text, numberedLine(text(0), 6))
		assert.Len(t, got.Expanded, 1)
	})
	t.Run("none", func(t *testing.T) {
		h, srv := newViewServer(t, Config{ViewBytes: -1})
		assert.Nil(t, h.views)
		_, _, _ = read(t, srv.URL, "", classes, nil)
		_, d1, _ := read(t, srv.URL, "", classes, "Reader.close")
		_, d2, _ := read(t, srv.URL, "", classes, "Reader.close")
		assert.Equal(t, d1.Text, d2.Text, "each follow-up against the first view")
		assert.Contains(t, d2.Text, numberedLine(classes, 5))
		assert.Len(t, d2.Expanded, 1)
	})
}

// FuzzExpandItems: any JSON for expand decodes or is refused, never
// panics; a range object that decodes comes back as a valid range.
func FuzzExpandItems(f *testing.F) {
	for _, s := range []string{`"120-159,300"`, `["readEvents","7"]`, `[{"first_line":3,"last_line":9}]`, `12`, `[{"first_line":-9223372036854775808,"last_line":1}]`, `""`, `[null]`, `["a",{}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var e ExpandItems
		if err := json.Unmarshal(b, &e); err != nil {
			return
		}
		var raw []json.RawMessage
		if json.Unmarshal(b, &raw) != nil {
			return // a string: taken whole
		}
		require.Len(t, e, len(raw))
		for i, r := range raw {
			if len(r) > 0 && r[0] == '{' {
				_, err := pruner.ParseLineRanges(e[i])
				require.NoError(t, err, "range object %s gave %q", r, e[i])
			}
		}
		_ = pruner.CheckUnfoldItems(e...)
	})
}
