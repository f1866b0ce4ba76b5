package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
)

func TestExpandQuery(t *testing.T) {
	table := map[string][]string{
		"redirect": {"location", "3xx", "follow", "hop"},
		"give up":  {"max", "limit", "retries", "too many"},
		"wait":     {"sleep", "backoff"},
	}
	tests := []struct {
		name, query string
		max         int
		want        string
	}{
		{"no concept", "how is the header parsed?", 12, "how is the header parsed?"},
		{"plural and first three terms", "where are redirects handled?", 12, "where are redirects handled? location 3xx follow"},
		{"phrases first, multi-word terms left out", "when does it wait or give up", 12, "when does it wait or give up max limit retries sleep backoff"},
		{"cap", "when does it wait or give up", 2, "when does it wait or give up max limit"},
		{"words already in the query are not added", "redirect location", 12, "redirect location 3xx follow hop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, expandQuery(table, tt.query, tt.max))
		})
	}
}

func TestExpandQueriesKeepsInput(t *testing.T) {
	files := []evalset.File{{Name: "a", Cases: []evalset.Case{{ID: "1", Query: "where does it give up retrying?", Text: "x\n"}}}}
	out := expandQueries(files, 12)
	require.Len(t, out, 1)
	assert.Equal(t, "where does it give up retrying?", files[0].Cases[0].Query, "the input files are not changed")
	assert.True(t, strings.HasPrefix(out[0].Cases[0].Query, "where does it give up retrying? "), out[0].Cases[0].Query)
	assert.Greater(t, len(strings.Fields(out[0].Cases[0].Query)), 6)
}
