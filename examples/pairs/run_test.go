package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fixtureTasks(t *testing.T) []task {
	var ts []task
	for _, f := range []string{"sample.go", "sample.py", "sample.rs", "sample.ts"} {
		abs, err := filepath.Abs(filepath.Join("testdata", f))
		require.NoError(t, err)
		ts = append(ts, task{src: "test:fixtures@v0", path: f, file: abs})
	}
	return ts
}

// TestDeterministic: mining the same files twice, with different worker
// counts, gives the same bytes.
func TestDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	_, err := mineAll(context.Background(), fixtureTasks(t), 1, &a)
	require.NoError(t, err)
	st, err := mineAll(context.Background(), fixtureTasks(t), 3, &b)
	require.NoError(t, err)
	assert.Equal(t, a.Bytes(), b.Bytes())
	assert.Equal(t, 4, st.records)
	// A gzip header without a modification time or a name.
	zr, err := gzip.NewReader(bytes.NewReader(a.Bytes()))
	require.NoError(t, err)
	assert.True(t, zr.ModTime.IsZero())
	assert.Empty(t, zr.Name)
	recs := readRecords(t, zr)
	require.Len(t, recs, 4)
	assert.Equal(t, "sample.go", recs[0].Path)
	assert.Equal(t, "go", recs[0].Lang)
	for _, r := range recs {
		assert.Equal(t, split(r.Src, r.Path), r.Split)
	}
}

func readRecords(t *testing.T, r io.Reader) []Record {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		out = append(out, rec)
	}
	require.NoError(t, sc.Err())
	return out
}

func copyFixture(t *testing.T, fixture, dst string) {
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, b, 0o644))
}

// TestRunCorpora builds a miniature of each corpus, excluded sources
// included, and checks which sources the output and manifest name.
func TestRunCorpora(t *testing.T) {
	root := t.TempDir()
	gomod := filepath.Join(root, "mod")
	copyFixture(t, "sample.go", filepath.Join(gomod, "example.com/!acme/lib@v1.9.0/a.go"))
	copyFixture(t, "sample.go", filepath.Join(gomod, "example.com/!acme/lib@v1.10.0/a.go"))
	copyFixture(t, "sample.go", filepath.Join(gomod, "example.com/!acme/lib@v1.10.0/testdata/a.go"))
	copyFixture(t, "sample.go", filepath.Join(gomod, "example.com/!acme/lib@v1.10.0/vendor/b/a.go"))
	copyFixture(t, "sample.go", filepath.Join(gomod, "github.com/spf13/cobra@v1.10.2/a.go"))
	copyFixture(t, "sample.go", filepath.Join(gomod, "golang.org/x/sys@v0.1.0/a.go"))
	copyFixture(t, "sample.go", filepath.Join(gomod, "cache/download/x@v1/a.go"))

	py := filepath.Join(root, "dist-packages")
	copyFixture(t, "sample.py", filepath.Join(py, "cachelib/core.py"))
	copyFixture(t, "sample.py", filepath.Join(py, "requests/api.py"))
	copyFixture(t, "sample.py", filepath.Join(py, "pip/_vendor/requests/api.py"))
	copyFixture(t, "sample.py", filepath.Join(py, "pip/_vendor/packaging/tags.py"))
	copyFixture(t, "sample.py", filepath.Join(py, "single.py"))
	require.NoError(t, os.MkdirAll(filepath.Join(py, "cachelib-2.1.dist-info"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(py, "cachelib-2.1.dist-info/METADATA"), []byte("Metadata-Version: 2.1\nName: cachelib\nVersion: 2.1\n\nbody\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(py, "pip-23.0.egg-info"), []byte("Name: pip\nVersion: 23.0\n"), 0o644))

	npm := filepath.Join(root, "npm")
	copyFixture(t, "sample.ts", filepath.Join(npm, "lib/main.ts"))
	copyFixture(t, "sample.ts", filepath.Join(npm, "node_modules/semver/index.ts"))
	copyFixture(t, "sample.ts", filepath.Join(npm, "node_modules/commander/index.ts"))
	for dir, meta := range map[string]string{"": `{"name":"npm","version":"10.0.0"}`, "node_modules/semver": `{"name":"semver","version":"7.5.4"}`, "node_modules/commander": `{"name":"commander","version":"12.0.0"}`} {
		require.NoError(t, os.WriteFile(filepath.Join(npm, dir, "package.json"), []byte(meta), 0o644))
	}

	out := filepath.Join(root, "out", "pairs.jsonl.gz")
	manifest := filepath.Join(root, "MANIFEST.tsv")
	var log bytes.Buffer
	require.NoError(t, run(context.Background(), config{out: out, manifest: manifest, gomod: gomod, python: py, npm: npm, workers: 2}, &log))
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var got []string
	for _, r := range readRecords(t, zr) {
		got = append(got, r.Src+" "+r.Path)
	}
	assert.Equal(t, []string{
		"go:example.com/Acme/lib@v1.10.0 a.go",
		"npm:npm@10.0.0 lib/main.ts",
		"npm:semver@7.5.4 index.ts",
		"py:cachelib@2.1 cachelib/core.py",
		"py:pip@23.0 pip/_vendor/packaging/tags.py",
		"py:single@debian single.py",
	}, got)
	m, err := os.ReadFile(manifest)
	require.NoError(t, err)
	assert.Contains(t, string(m), "go:example.com/Acme/lib\tv1.10.0\t1\t3\t8\n")
	assert.Contains(t, log.String(), "by kind: doc ")
}
