package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/golden"
)

var checkpoint = filepath.Join(golden.Dir(), "tiny-swepruner")

func newServer(t *testing.T, cfg Config, opts ...pruner.Option) *httptest.Server {
	t.Helper()
	p, err := pruner.Load(context.Background(), checkpoint, opts...)
	require.NoError(t, err)
	cfg.TokenizerDir = checkpoint
	h, err := New(p, cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	var r *bytes.Reader
	switch b := body.(type) {
	case string:
		r = bytes.NewReader([]byte(b))
	default:
		data, err := json.Marshal(b)
		require.NoError(t, err)
		r = bytes.NewReader(data)
	}
	resp, err := http.Post(url, "application/json", r)
	require.NoError(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, buf.Bytes()
}

// TestGoldenPrune posts every SWE-Pruner golden case as the original
// service's clients do and requires the reference response.
func TestGoldenPrune(t *testing.T) {
	g, err := golden.Load("golden_swepruner.json")
	require.NoError(t, err)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			srv := newServer(t, Config{}, pruner.WithMaxLength(c.MaxLength))
			status, body := post(t, srv.URL+"/prune", map[string]any{
				"query": c.Query, "code": c.Code, "threshold": c.Threshold,
				"always_keep_first_frags": c.AlwaysKeepFirstFrags, "chunk_overlap_tokens": c.ChunkOverlapTokens,
			})
			require.Equal(t, http.StatusOK, status, string(body))
			var raw map[string]any
			require.NoError(t, json.Unmarshal(body, &raw))
			for _, k := range []string{"score", "pruned_code", "token_scores", "kept_frags", "origin_token_cnt",
				"left_token_cnt", "model_input_token_cnt", "error_msg"} {
				assert.Contains(t, raw, k)
			}
			assert.Nil(t, raw["error_msg"])
			var got PruneResponse
			require.NoError(t, json.Unmarshal(body, &got))
			assert.Equal(t, c.PrunedCode, got.PrunedCode)
			assert.Equal(t, c.Response.KeptFrags, got.KeptFrags)
			assert.InDelta(t, c.Response.Score, got.Score, 1e-5)
			assert.Equal(t, c.Response.OriginTokenCnt, got.OriginTokenCnt)
			assert.Equal(t, c.Response.LeftTokenCnt, got.LeftTokenCnt)
			assert.Equal(t, c.Response.ModelInputTokenCnt, got.ModelInputTokenCnt)
			// token_scores: the merged token scores, as [token text, score].
			require.Len(t, got.TokenScores, len(c.MergedTokenScores))
			runes := []rune(c.Code)
			for i, want := range c.MergedTokenScores {
				text := string(runes[int(want[0]):int(want[1])])
				assert.Equal(t, text, got.TokenScores[i][0], "token %d", i)
				assert.InDelta(t, want[2], got.TokenScores[i][1], 1e-5, "token %d", i)
			}
		})
	}
}

const snippet = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"

func TestPruneDefaultsAndEdges(t *testing.T) {
	srv := newServer(t, Config{})
	tests := []struct {
		name      string
		body      any
		wantCode  string
		wantFrags []int
		wantErr   bool // error_msg set
	}{
		{name: "empty code", body: `{"query":"q","code":""}`, wantCode: "", wantFrags: []int{}},
		{name: "blank query returns the code whole", body: map[string]any{"query": " ", "code": snippet},
			wantCode: snippet, wantFrags: []int{1, 2, 3, 4, 5, 6}, wantErr: true},
		// blank lines are filtered, but a short filtered run is re-emitted verbatim
		{name: "threshold 0 keeps every scored line", body: map[string]any{"query": "add", "code": snippet, "threshold": 0},
			wantCode: strings.TrimSuffix(snippet, "\n"), wantFrags: []int{1, 2, 5, 6}},
		{name: "always_keep_first_frags at threshold 1", body: map[string]any{"query": "add", "code": snippet, "threshold": 1, "always_keep_first_frags": true},
			wantCode: "def add(a, b):\n(filtered 5 lines)", wantFrags: []int{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv.URL+"/prune", tc.body)
			require.Equal(t, http.StatusOK, status, string(body))
			var got PruneResponse
			require.NoError(t, json.Unmarshal(body, &got))
			assert.Equal(t, tc.wantCode, got.PrunedCode)
			assert.Equal(t, tc.wantFrags, got.KeptFrags)
			assert.Equal(t, tc.wantErr, got.ErrorMsg != nil)
			assert.NotNil(t, got.TokenScores)
		})
	}
}

func TestErrors(t *testing.T) {
	srv := newServer(t, Config{MaxBodyBytes: 1024})
	big := fmt.Sprintf(`{"query":"q","code":%q}`, strings.Repeat("x = 1\n", 400))
	tests := []struct {
		name, method, path, body string
		want                     int
	}{
		{"malformed JSON", http.MethodPost, "/prune", `{"query": "q", "code": `, http.StatusBadRequest},
		{"not an object", http.MethodPost, "/prune", `[1,2]`, http.StatusBadRequest},
		{"trailing data", http.MethodPost, "/prune", `{"query":"q","code":"x"} {}`, http.StatusBadRequest},
		{"missing query", http.MethodPost, "/prune", `{"code":"x = 1"}`, http.StatusBadRequest},
		{"missing code", http.MethodPost, "/prune", `{"query":"q"}`, http.StatusBadRequest},
		{"wrong type", http.MethodPost, "/prune", `{"query":1,"code":"x"}`, http.StatusBadRequest},
		{"threshold out of range", http.MethodPost, "/prune", `{"query":"q","code":"x","threshold":2}`, http.StatusBadRequest},
		{"negative overlap", http.MethodPost, "/prune", `{"query":"q","code":"x","chunk_overlap_tokens":-1}`, http.StatusBadRequest},
		{"oversized body", http.MethodPost, "/prune", big, http.StatusRequestEntityTooLarge},
		{"oversized native body", http.MethodPost, "/v1/prune", big, http.StatusRequestEntityTooLarge},
		{"native missing query", http.MethodPost, "/v1/prune", `{"text":"x"}`, http.StatusBadRequest},
		{"native missing text", http.MethodPost, "/v1/prune", `{"query":"q"}`, http.StatusBadRequest},
		{"native two budgets", http.MethodPost, "/v1/prune", `{"query":"q","text":"x","options":{"token_budget":10,"line_budget":0.5}}`, http.StatusBadRequest},
		{"native bad language", http.MethodPost, "/v1/prune", `{"query":"q","text":"x","options":{"language":"klingon"}}`, http.StatusBadRequest},
		{"native bad decision", http.MethodPost, "/v1/prune", `{"query":"q","text":"x","options":{"decision":"coin"}}`, http.StatusBadRequest},
		{"native binary text", http.MethodPost, "/v1/prune", `{"query":"q","text":"\u0000\u0000\u0000\u0000IHDR\u0000\u0000"}`, http.StatusUnprocessableEntity},
		{"binary code", http.MethodPost, "/prune", `{"query":"q","code":"\u0000\u0000\u0000\u0000IHDR\u0000\u0000"}`, http.StatusUnprocessableEntity},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tc.want, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var e errorBody
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.NotEmpty(t, e.ErrorMsg)
		})
	}
	t.Run("wrong method", func(t *testing.T) {
		resp, err := http.Get(srv.URL + "/prune")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
}

func TestHealth(t *testing.T) {
	srv := newServer(t, Config{})
	resp, err := http.Get(srv.URL + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	assert.Equal(t, map[string]any{"status": "healthy", "model_loaded": true, "scorer": "swe-pruner"}, got)
}

func TestTimeout(t *testing.T) {
	srv := newServer(t, Config{Timeout: time.Nanosecond})
	status, body := post(t, srv.URL+"/prune", map[string]any{"query": "add", "code": snippet})
	assert.Equal(t, http.StatusServiceUnavailable, status, string(body))
	assert.Contains(t, string(body), "error_msg")
}

// TestConcurrent sends requests with different thresholds at once, through
// a limit of two running prunes, and requires each to equal its serial
// answer.
func TestConcurrent(t *testing.T) {
	srv := newServer(t, Config{MaxConcurrent: 2})
	thresholds := []float64{0, 0.3, 0.5, 0.7, 1}
	want := make([]string, len(thresholds))
	for i, th := range thresholds {
		status, body := post(t, srv.URL+"/prune", map[string]any{"query": "subtract", "code": snippet, "threshold": th})
		require.Equal(t, http.StatusOK, status)
		want[i] = string(body)
	}
	var wg sync.WaitGroup
	got := make([]string, 4*len(thresholds))
	codes := make([]int, len(got))
	for i := range got {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"query": "subtract", "code": snippet, "threshold": thresholds[i%len(thresholds)]})
			resp, err := http.Post(srv.URL+"/prune", "application/json", bytes.NewReader(body))
			if err != nil {
				got[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			got[i], codes[i] = buf.String(), resp.StatusCode
		})
	}
	wg.Wait()
	for i := range got {
		assert.Equal(t, http.StatusOK, codes[i])
		assert.Equal(t, want[i%len(thresholds)], got[i], "request %d", i)
	}
}

func TestNative(t *testing.T) {
	srv := newServer(t, Config{})
	tests := []struct {
		name  string
		opts  map[string]any
		check func(t *testing.T, got pruner.Result)
	}{
		{"defaults", nil, func(t *testing.T, got pruner.Result) {
			assert.Equal(t, "python", got.Language)
			assert.Equal(t, "swe-pruner", got.Scorer)
		}},
		{"threshold 0 keeps everything", map[string]any{"threshold": 0}, func(t *testing.T, got pruner.Result) {
			assert.Equal(t, snippet, got.Text)
			assert.Equal(t, []int{1, 2, 3, 4, 5, 6}, got.KeptLines())
			assert.Empty(t, got.Placeholders)
		}},
		{"line budget", map[string]any{"line_budget": 0.5, "repair": false}, func(t *testing.T, got pruner.Result) {
			assert.NotEmpty(t, got.KeptLines())
			assert.NotEmpty(t, got.Placeholders)
			assert.LessOrEqual(t, len(got.KeptLines())+len(got.Placeholders), 3, "placeholder lines count against a line budget")
		}},
		{"keep last line at threshold 1, text language", map[string]any{"threshold": 1, "keep_last_line": true, "language": "text"},
			func(t *testing.T, got pruner.Result) {
				assert.Equal(t, []int{6}, got.KeptLines())
				assert.Equal(t, pruner.ReasonAlwaysKeep, got.Lines[5].Reason)
				assert.Equal(t, "", got.Language)
			}},
		{"compat renderer", map[string]any{"swepruner_compat": true, "threshold": 1}, func(t *testing.T, got pruner.Result) {
			assert.Equal(t, "(filtered 6 lines)", got.Text)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := map[string]any{"min_tokens": 0} // the snippet is small
			for k, v := range tc.opts {
				opts[k] = v
			}
			status, body := post(t, srv.URL+"/v1/prune", map[string]any{"query": "add two numbers", "text": snippet, "options": opts})
			require.Equal(t, http.StatusOK, status, string(body))
			var got pruner.Result
			require.NoError(t, json.Unmarshal(body, &got))
			require.Len(t, got.Lines, 6)
			assert.Equal(t, 1, got.Windows)
			assert.Positive(t, got.Tokens.Input)
			assert.Positive(t, got.Tokens.ModelInput)
			for i, l := range got.Lines {
				assert.Equal(t, i+1, l.Number)
				assert.Equal(t, l.Kept, l.Reason != pruner.ReasonNone, "line %d", l.Number)
			}
			tc.check(t, got)
		})
	}
}

// TestNativeIsResult: /v1/prune answers with the library's Result exactly
// as json.Marshal encodes it (the shape of examples/prune -json and the MCP
// tools' _meta), whatever the options.
func TestNativeIsResult(t *testing.T) {
	ctx := context.Background()
	p, err := pruner.Load(ctx, checkpoint)
	require.NoError(t, err)
	h, err := New(p, Config{TokenizerDir: checkpoint})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	tests := []struct {
		name string
		opts map[string]any
		lib  []pruner.Option
	}{
		{"defaults", nil, nil},
		{"threshold and keep last line", map[string]any{"threshold": 0.9, "keep_last_line": true},
			[]pruner.Option{pruner.WithThreshold(0.9), pruner.WithKeepLastLine(true)}},
		{"line budget", map[string]any{"line_budget": 0.3}, []pruner.Option{pruner.WithLineBudget(0.3)}},
		{"token budget", map[string]any{"token_budget": 12}, []pruner.Option{pruner.WithTokenBudget(12)}},
		{"compression", map[string]any{"compression": 2}, []pruner.Option{pruner.WithCompression(2)}},
		{"compat renderer", map[string]any{"swepruner_compat": true}, []pruner.Option{pruner.WithSWEPrunerCompat()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := map[string]any{"min_tokens": 0} // the snippet is small
			for k, v := range tc.opts {
				opts[k] = v
			}
			status, body := post(t, srv.URL+"/v1/prune", map[string]any{"query": "add two numbers", "text": snippet, "options": opts})
			require.Equal(t, http.StatusOK, status, string(body))
			q, err := p.With(append(tc.lib, pruner.WithMinInputTokens(0))...)
			require.NoError(t, err)
			res, err := q.Prune(ctx, "add two numbers", snippet)
			require.NoError(t, err)
			want, err := json.Marshal(res)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(body))
			assert.Contains(t, string(body), `"token_scores"`, "the skimmer's token scores are part of the result")
		})
	}
}

// TestLexicalScorer serves the built-in lexical scorer (no checkpoint): the
// same API, labelled as such, keeping the lines that share the query's
// words.
func TestLexicalScorer(t *testing.T) {
	p, err := pruner.Load(context.Background(), "", pruner.WithScorer(pruner.ScorerLexical))
	require.NoError(t, err)
	h, err := New(p, Config{})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/health")
	require.NoError(t, err)
	var health map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&health))
	resp.Body.Close()
	assert.Equal(t, "lexical", health["scorer"])

	body3 := "    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):\n        raise TypeError(\"numbers only, got %r and %r\" % (a, b))\n"
	code := "def add(a, b):\n" + body3 + "    return a + b\n\n\ndef subtract(a, b):\n    return a - b\n\n\ndef multiply(a, b):\n" + body3 + "    return a * b\n"
	status, body := post(t, srv.URL+"/v1/prune", map[string]any{"query": "subtract", "text": code, "options": map[string]any{"min_tokens": 0}})
	require.Equal(t, http.StatusOK, status, string(body))
	var got pruner.Result
	require.NoError(t, json.Unmarshal(body, &got))
	assert.Equal(t, "lexical", got.Scorer)
	assert.Contains(t, got.KeptLines(), 7)
	assert.NotContains(t, got.KeptLines(), 2)
	assert.NotContains(t, got.KeptLines(), 12)

	status, body = post(t, srv.URL+"/prune", map[string]any{"query": "subtract", "code": code})
	require.Equal(t, http.StatusOK, status, string(body))
	var compat PruneResponse
	require.NoError(t, json.Unmarshal(body, &compat))
	assert.Contains(t, compat.PrunedCode, "def subtract(a, b):")
	assert.NotContains(t, compat.PrunedCode, "def multiply(a, b):")
}

// A negative MaxBodyBytes lifts the body cap: a body over the default is
// read, and only the pruner's own input limit applies to its text.
func TestNoBodyCap(t *testing.T) {
	p, err := pruner.Load(context.Background(), "", pruner.WithScorer(pruner.ScorerLexical), pruner.WithMaxInputBytes(DefaultMaxBodyBytes+1<<20))
	require.NoError(t, err)
	text := strings.Repeat("retry after a backoff of two seconds\n", (DefaultMaxBodyBytes+512<<10)/37)
	require.Greater(t, len(text), DefaultMaxBodyBytes)
	for _, tc := range []struct {
		name    string
		maxBody int64
		want    int
	}{{"default cap", 0, http.StatusRequestEntityTooLarge}, {"no cap", -1, http.StatusOK}} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(p, Config{MaxBodyBytes: tc.maxBody})
			require.NoError(t, err)
			srv := httptest.NewServer(h)
			defer srv.Close()
			status, body := post(t, srv.URL+"/v1/prune", map[string]any{"query": "backoff", "text": text, "options": map[string]any{"line_budget": 0.01}})
			assert.Equal(t, tc.want, status, string(body[:min(len(body), 300)]))
		})
	}
}
