package main

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
	"github.com/stretchr/testify/require"
)

var familyTool = map[string]string{"go-build-vet": "go", "node-test": "node", "python-job-log": "python3"}

func TestGenerateInvariants(t *testing.T) {
	for fam, tool := range familyTool {
		t.Run(fam, func(t *testing.T) {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s not on PATH: %v", tool, err)
			}
			out := t.TempDir()
			st, err := runFamily(fam, out, 7, 4, 2)
			require.NoError(t, err)
			if st.Scenarios == 0 {
				t.Skipf("every %s scenario was dropped; the local %s version probably formats its output differently from the one the generator targets", fam, tool)
			}
			f, err := os.Open(filepath.Join(out, fam+".jsonl.gz"))
			require.NoError(t, err)
			defer f.Close()
			zr, err := gzip.NewReader(f)
			require.NoError(t, err)
			dec := json.NewDecoder(zr)
			n := 0
			for dec.More() {
				var c Case
				require.NoError(t, dec.Decode(&c))
				n++
				ls := family.SplitLines(c.Text)
				require.Equal(t, len(ls), c.FileLines)
				require.NotEmpty(t, strings.TrimSpace(c.Query))
				require.NotEmpty(t, c.GoldLines)
				require.Equal(t, "tool:"+fam, c.Repo)
				require.True(t, strings.HasPrefix(c.ID, "tool:"+fam+"/"))
				require.Contains(t, []string{"train", "val"}, c.Split)
				require.NotContains(t, c.Text, os.TempDir()+"/toolgen-")
				for i, g := range c.GoldLines {
					require.GreaterOrEqual(t, g, 1)
					require.LessOrEqual(t, g, len(ls))
					require.NotEmpty(t, strings.TrimSpace(ls[g-1]), "gold line %d blank in %s", g, c.ID)
					if i > 0 {
						require.Greater(t, g, c.GoldLines[i-1], "gold lines not sorted/unique in %s", c.ID)
					}
				}
			}
			require.Equal(t, st.Train+st.Val, n)
		})
	}
}

func TestSplitLines(t *testing.T) {
	require.Equal(t, []string{"a", "", "b"}, family.SplitLines("a\n\nb\n"))
	require.Equal(t, []string{"a"}, family.SplitLines("a"))
}
