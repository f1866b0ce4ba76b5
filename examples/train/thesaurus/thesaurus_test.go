package thesaurus_test

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/prunekit/pruner/examples/train/thesaurus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const table = "thesaurus.tsv"

// stop lists words too generic to be a synonym of anything: no term may
// contain one of them as a word.
var stop = map[string]bool{
	"the": true, "a": true, "and": true, "get": true, "set": true,
	"data": true, "value": true, "thing": true,
}

// TestTableFormat checks thesaurus.tsv line by line: UTF-8, sorted, one
// concept<TAB>terms per line, lowercase, 3–15 distinct terms, no stop words.
func TestTableFormat(t *testing.T) {
	f, err := os.Open(table)
	require.NoError(t, err)
	defer f.Close()

	seen := map[string]int{}
	var concepts []string
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		require.Truef(t, utf8.ValidString(line), "line %d: not UTF-8", n)
		require.NotEmptyf(t, line, "line %d: blank line", n)
		parts := strings.Split(line, "\t")
		require.Lenf(t, parts, 2, "line %d: want exactly one tab: %q", n, line)
		concept, list := parts[0], parts[1]
		assert.NotEmptyf(t, concept, "line %d: empty concept", n)
		assert.Equalf(t, strings.TrimSpace(concept), concept, "line %d: concept has outer space", n)
		assert.Equalf(t, strings.ToLower(concept), concept, "line %d: concept not lowercase", n)
		assert.NotContainsf(t, concept, "  ", "line %d: double space in concept", n)
		if prev, dup := seen[concept]; dup {
			t.Errorf("line %d: concept %q repeats line %d", n, concept, prev)
		}
		seen[concept] = n
		concepts = append(concepts, concept)

		terms := strings.Split(list, ",")
		assert.GreaterOrEqualf(t, len(terms), 3, "line %d %q: fewer than 3 terms", n, concept)
		assert.LessOrEqualf(t, len(terms), 15, "line %d %q: more than 15 terms", n, concept)
		inEntry := map[string]bool{}
		for _, term := range terms {
			assert.NotEmptyf(t, term, "line %d %q: empty term", n, concept)
			assert.Equalf(t, strings.TrimSpace(term), term, "line %d %q: term %q has outer space", n, concept, term)
			assert.Equalf(t, strings.ToLower(term), term, "line %d %q: term %q not lowercase", n, concept, term)
			for _, r := range term {
				assert.Falsef(t, unicode.IsControl(r), "line %d %q: control character in %q", n, concept, term)
			}
			assert.Falsef(t, inEntry[term], "line %d %q: term %q repeated", n, concept, term)
			inEntry[term] = true
			for _, w := range strings.Fields(term) {
				assert.Falsef(t, stop[w], "line %d %q: term %q has stop word %q", n, concept, term, w)
			}
		}
	}
	require.NoError(t, sc.Err())
	assert.GreaterOrEqual(t, len(concepts), 1500, "entries")
	assert.Truef(t, sort.StringsAreSorted(concepts), "concepts not sorted")
}

func TestLoad(t *testing.T) {
	tab, err := thesaurus.Load(table)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(tab), 1500)
	def, err := thesaurus.Default()
	require.NoError(t, err)
	assert.Equal(t, tab, def, "embedded table differs from the file")

	_, err = thesaurus.Load(filepath.Join(t.TempDir(), "missing.tsv"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestParseErrors(t *testing.T) {
	for name, in := range map[string]string{
		"no tab":       "retry attempts,retries\n",
		"empty term":   "retry\tattempts,,retries\n",
		"empty head":   "\tattempts,retries\n",
		"repeated":     "retry\tattempts\nretry\tretries\n",
		"trailing sep": "retry\tattempts,\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := thesaurus.Parse(strings.NewReader(in))
			assert.True(t, errors.Is(err, thesaurus.ErrFormat), "got %v", err)
		})
	}
	tab, err := thesaurus.Parse(strings.NewReader("# comment\n\ngive up\tmax, retries ,abort\r\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{"give up": {"max", "retries", "abort"}}, tab)
}

func TestExpandIn(t *testing.T) {
	tab := map[string][]string{
		"give up":  {"max", "retries", "abort"},
		"position": {"pos", "offset", "index"},
		"offset":   {"pos", "skip"},
	}
	got := thesaurus.ExpandIn(tab, []string{"Where", "does", "it", "GIVE", "up"})
	assert.Equal(t, map[string]float64{
		"give": thesaurus.HeadWeight, "up": thesaurus.HeadWeight,
		"max": thesaurus.TermWeight, "retries": thesaurus.TermWeight, "abort": thesaurus.TermWeight,
	}, got)

	// A head word keeps its weight 1 when another concept lists it as a term.
	got = thesaurus.ExpandIn(tab, []string{"position", "offset"})
	assert.Equal(t, thesaurus.HeadWeight, got["offset"])
	assert.Equal(t, thesaurus.HeadWeight, got["position"])
	assert.Equal(t, thesaurus.TermWeight, got["pos"])
	assert.Equal(t, thesaurus.TermWeight, got["skip"])

	// Half a head phrase matches nothing.
	assert.Empty(t, thesaurus.ExpandIn(tab, []string{"give"}))
	assert.Empty(t, thesaurus.ExpandIn(tab, nil))
}

func TestExpandEmbedded(t *testing.T) {
	got := thesaurus.Expand([]string{"retry"})
	require.NotEmpty(t, got)
	assert.Equal(t, thesaurus.HeadWeight, got["retry"])
	for w, weight := range got {
		assert.Containsf(t, []float64{thesaurus.HeadWeight, thesaurus.TermWeight}, weight, "weight of %q", w)
	}
	assert.Empty(t, thesaurus.Expand([]string{"zzzz-not-a-word"}))
}
