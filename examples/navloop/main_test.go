package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/tokenizer"
)

// fixture is the tiny eval file of the tests: two questions about a Go
// retry client and one about a go test log.
const fixture = "testdata/cases.jsonl"

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"share over 1", []string{"-first", "lines:2"}, "(0,1]"},
		{"unknown view", []string{"-first", "chars:0.1"}, "want lines:F"},
		{"fractional budget", []string{"-first", "budget:10.5"}, "whole number"},
		{"judge without answers", []string{"-judge", "http://127.0.0.1:1", "-judge-model", "j"}, "sim reader writes no answers"},
		{"judge without model", []string{"-reader", "http://127.0.0.1:1", "-reader-model", "r", "-judge", "http://127.0.0.1:1"}, "-judge needs -judge-model"},
		{"reader without model", []string{"-reader", "http://127.0.0.1:1"}, "-reader-model"},
		{"rejudge without judge", []string{"-rejudge", "x.jsonl"}, "-rejudge needs -judge"},
		{"rejudge with files", []string{"-rejudge", "x.jsonl", "-judge", "u", "-judge-model", "j", fixture}, "not eval files"},
		{"no workers", []string{"-workers", "0"}, "-workers"},
		{"bad flag", []string{"-nope"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, nil, &stdout, &stderr)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

func TestRunMissingFile(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{filepath.Join(t.TempDir(), "none.jsonl")}, nil, &stdout, &stderr)
	assert.Equal(t, exitRuntime, code)
	assert.Contains(t, stderr.String(), "no such file")
}

// TestSimFixture runs the sim reader on the fixture and checks every
// number of the transcripts against the library, called here directly:
// the views' and replies' tokens, the lines read and their recall.
func TestSimFixture(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-out", dir, "-workers", "2", "-hints", "0", fixture}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	recs, err := readTranscripts(filepath.Join(dir, "transcripts.jsonl"))
	require.NoError(t, err)
	files, err := evalset.Load(fixture)
	require.NoError(t, err)
	cases := files[0].Cases
	require.Len(t, recs, len(cases))

	tok, err := tokenizer.Qwen3()
	require.NoError(t, err)
	def, err := pruner.Load(ctx, "")
	require.NoError(t, err)
	for i, c := range cases {
		rec := recs[i]
		require.Equal(t, c.ID, rec.ID)
		assert.Equal(t, tok.Count(c.Text), rec.InputTokens)
		assert.Nil(t, rec.Full, "the sim reader has no full-text run")
		require.Len(t, rec.Settings, len(settings))
		for j, s := range settings {
			ex := rec.Settings[j]
			require.Equal(t, s.name, ex.Setting)
			opts := []pruner.Option{pruner.WithFileName(c.Path)}
			if s.tight {
				opts = append(opts, pruner.WithLineBudget(0.1))
			}
			p, err := def.With(opts...)
			require.NoError(t, err)
			first, err := p.Prune(ctx, c.Query, c.Text)
			require.NoError(t, err)
			assert.Equal(t, tok.Count(first.Text), ex.ViewTokens, "%s %s", c.ID, s.name)
			assert.Contains(t, ex.Messages[0].Content, first.Text)

			// What the sim reader asks, and what the library shows for it.
			read := first.KeptLines()
			item, ok := simChoice(c.Query, first.Placeholders, s.unfold == unfoldRanges)
			wantReply := ""
			switch {
			case s.unfold == unfoldNone || !ok:
				assert.Empty(t, ex.Unfold)
				assert.Len(t, ex.Messages, 2)
			case s.unfold == unfoldRanges:
				after, err := first.Unfold(ctx, item)
				require.NoError(t, err)
				wantReply, read = after.Text, append(read, after.KeptLines()...)
			default:
				after, err := first.Unfold(ctx, item)
				require.NoError(t, err)
				d, err := after.Delta(first)
				require.NoError(t, err)
				wantReply, read = d, append(read, after.KeptLines()...)
			}
			if wantReply != "" {
				assert.True(t, ex.Unfolded)
				require.Len(t, ex.Messages, 4)
				assert.Contains(t, ex.Messages[2].Content, wantReply)
			}
			assert.Equal(t, tok.Count(wantReply), ex.ReplyTokens, "%s %s", c.ID, s.name)
			m := c.Score(read)
			assert.InDelta(t, m.Recall, ex.Recall, 1e-12, "%s %s", c.ID, s.name)
			assert.Equal(t, m.Hit, ex.Hit)
		}
	}

	// The fixture's point: the tight view of the first question misses the
	// backoff, which the reader unfolds by its range (the whole view again)
	// or by its name (the delta, fewer tokens), reading every gold line.
	byName := func(rec caseRecord, s string) exchange {
		i := slices.IndexFunc(rec.Settings, func(e exchange) bool { return e.Setting == s })
		require.GreaterOrEqual(t, i, 0)
		return rec.Settings[i]
	}
	tight, rng, name := byName(recs[0], "tight"), byName(recs[0], "range"), byName(recs[0], "name")
	assert.Less(t, tight.Recall, 1.0)
	assert.Equal(t, "func (c *Client) backoff", name.Unfold)
	assert.Regexp(t, `^\d+-\d+$`, rng.Unfold)
	assert.Equal(t, 1.0, rng.Recall)
	assert.Equal(t, 1.0, name.Recall)
	assert.Less(t, name.ReplyTokens, rng.ReplyTokens)
	assert.Equal(t, tight.ViewTokens, rng.ViewTokens)

	// The report's overall row of the name setting is the mean of the
	// records'.
	var recall, share float64
	for _, r := range recs {
		e := byName(r, "name")
		recall += e.Recall
		share += float64(e.ViewTokens+e.ReplyTokens) / float64(r.InputTokens)
	}
	n := float64(len(recs))
	want := []string{"overall", "tight + unfold by name (delta)", "3", f3(recall / n)}
	found := false
	for _, line := range strings.Split(stdout.String(), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "overall" && strings.Contains(line, "by name") {
			found = true
			assert.Equal(t, want[3], f[8], line)
			assert.Equal(t, f3(share/n), f[11], line)
		}
	}
	assert.True(t, found, stdout.String())
}

func TestSummarize(t *testing.T) {
	rec := func(kind string, input int, view, reply []int, recall []float64, unfold []string) caseRecord {
		r := caseRecord{Kind: kind, InputTokens: input}
		for i, s := range settings {
			e := exchange{Setting: s.name, ViewTokens: view[i], ReplyTokens: reply[i], Recall: recall[i], Unfold: unfold[i]}
			if recall[i] == 1 {
				e.Hit = 1
			}
			r.Settings = append(r.Settings, e)
		}
		return r
	}
	recs := []caseRecord{
		rec("tool", 100, []int{30, 10, 10, 10}, []int{0, 0, 40, 5}, []float64{1, 0.5, 1, 1}, []string{"", "", "1-9", "f"}),
		rec("tool", 200, []int{40, 20, 20, 20}, []int{0, 0, 0, 0}, []float64{1, 0, 0, 0}, []string{"", "", "", ""}),
		rec("", 50, []int{25, 5, 5, 5}, []int{0, 0, 20, 10}, []float64{0.5, 0.5, 1, 0.5}, []string{"", "", "1-2", "g"}),
	}
	tests := []struct {
		setting           int
		recall, hit, unf  float64
		tokens, median    float64
		overallOrToolOnly bool
	}{
		{0, (1 + 1 + 0.5) / 3, 2.0 / 3, 0, (0.3 + 0.2 + 0.5) / 3, 0.3, true},
		{1, (0.5 + 0 + 0.5) / 3, 0, 0, (0.1 + 0.1 + 0.1) / 3, 0.1, true},
		{2, 2.0 / 3, 2.0 / 3, 2.0 / 3, (0.5 + 0.1 + 0.5) / 3, 0.5, true},
		{3, (1 + 0 + 0.5) / 3, 1.0 / 3, 2.0 / 3, (0.15 + 0.1 + 0.3) / 3, 0.15, true},
		{2, 0.5, 0.5, 0.5, 0.3, 0.3, false}, // tool only: median of 0.5 and 0.1
	}
	for _, tt := range tests {
		in := recs
		if !tt.overallOrToolOnly {
			in = recs[:2]
		}
		st := summarize(in, tt.setting)
		assert.Equal(t, len(in), st.n)
		assert.InDelta(t, tt.recall, st.recall, 1e-12, "setting %d", tt.setting)
		assert.InDelta(t, tt.hit, st.hit, 1e-12)
		assert.InDelta(t, tt.unf, st.unfold, 1e-12)
		assert.InDelta(t, tt.tokens, st.tokens, 1e-12)
		assert.InDelta(t, tt.median, st.median, 1e-12)
		assert.True(t, st.unjudged)
	}
	gs := groups(recs)
	require.Len(t, gs, 3)
	assert.Equal(t, []string{"tool", "commit", "overall"}, []string{gs[0].name, gs[1].name, gs[2].name})

	var b bytes.Buffer
	require.NoError(t, report(&b, recs, true))
	assert.Contains(t, b.String(), "| overall | tight + unfold by range | 3 | 0.667 | 0.667 | 0.667 | 0.367 | 0.500 |")
	assert.Contains(t, b.String(), "| setting | tool (2) | commit (1) | overall (3) |\n| --- | --- | --- | --- |")
}

// With hints (the default), the simulated reader unfolds the item a
// placeholder hints at, by name in the name setting.
func TestSimFollowsHints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-out", dir, "-workers", "2", fixture}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	recs, err := readTranscripts(filepath.Join(dir, "transcripts.jsonl"))
	require.NoError(t, err)
	files, err := evalset.Load(fixture)
	require.NoError(t, err)
	def, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.1), pruner.WithFoldHints(1))
	require.NoError(t, err)
	hinted := 0
	for i, c := range files[0].Cases {
		p, err := def.With(pruner.WithFileName(c.Path))
		require.NoError(t, err)
		first, err := p.Prune(ctx, c.Query, c.Text)
		require.NoError(t, err)
		for _, ph := range first.Placeholders {
			if ph.Hint == "" {
				continue
			}
			hinted++
			for _, ex := range recs[i].Settings {
				if ex.Setting == "name" {
					assert.Equal(t, ph.Hint, ex.Unfold, c.ID)
				}
			}
			break
		}
	}
	assert.Positive(t, hinted)
}
