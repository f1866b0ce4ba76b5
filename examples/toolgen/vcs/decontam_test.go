package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// evalTool is the public dev eval set of tool-output questions, relative
// to this package.
const evalTool = "../../../../shared/evalsets/questions/tool.jsonl"

// toolData holds the generated files, relative to this package.
const toolData = "../../train/tooldata"

// decontamN is the length of the word runs two queries may not share.
const decontamN = 8

// normWords lower-cases s, strips punctuation and splits it into words.
func normWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func nGrams(ws []string, n int) []string {
	var out []string
	for i := 0; i+n <= len(ws); i++ {
		out = append(out, strings.Join(ws[i:i+n], " "))
	}
	return out
}

// TestDecontam fails when a generated query equals an eval query or shares
// a run of decontamN consecutive words with one.
func TestDecontam(t *testing.T) {
	f, err := os.Open(evalTool)
	if err != nil {
		t.Skipf("eval set %s is absent: %v", evalTool, err)
	}
	defer f.Close()
	exact := map[string]string{}
	grams := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e struct {
			ID    string `json:"id"`
			Query string `json:"query"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		ws := normWords(e.Query)
		exact[strings.Join(ws, " ")] = e.ID
		for _, g := range nGrams(ws, decontamN) {
			grams[g] = e.ID
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, exact, "no eval queries read")
	checked := 0
	for _, fam := range []string{"git-log-blame", "file-listing", "grep"} {
		path := filepath.Join(toolData, fam+".jsonl.gz")
		gf, err := os.Open(path)
		require.NoError(t, err, path)
		gz, err := gzip.NewReader(gf)
		require.NoError(t, err, path)
		dec := json.NewDecoder(gz)
		for dec.More() {
			var c outCase
			require.NoError(t, dec.Decode(&c), path)
			checked++
			ws := normWords(c.Query)
			if id, ok := exact[strings.Join(ws, " ")]; ok || strings.TrimSpace(c.Query) == "" {
				t.Errorf("%s: query %q equals eval query %s", c.ID, c.Query, id)
				continue
			}
			for _, g := range nGrams(ws, decontamN) {
				if id, ok := grams[g]; ok {
					t.Errorf("%s: query %q shares %q with eval query %s", c.ID, c.Query, g, id)
					break
				}
			}
		}
		gz.Close()
		gf.Close()
	}
	require.Positive(t, checked)
}
