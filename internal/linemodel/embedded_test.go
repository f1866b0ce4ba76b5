package linemodel

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/lexical"
	"github.com/prunekit/pruner/internal/syntax"
)

var updatePins = flag.Bool("update-pins", false, "rewrite testdata/embedded_pins.json from the embedded model")

const pinsFile = "testdata/embedded_pins.json"

// pinCases are fixed inputs whose embedded-model outputs are pinned.
var pinCases = []struct {
	name, query, text string
	lang              syntax.Language
}{
	{"go parseRange", "Handle bad range headers in parseRange", goSrc, syntax.Go},
	{"go atoi", "atoi: multiply digits correctly", goSrc, syntax.Go},
	{"python retry", "Retry failed requests with exponential backoff",
		"import time\n\nimport requests\n\n\ndef fetch(url, retries=3):\n    for attempt in range(retries):\n        try:\n            return requests.get(url)\n        except requests.ConnectionError:\n            time.sleep(1)\n    raise RuntimeError(\"unreachable\")\n\n\ndef main():\n    print(fetch(\"http://example.com\"))\n",
		syntax.Python},
	{"text", "range header", "first line\nsecond line about the range header\nthird\n", syntax.Text},
}

type pin struct {
	Name  string    `json:"name"`
	Score []float32 `json:"score"`
	Rank  []float32 `json:"rank"`
}

// TestEmbeddedPinned pins the embedded model's Score and Rank on a few
// fixed inputs (tolerance 1e-4), so a change of weights, features or
// inference code is noticed. Regenerate after retraining with
// go test ./internal/linemodel -run TestEmbeddedPinned -update-pins.
func TestEmbeddedPinned(t *testing.T) {
	m, err := Embedded()
	require.NoError(t, err)
	ctx := context.Background()
	var got []pin
	for _, c := range pinCases {
		got = append(got, pin{Name: c.name, Score: m.Score(ctx, c.query, c.text, c.lang), Rank: m.Rank(ctx, c.query, c.text, c.lang)})
	}
	if *updatePins {
		b, err := json.MarshalIndent(got, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(pinsFile), 0o755))
		require.NoError(t, os.WriteFile(pinsFile, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(pinsFile)
	require.NoError(t, err)
	var want []pin
	require.NoError(t, json.Unmarshal(b, &want))
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Name, got[i].Name)
		require.Len(t, got[i].Score, len(want[i].Score), want[i].Name)
		for j := range want[i].Score {
			assert.InDelta(t, want[i].Score[j], got[i].Score[j], 1e-4, "%s score line %d", want[i].Name, j+1)
			assert.InDelta(t, want[i].Rank[j], got[i].Rank[j], 1e-3*float64(max(1, abs32(want[i].Rank[j]))), "%s rank line %d", want[i].Name, j+1)
		}
	}
	// The gold line of the parseRange case ranks in the top 20%.
	r := got[0].Rank
	top := topLines(r, max(1, len(r)/5))
	assert.Contains(t, top, 12, "parseRange gold line 12 in %v", top)
	assert.True(t, strings.HasPrefix(m.Cfg.Kind, "linemodel"))
}

// topLines returns the 1-based line numbers of the k best scores (ties to
// the earlier line), as the eval sets keep lines (train.TopK).
func topLines(scores []float32, k int) []int {
	f := make([]float64, len(scores))
	for i, s := range scores {
		f[i] = float64(s)
	}
	var out []int
	for _, j := range lexical.TopK(f, k) {
		out = append(out, j+1)
	}
	return out
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
