package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traindata is the shared training data, relative to this package.
const traindata = "../../../../shared/traindata"

func TestGenerateInvariants(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if _, err := os.Stat(filepath.Join(traindata, "go_mux.jsonl.gz")); err != nil {
		t.Skip("training data (../shared/traindata) is absent")
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "data"), 0o755))
	for _, f := range []string{"go_mux.jsonl.gz", "go_chi.jsonl.gz", "python_httpx.jsonl.gz"} {
		b, err := os.ReadFile(filepath.Join(traindata, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "data", f), b, 0o644))
	}
	repos, err := loadRepos(filepath.Join(dir, "data"))
	require.NoError(t, err)
	scratch := filepath.Join(dir, "scratch")
	require.NoError(t, os.MkdirAll(scratch, 0o755))
	for _, fam := range families {
		cs, err := generate(fam, repos, 4, 7, 2, scratch)
		require.NoError(t, err)
		require.NotEmpty(t, cs, fam.name)
		out := filepath.Join(dir, fam.name+".jsonl.gz")
		require.NoError(t, writeCases(out, cs))
		for _, c := range cs {
			assert.True(t, strings.HasPrefix(c.ID, "tool:"+fam.name+"/"), c.ID)
			assert.Equal(t, "tool:"+fam.name, c.Repo)
			assert.Equal(t, "tool", c.Kind)
			assert.Equal(t, "text", c.Lang)
			assert.NotEmpty(t, strings.TrimSpace(c.Query), c.ID)
			assert.NotContains(t, c.Text, scratch, c.ID)
			assert.NotContains(t, c.Text, dir, c.ID)
			lines := splitLines(c.Text)
			assert.Equal(t, len(lines), c.FileLines, c.ID)
			require.NotEmpty(t, c.GoldLines, c.ID)
			for i, g := range c.GoldLines {
				require.True(t, g >= 1 && g <= len(lines), "%s: gold %d out of range", c.ID, g)
				assert.NotEmpty(t, strings.TrimSpace(lines[g-1]), "%s: blank gold line %d", c.ID, g)
				if i > 0 {
					assert.Greater(t, g, c.GoldLines[i-1], "%s: gold not sorted/unique", c.ID)
				}
			}
			assert.Contains(t, []string{"train", "val"}, c.Split)
		}
	}
	// Nothing is left behind in the scratch root.
	left, err := os.ReadDir(scratch)
	require.NoError(t, err)
	assert.Empty(t, left)
}

func TestDescribe(t *testing.T) {
	assert.Equal(t, "fixed the retry loop", describe("Fix the retry loop."))
	assert.Equal(t, "added support for ranges", describe("core: add support for ranges (#123)"))
	assert.True(t, isTestPath("src/foo_test.go"))
	assert.True(t, isTestPath("tests/conftest.py"))
	assert.False(t, isTestPath("src/BytesToNameCanonicalizer.java"))
}
