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
	if why := gnuToolsMissing(); why != "" {
		t.Skip("GNU du/find features are missing: " + why)
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
	skipped := 0
	for _, fam := range families {
		cs, err := generate(fam, repos, 4, 7, 2, scratch)
		require.NoError(t, err)
		if len(cs) == 0 {
			// Tool versions differ between machines; fewer scenarios may
			// survive, and none is not a failure of the generator.
			t.Logf("%s: no scenario survived on this machine; skipping its checks", fam.name)
			skipped++
			continue
		}
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
	if skipped == len(families) {
		t.Skip("no scenario of any family survived with this machine's tools")
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

// gnuToolsMissing says which GNU du/find feature the listing family needs
// is missing here, or "" when all work.
func gnuToolsMissing() string {
	dir, err := os.MkdirTemp("", "gnucheck-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	if err := exec.Command("du", "-h", "--max-depth=1", dir).Run(); err != nil {
		return "du --max-depth: " + err.Error()
	}
	if err := exec.Command("find", dir, "-type", "d", "-printf", "%s %p\n").Run(); err != nil {
		return "find -printf: " + err.Error()
	}
	return ""
}

func TestSplitPerScenario(t *testing.T) {
	a := &output{name: "x-0001-log", lines: make([]string, 30), qs: []question{{"q", []int{0}}}}
	b := &output{name: "x-0001-blame", lines: make([]string, 30), qs: []question{{"q", []int{0}}}}
	for s := uint64(0); s < 50; s++ {
		assert.Equal(t, a.cases("git-log-blame", s, "x-0001")[0].Split, b.cases("git-log-blame", s, "x-0001")[0].Split)
	}
}
