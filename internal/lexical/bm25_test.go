package lexical_test

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/lexical"
)

// pyLines splits text as baselines.py's split_lines does.
func pyLines(text string) []string {
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// pyBudget is baselines.py's budget: max(1, min(n, round(r*n))), with
// Python's round-half-to-even.
func pyBudget(r float64, n int) int {
	return max(1, min(n, int(math.RoundToEven(r*float64(n)))))
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

func TestTokensMatchReference(t *testing.T) {
	var cases []struct {
		S     string   `json:"s"`
		Ident []string `json:"ident"`
		Query []string `json:"query"`
	}
	readJSON(t, "tokens.json", &cases)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		t.Run(strconv.Quote(c.S), func(t *testing.T) {
			ident := lexical.Tokens(c.S)
			if len(c.Ident) == 0 {
				assert.Empty(t, ident)
			} else {
				assert.Equal(t, c.Ident, ident)
			}
			q := lexical.QueryTokens(c.S)
			if len(c.Query) == 0 {
				assert.Empty(t, q)
			} else {
				assert.Equal(t, c.Query, q)
			}
		})
	}
}

// TestBM25MatchesReference compares raw scores and top-k selections with
// baselines.py on the first case of every dev file (texts committed in
// testdata, so the test needs nothing outside the module).
func TestBM25MatchesReference(t *testing.T) {
	var cases []struct {
		ID     string           `json:"id"`
		Query  string           `json:"query"`
		Text   string           `json:"text"`
		Scores []float64        `json:"scores"`
		TopK   map[string][]int `json:"topk"`
	}
	readJSON(t, "bm25_cases.json", &cases)
	require.Len(t, cases, 7)
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			lines := pyLines(c.Text)
			got := lexical.BM25(c.Query, lines)
			require.Len(t, got, len(c.Scores))
			for i := range got {
				assert.InDelta(t, c.Scores[i], got[i], 1e-12, "line %d", i+1)
			}
			require.Len(t, c.TopK, 3)
			for rs, want := range c.TopK {
				r, err := strconv.ParseFloat(rs, 64)
				require.NoError(t, err)
				assert.Equal(t, want, lexical.TopK(got, pyBudget(r, len(lines))), "r=%s", rs)
			}
		})
	}
}

// devDir is the shared dev set, next to the checkout.
func devDir() string {
	if d := os.Getenv("PRUNER_EVALSETS"); d != "" {
		return filepath.Join(d, "dev")
	}
	return filepath.Join("..", "..", "..", "shared", "evalsets", "dev")
}

// TestBM25SelectionsOnDevSet checks the r=0.2 selection of every dev case
// against baselines.py (stored as sha1 of the sorted kept line numbers).
func TestBM25SelectionsOnDevSet(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(devDir(), "*.jsonl"))
	if len(files) == 0 {
		t.Skipf("dev set not found at %s (set PRUNER_EVALSETS)", devDir())
	}
	var want map[string]string
	readJSON(t, "bm25_dev_r02.json", &want)
	seen := 0
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var c struct{ ID, Query, Text string }
			require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
			lines := pyLines(c.Text)
			top := lexical.TopK(lexical.BM25(c.Query, lines), pyBudget(0.2, len(lines)))
			sort.Ints(top)
			parts := make([]string, len(top))
			for i, x := range top {
				parts[i] = strconv.Itoa(x + 1)
			}
			sum := sha1.Sum([]byte(strings.Join(parts, ",")))
			w, ok := want[c.ID]
			require.True(t, ok, c.ID)
			assert.Equal(t, w, hex.EncodeToString(sum[:]), c.ID)
			seen++
		}
		require.NoError(t, sc.Err())
		require.NoError(t, fh.Close())
	}
	assert.Equal(t, len(want), seen)
}

func TestTopK(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		scores []float64
		k      int
		want   []int
	}{
		{"ties to earlier", []float64{1, 3, 3, 2, 3}, 3, []int{1, 2, 4}},
		{"zeros keep order", []float64{0, 0, 0}, 2, []int{0, 1}},
		{"nan last", []float64{nan, 0, 1}, 3, []int{2, 1, 0}},
		{"k above n", []float64{0.5, 1}, 9, []int{1, 0}},
		{"k negative", []float64{0.5, 1}, -1, []int{}},
		{"empty", nil, 3, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, lexical.TopK(tt.scores, tt.k))
		})
	}
}

func TestBM25Properties(t *testing.T) {
	lines := []string{
		"func retryRequest(ctx context.Context) error {",
		"",
		"	return scheduleRetry(ctx, backoff)",
		"}",
		"// unrelated comment",
	}
	tests := []struct {
		name  string
		query string
		check func(t *testing.T, s []float64)
	}{
		{"empty query", "", func(t *testing.T, s []float64) {
			assert.Equal(t, make([]float64, len(lines)), s)
		}},
		{"stopwords only", "the and of it", func(t *testing.T, s []float64) {
			assert.Equal(t, make([]float64, len(lines)), s)
		}},
		{"no match", "tokenizer vocabulary", func(t *testing.T, s []float64) {
			assert.Equal(t, make([]float64, len(lines)), s)
		}},
		{"retry lines rank first", "how are retries scheduled? retry", func(t *testing.T, s []float64) {
			assert.Greater(t, s[0], 0.0)
			assert.Greater(t, s[2], 0.0)
			assert.Zero(t, s[1])
			assert.Zero(t, s[3])
			assert.Zero(t, s[4])
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, lexical.BM25(tt.query, lines))
		})
	}
	assert.Empty(t, lexical.BM25("retry", nil))
}

// FuzzTokens checks that pieces partition the ASCII alphanumerics of any
// input: joined, they give back those characters, lowercased, in order; and
// that query tokens are a duplicate-free subset of them.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "HTTPServer", "parseHTTPRequest_v2", "a1B2cD", "\xff\x00ABCdef9", "ÄpfelÖl"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var alnum strings.Builder
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case 'A' <= c && c <= 'Z':
				alnum.WriteByte(c + 'a' - 'A')
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				alnum.WriteByte(c)
			}
		}
		toks := lexical.Tokens(s)
		require.Equal(t, alnum.String(), strings.Join(toks, ""))
		all := map[string]bool{}
		for _, tok := range toks {
			require.NotEmpty(t, tok)
			all[tok] = true
		}
		seen := map[string]bool{}
		for _, q := range lexical.QueryTokens(s) {
			require.True(t, all[q], q)
			require.False(t, seen[q], q)
			require.GreaterOrEqual(t, len(q), 2)
			seen[q] = true
		}
	})
}
