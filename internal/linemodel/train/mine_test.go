package train

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
)

const mineGo = `package cache

import "time"

// Evict removes every entry older than the given age from the cache.
func (c *Cache) Evict(age time.Duration) int {
	n := 0
	for k, e := range c.entries {
		// drop entries whose deadline has already passed
		if time.Since(e.at) > age {
			delete(c.entries, k)
			n++
		}
	}
	return n
}

func helper() {}
`

const minePy = `import os


def load(path):
    """Read the settings file and merge it into the environment.

    Longer text that is not part of the question.
    """
    with open(path) as f:
        for line in f:
            key, _, value = line.partition("=")
            os.environ[key.strip()] = value.strip()


def other():
    return 1
`

func TestMineDocQuestions(t *testing.T) {
	cases := []Case{
		{Case: evalset.Case{ID: "a", Repo: "o/r", Lang: "go", Path: "cache.go", Query: "old commit", Text: "package cache\n"}},
		{Case: evalset.Case{ID: "b", Repo: "o/r", Lang: "go", Path: "cache.go", Query: "commit", Text: mineGo}},
		{Case: evalset.Case{ID: "c", Repo: "o/r", Lang: "python", Path: "settings.py", Query: "commit", Text: minePy}},
	}
	qs := MineDocQuestions(context.Background(), cases, DocOptions{Seed: 1})
	byKind := map[string][]Case{}
	for _, q := range qs {
		byKind[q.Kind+" "+q.Lang] = append(byKind[q.Kind+" "+q.Lang], q)
		lines := q.Lines()
		require.NotEmpty(t, q.GoldLines, q.ID)
		for i, g := range q.GoldLines {
			require.True(t, g >= 1 && g <= len(lines), "%s: gold %d of %d lines", q.ID, g, len(lines))
			assert.NotEmpty(t, strings.TrimSpace(lines[g-1]), q.ID)
			if i > 0 {
				assert.Less(t, q.GoldLines[i-1], g)
			}
		}
		assert.Equal(t, "train", q.Split, "5%% of files are val; these two are not")
	}
	require.Len(t, byKind["doc go"], 1, "the documented Go method; the undocumented helper is not mined")
	require.Len(t, byKind["inline go"], 1)
	require.Len(t, byKind["doc python"], 1)

	doc := byKind["doc go"][0]
	assert.Contains(t, doc.Query, "removes every entry older than the given age")
	assert.NotContains(t, doc.Query, "Evict", "the function's own name is dropped")
	assert.NotContains(t, doc.Text, "removes every entry", "the comment is not left in the text")
	assert.Equal(t, "func (c *Cache) Evict(age time.Duration) int {", doc.Lines()[doc.GoldLines[0]-1])
	assert.Len(t, doc.GoldLines, 7, "signature and body, without lone braces or the inline comment")
	assert.Equal(t, evalset.CountLines(mineGo)-1, evalset.CountLines(doc.Text))

	in := byKind["inline go"][0]
	assert.Contains(t, in.Query, "drop entries whose deadline has already passed")
	var gold []string
	for _, g := range in.GoldLines {
		gold = append(gold, strings.TrimSpace(in.Lines()[g-1]))
	}
	assert.Equal(t, []string{"if time.Since(e.at) > age {", "delete(c.entries, k)", "n++"}, gold)

	py := byKind["doc python"][0]
	assert.Contains(t, py.Query, "ead the settings file and merge it into the environment")
	assert.NotContains(t, py.Query, "Longer text", "first sentence only")
	assert.NotContains(t, py.Text, `"""`)
	assert.Equal(t, "def load(path):", py.Lines()[py.GoldLines[0]-1])
	assert.Len(t, py.GoldLines, 5)

	again := MineDocQuestions(context.Background(), cases, DocOptions{Seed: 1})
	assert.Equal(t, qs, again, "deterministic")
}

func TestFirstSentence(t *testing.T) {
	for _, tc := range []struct {
		doc  []string
		name string
		want string
	}{
		{[]string{"// Open opens the named file for reading. If successful, ..."}, "Open", "opens the named file for reading."},
		{[]string{"/**", " * Returns the <em>elapsed</em> time in {@link Unit nanoseconds}.", " * @param x ignored", " */"}, "f", "Returns the elapsed time in Unit nanoseconds."},
		{[]string{"/// Splits the input at every comma", "/// and trims each piece."}, "split", "Splits the input at every comma and trims each piece."},
		{[]string{`    """Short."""`}, "f", ""},
		{[]string{"// TODO: make this faster than it is today"}, "f", ""},
		{[]string{"// nolint:errcheck // we do not care about this one"}, "f", ""},
	} {
		assert.Equal(t, tc.want, firstSentence(tc.doc, tc.name), "%q", tc.doc)
	}
}

func TestMineDocQuestionsPointersAndIDs(t *testing.T) {
	src := `package p

// Reset clears the counter and stores zero in the pointer.
func (a *A) Reset(p *int) {
	a.n = 0
	*p = 0
}

// Reset clears the buffer and stores zero in the pointer.
func (b *B) Reset(p *int) {
	b.buf = nil
	*p = 0
}

func z() {}
`
	qs := MineDocQuestions(context.Background(), []Case{{Case: evalset.Case{ID: "x", Repo: "o/r", Lang: "go", Path: "p.go", Text: src}}}, DocOptions{Seed: 1})
	require.Len(t, qs, 2)
	assert.NotEqual(t, qs[0].ID, qs[1].ID, "same-named methods get distinct ids")
	for _, q := range qs {
		last := q.Lines()[q.GoldLines[len(q.GoldLines)-1]-1]
		assert.Equal(t, "\t*p = 0", last, "a dereference is code, not a comment")
	}
	assert.Equal(t, "clears the buffer", lowerFirst("Clears the buffer"))
	assert.Equal(t, "élan vital", lowerFirst("Élan vital"), "runes, not bytes")
	assert.Equal(t, "HTTP headers", lowerFirst("HTTP headers"))
}
