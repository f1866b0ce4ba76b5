package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/evalset"
)

func TestChooseUnfold(t *testing.T) {
	phs := []pruner.Placeholder{
		{FirstLine: 1, LastLine: 9, Names: []string{"func parseHeader", "type Client"}},
		{FirstLine: 12, LastLine: 20, Names: []string{"func (c *Client) retryAfter", "func backoff"}},
		{FirstLine: 22, LastLine: 80},
	}
	tests := []struct {
		name  string
		query string
		want  pruner.LineRange
		ok    bool
	}{
		{"most terms", "how are retries scheduled with backoff?", pruner.LineRange{First: 12, Last: 20}, true},
		{"stem", "where is the header parsed?", pruner.LineRange{First: 1, Last: 9}, true},
		{"tie goes to the first", "client", pruner.LineRange{First: 1, Last: 9}, true},
		{"no match", "what does the logger print?", pruner.LineRange{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := chooseUnfold(tt.query, phs)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	got, ok := largestFold(phs)
	assert.True(t, ok)
	assert.Equal(t, pruner.LineRange{First: 22, Last: 80}, got)
	_, ok = largestFold(nil)
	assert.False(t, ok)
}

func TestTermMatch(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"retry", "retry", true}, {"retries", "retry", true}, {"parsed", "parse", true},
		{"header", "headers", true}, {"fail", "failure", true}, {"client", "clip", false}, {"go", "goroutine", false},
	} {
		assert.Equal(t, tt.want, evalset.TermMatch(tt.a, tt.b), "%s %s", tt.a, tt.b)
	}
}

// TestRunUnfoldAndTokens: -unfold adds the +unfold and +largest rows of
// every library row, which keep at least the row's lines; -tokens runs the
// library rows at token shares without the baselines; -names=false renders
// placeholders without names.
func TestRunUnfoldAndTokens(t *testing.T) {
	path, _ := writeSet(t)
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-lines", "0.2", "-methods", "bm25,line+repair", "-unfold", "-json", out, path}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	for _, m := range []string{"line+repair+unfold", "line+repair+largest", "bm25"} {
		assert.Contains(t, stdout.String(), m)
	}
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(data, &rep))
	kept := map[string]map[string][]int{}
	for _, c := range rep.Cases {
		if kept[c.ID] == nil {
			kept[c.ID] = map[string][]int{}
		}
		kept[c.ID][c.Method] = c.Kept
	}
	for id, rows := range kept {
		for _, m := range []string{"line+repair+unfold", "line+repair+largest"} {
			assert.Subset(t, rows[m], rows["line+repair"], "%s %s keeps the row's lines", id, m)
		}
	}

	stdout.Reset()
	code = run(context.Background(), []string{"-lines", "0.3", "-tokens", "-names=false", "-methods", "bm25,line+repair", path}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "line+repair")
	assert.NotContains(t, stdout.String(), "bm25", "baselines count lines")
}
