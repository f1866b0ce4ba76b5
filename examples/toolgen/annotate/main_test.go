package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

func writeFamily(t *testing.T, dir, fam string, cases []lmtrain.Case) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	for _, c := range cases {
		require.NoError(t, enc.Encode(c))
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, fam+".jsonl.gz"), buf.Bytes(), 0o644))
}

func TestSampleThenMerge(t *testing.T) {
	data, ann := t.TempDir(), t.TempDir()
	for _, fam := range []string{"go-test", "python-pytest"} {
		var cs []lmtrain.Case
		for i := range 6 {
			text := fmt.Sprintf("%s run %d\nok a\n\nFAIL b\n  want 1 got 2\nFAIL\n", fam, i)
			split := "train"
			if i == 0 {
				split = "val"
			}
			// Two generated questions over one output: sampled once.
			for q := range 2 {
				cs = append(cs, lmtrain.Case{Case: evalset.Case{ID: fmt.Sprintf("%s/%d#%d", fam, i, q), Query: "q", Text: text, Path: "out.txt", GoldLines: []int{4}}, Split: split})
			}
		}
		writeFamily(t, data, fam, cs)
	}
	var log bytes.Buffer
	require.NoError(t, run([]string{"sample", "-data", data, "-out", ann, "-n", "8", "-batches", "2"}, &log))
	idx, err := os.ReadFile(filepath.Join(ann, "index.jsonl"))
	require.NoError(t, err)
	entries := strings.Split(strings.TrimSpace(string(idx)), "\n")
	require.Len(t, entries, 8)
	var first struct{ File, Split, Text string }
	require.NoError(t, json.Unmarshal([]byte(entries[0]), &first))
	vals := strings.Count(string(idx), `"split":"val"`)
	assert.Equal(t, 2, vals, "both val outputs are drawn first")
	shown, err := os.ReadFile(filepath.Join(ann, first.File))
	require.NoError(t, err)
	assert.Contains(t, string(shown), "    4| FAIL b", "numbered lines")
	assert.NotContains(t, string(shown), `"q"`, "annotators never see the generated questions")

	// One good label, one on a blank line, one out of range.
	b, _ := filepath.Split(first.File)
	labels := fmt.Sprintf(`{"file":%q,"query":"which check fails and with what value?","gold_lines":[5,4]}
{"file":%q,"query":"blank","gold_lines":[3]}
{"file":%q,"query":"too far","gold_lines":[99]}
`, first.File, first.File, first.File)
	require.NoError(t, os.WriteFile(filepath.Join(ann, b, "labels.jsonl"), []byte(labels), 0o644))
	out := filepath.Join(t.TempDir(), "natural.jsonl.gz")
	log.Reset()
	require.NoError(t, run([]string{"merge", "-data", data, "-in", ann, "-out", out}, &log))
	assert.Contains(t, log.String(), "2 rejected")
	cs, err := lmtrain.LoadFile(out)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, []int{4, 5}, cs[0].GoldLines)
	assert.Equal(t, splitOf(first.Text, first.Split), cs[0].Split, "a question takes its output's split")
	assert.Equal(t, "text", cs[0].Lang)
}

func TestResplitMovesWholeOutputs(t *testing.T) {
	data := t.TempDir()
	var cs []lmtrain.Case
	for i := range 200 {
		text := fmt.Sprintf("run %d\nFAIL x\n", i)
		for q := range 2 {
			cs = append(cs, lmtrain.Case{Case: evalset.Case{ID: fmt.Sprintf("f/%d#%d", i, q), Query: "q", Text: text, GoldLines: []int{2}}, Split: "train"})
		}
	}
	cs[0].Split, cs[1].Split = "val", "val"
	writeFamily(t, data, "fam", cs)
	require.NoError(t, run([]string{"resplit", "-data", data}, &bytes.Buffer{}))
	got, err := lmtrain.LoadFile(filepath.Join(data, "fam.jsonl.gz"))
	require.NoError(t, err)
	require.Len(t, got, len(cs))
	val := 0
	for i := 0; i < len(got); i += 2 {
		assert.Equal(t, got[i].Split, got[i+1].Split, "both questions of one output share its split")
		if got[i].Split == "val" {
			val++
		}
	}
	assert.Equal(t, "val", got[0].Split, "val stays val")
	assert.InDelta(t, 40, val, 20, "about a fifth of 200 outputs")
}
