package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
)

// The fixture: two cases and scores that put their gold lines first
// (testdata/scores_*.jsonl; the hashes were written by score.py's formula,
// so the test also checks that Go and Python agree on it).
const (
	scoresCases = "testdata/scores_cases.jsonl"
	scoresGold  = "testdata/scores_gold.jsonl"
)

// writeScores writes entries as a scores file and returns its path.
func writeScores(t *testing.T, entries ...scoreEntry) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "scores.jsonl")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path
}

// goldEntries reads the fixture's scores.
func goldEntries(t *testing.T) []scoreEntry {
	t.Helper()
	fh, err := os.Open(scoresGold)
	require.NoError(t, err)
	defer fh.Close()
	var out []scoreEntry
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var e scoreEntry
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		out = append(out, e)
	}
	require.Len(t, out, 2)
	return out
}

func TestCaseHashMatchesFixture(t *testing.T) {
	f, err := evalset.ReadFile(scoresCases)
	require.NoError(t, err)
	for i, e := range goldEntries(t) {
		assert.Equal(t, e.ID, f.Cases[i].ID)
		assert.Equal(t, e.Hash, caseHash(f.Cases[i]), "sha256(query NUL text)[:16], as score.py computes it")
	}
}

// -scores adds a row per name, NAME+repair, that ranks lines by the file's
// scores: scores that put the gold lines first keep them all (at half the
// lines, which leaves room for their repair), their reverse few of them.
func TestRunScoresRow(t *testing.T) {
	gold := goldEntries(t)
	var rev []scoreEntry
	for _, e := range gold {
		r := e
		r.Lines = make([]float64, len(e.Lines))
		for i, v := range e.Lines {
			r.Lines[i] = -v
		}
		rev = append(rev, r)
	}
	revPath := writeScores(t, rev...)
	rep, stdout := runReport(t, "-lines", "0.5", "-methods", "bm25", "-parse=false",
		"-scores", "teach="+scoresGold, "-scores", "anti="+revPath, scoresCases)
	assert.Contains(t, stdout, "teach+repair")
	assert.Contains(t, stdout, "anti+repair")
	rows := map[string]evalset.Summary{}
	for _, r := range rep.Overall.Rows {
		rows[r.Method] = r.Summary
	}
	require.Contains(t, rows, "teach+repair")
	require.Contains(t, rows, "anti+repair")
	require.Contains(t, rows, "bm25")
	assert.InDelta(t, 1.0, rows["teach+repair"].Mean.Recall, 1e-9)
	assert.Less(t, rows["anti+repair"].Mean.Recall, 0.5)

	// A comma list is the same as two flags.
	rep2, _ := runReport(t, "-lines", "0.5", "-methods", "bm25", "-parse=false",
		"-scores", "teach="+scoresGold+",anti="+revPath, scoresCases)
	require.Len(t, rep2.Overall.Rows, len(rep.Overall.Rows))
	for i, r := range rep2.Overall.Rows {
		assert.Equal(t, rep.Overall.Rows[i].Method, r.Method)
		assert.Equal(t, rep.Overall.Rows[i].Summary.Mean, r.Summary.Mean)
	}
}

func TestRunScoresErrors(t *testing.T) {
	gold := goldEntries(t)
	short := gold[1]
	short.Lines = short.Lines[:len(short.Lines)-1]
	long := gold[1]
	long.Lines = append(append([]float64(nil), long.Lines...), 0)
	otherText := gold[1]
	otherText.Hash = "0123456789abcdef"
	conflict := gold[1]
	conflict.Lines = append([]float64{9}, gold[1].Lines[1:]...)
	noLines := gold[1]
	noLines.Lines = nil
	dir := t.TempDir()
	raw := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	tests := []struct {
		name string
		spec string // the -scores value
		code int
		want string
	}{
		{"no name", scoresGold, exitUsage, "want NAME=FILE.jsonl"},
		{"bad name", "a b=" + scoresGold, exitUsage, "the name must be"},
		{"name twice", "x=" + scoresGold + ",x=" + scoresGold, exitUsage, "named twice"},
		{"no file", "x=" + filepath.Join(dir, "none.jsonl"), exitRuntime, "no such file"},
		{"not json", "x=" + raw("bad.jsonl", "{\"id\": \n"), exitRuntime, "bad.jsonl:1"},
		{"no lines", "x=" + writeScores(t, gold[0], noLines), exitRuntime, "want id, hash and lines"},
		{"missing case", "x=" + writeScores(t, gold[0]), exitRuntime, "no scores for case o/r@2:calc.py"},
		{"other text", "x=" + writeScores(t, gold[0], otherText), exitRuntime, "is there for another query or text"},
		{"short", "x=" + writeScores(t, gold[0], short), exitRuntime, "case o/r@2:calc.py has 13 lines, the file scores 12"},
		{"long", "x=" + writeScores(t, gold[0], long), exitRuntime, "has 13 lines, the file scores 14"},
		{"conflict", "x=" + writeScores(t, gold[0], gold[1], conflict), exitRuntime, "given twice with different scores"},
		{"non-finite", "x=" + raw("inf.jsonl", `{"id":"a","hash":"b","lines":[1e999]}`+"\n"), exitRuntime, "inf.jsonl:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), []string{"-methods", "bm25", "-scores", tt.spec, scoresCases}, io.Discard, &stderr)
			assert.Equal(t, tt.code, code, stderr.String())
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
	// The same entry twice (a case repeated in a set) is fine.
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-methods", "bm25", "-scores", "x=" + writeScores(t, gold[0], gold[1], gold[1]), scoresCases}, io.Discard, &stderr)
	assert.Equal(t, exitOK, code, stderr.String())
}

// -dump-units writes each case's identity, the innermost definition of
// each line and the line model's scores.
func TestDumpUnits(t *testing.T) {
	out := filepath.Join(t.TempDir(), "units.jsonl")
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"-dump-units", out, scoresCases}, &stdout, &stderr), stderr.String())
	assert.Empty(t, stdout.String())
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2)
	gold := goldEntries(t)
	tests := []struct {
		n    int
		defs [][2]int
		def  map[int]int // 1-based line → index into defs (-1: none)
	}{
		{20, [][2]int{{6, 11}, {14, 20}}, map[int]int{1: -1, 5: -1, 6: 0, 8: 0, 11: 0, 12: -1, 14: 1, 17: 1, 20: 1}},
		{13, [][2]int{{4, 6}, {9, 13}}, map[int]int{1: -1, 4: 0, 6: 0, 7: -1, 10: 1, 13: 1}},
	}
	for i, tt := range tests {
		var d unitDump
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &d))
		assert.Equal(t, gold[i].ID, d.ID)
		assert.Equal(t, gold[i].Hash, d.Hash)
		assert.Equal(t, "scores_cases", d.File)
		assert.Equal(t, tt.defs, d.Defs, d.ID)
		require.Len(t, d.Def, tt.n)
		for l, want := range tt.def {
			assert.Equal(t, want, d.Def[l-1], "%s line %d", d.ID, l)
		}
		require.Len(t, d.LineScores, tt.n)
		for _, s := range d.LineScores {
			assert.True(t, s >= 0 && s <= 1)
		}
	}
}

func TestDefSpansText(t *testing.T) {
	def, spans := defSpans(context.Background(), "ok 1\nFAIL x\n", "text", 2)
	assert.Equal(t, []int{-1, -1}, def)
	assert.Empty(t, spans)
}
