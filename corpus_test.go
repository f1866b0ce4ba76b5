package pruner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/testcorpus"
)

// corpusFiles returns the in-repository corpus (testdata/corpus) as an
// eval file, followed by the shared eval files named by rel (paths under
// ../shared) where ../shared is beside the repository, as in CI. The tests
// of the library's promises run over it, so that they hold on every clone.
func corpusFiles(t testing.TB, rel ...string) []evalset.File {
	t.Helper()
	r, err := testcorpus.Open()
	require.NoError(t, err)
	defer r.Close()
	cases, err := evalset.Read(r)
	require.NoError(t, err, testcorpus.FixturePath())
	require.NotEmpty(t, cases)
	files := []evalset.File{{Path: testcorpus.FixturePath(), Name: "corpus", Cases: cases}}
	for _, p := range rel {
		path, ok := testcorpus.Shared(strings.Split(p, "/")...)
		if !ok {
			t.Logf("%s: not used, %s", p, testcorpus.SkipReason(strings.Split(p, "/")...))
			continue
		}
		fs, err := evalset.Load(path)
		require.NoError(t, err)
		files = append(files, fs...)
	}
	return files
}
