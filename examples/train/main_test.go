package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/linemodel"
)

func writeCases(t *testing.T, path string, n int, split bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "linemodel", "testdata", "range.go.txt"))
	require.NoError(t, err)
	src := string(data)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := 0; i < n; i++ {
		c := map[string]any{"id": fmt.Sprintf("x/y@%d:main.go", i), "repo": "x/y", "lang": "go", "path": "main.go",
			"query": "Handle bad range headers in parseRange", "text": src, "gold_lines": []int{12}}
		if i%2 == 1 {
			c["query"], c["gold_lines"] = "atoi: multiply digits correctly", []int{21}
		}
		if split {
			c["split"] = []string{"train", "train", "train", "val"}[i%4]
		}
		b, err := json.Marshal(c)
		require.NoError(t, err)
		zw.Write(append(b, '\n'))
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// TestTrainAndEval runs the command end to end on a tiny data set: train,
// resume, evaluate on an eval directory.
func TestTrainAndEval(t *testing.T) {
	data, evalDir, out := t.TempDir(), t.TempDir(), t.TempDir()
	writeCases(t, filepath.Join(data, "go_x.jsonl.gz"), 16, true)
	writeCases(t, filepath.Join(evalDir, "go_x.jsonl.gz"), 4, false)
	ctx := context.Background()
	small := []string{"-data", data, "-out", out, "-batch", "4", "-hidden", "8,6,5", "-embed", "4", "-lr", "1e-2"}
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(ctx, append(small, "-epochs", "2"), &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "val r=0.20")
	m, err := linemodel.Load(out)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Cfg.Epochs)
	assert.Equal(t, 6, m.Cfg.Step)

	require.NoError(t, run(ctx, append(small, "-epochs", "3", "-resume"), &stdout, &stderr), stderr.String())
	m, err = linemodel.Load(out)
	require.NoError(t, err)
	assert.Equal(t, 9, m.Cfg.Step)

	stdout.Reset()
	require.NoError(t, run(ctx, []string{"-out", out, "-eval", evalDir}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "per language")
	assert.True(t, strings.Contains(stdout.String(), "\ngo "), stdout.String())
}
