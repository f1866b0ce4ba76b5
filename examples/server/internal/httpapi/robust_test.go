package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

// fakeEngine stands in for a model the library would not load: one that
// prunes to NaN, fails, panics, or ignores its deadline.
type fakeEngine struct {
	calls atomic.Int64
	prune func(ctx context.Context, query, text string) (*pruner.Result, error)
}

func (f *fakeEngine) With(...pruner.Option) (engine, error) { return f, nil }
func (f *fakeEngine) Kind() string                          { return "fake" }
func (f *fakeEngine) Prune(ctx context.Context, query, text string) (*pruner.Result, error) {
	f.calls.Add(1)
	return f.prune(ctx, query, text)
}

func okResult(score float64) *pruner.Result {
	return &pruner.Result{
		Text:  "x = 1\n",
		Score: score,
		Lines: []pruner.Line{{Number: 1, Kept: true, Score: score}},
	}
}

func fakeServer(t *testing.T, cfg Config, f *fakeEngine) (*httptest.Server, *Handler) {
	t.Helper()
	h, err := newHandler(f, cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}

type reply struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
}

func do(t *testing.T, method, url, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	client := &http.Client{Timeout: 20 * time.Second} // fail, not hang, on the old code
	start := time.Now()
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{resp.StatusCode, resp.Header, b, time.Since(start)}
}

// requireJSONError checks a JSON error body with a non-empty error_msg.
func requireJSONError(t *testing.T, r reply) string {
	t.Helper()
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	var e errorBody
	require.NoError(t, json.Unmarshal(r.body, &e), "body %q", r.body)
	require.NotEmpty(t, e.ErrorMsg, "body %q", r.body)
	return e.ErrorMsg
}

const (
	sweBody    = `{"query":"q","code":"x = 1\n"}`
	nativeBody = `{"query":"q","text":"x = 1\n"}`
)

// TestNeverEmpty200: a result that cannot be encoded (a NaN score) used to be
// answered 200 with an empty body (the encoder failed after WriteHeader);
// now it is a 500 with a JSON error naming the cause.
func TestNeverEmpty200(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		f := &fakeEngine{prune: func(context.Context, string, string) (*pruner.Result, error) { return okResult(v), nil }}
		srv, _ := fakeServer(t, Config{}, f)
		for _, c := range []struct{ path, body string }{{"/prune", sweBody}, {"/v1/prune", nativeBody}} {
			r := do(t, http.MethodPost, srv.URL+c.path, c.body)
			assert.Equal(t, http.StatusInternalServerError, r.status, "%s %q", c.path, r.body)
			msg := requireJSONError(t, r)
			assert.Contains(t, msg, "cannot encode the response")
			assert.Contains(t, msg, "unsupported value")
		}
	}
}

// TestHealthRunsTheModel: /health prunes a tiny input and reports the
// model's state; it used to answer 200 "healthy" whatever the model did.
func TestHealthRunsTheModel(t *testing.T) {
	tests := []struct {
		name    string
		prune   func(ctx context.Context, query, text string) (*pruner.Result, error)
		want    int
		wantErr string
	}{
		{"healthy", func(context.Context, string, string) (*pruner.Result, error) { return okResult(0.5), nil }, http.StatusOK, ""},
		{"NaN score", func(context.Context, string, string) (*pruner.Result, error) { return okResult(math.NaN()), nil },
			http.StatusServiceUnavailable, "document score is NaN"},
		{"NaN line", func(context.Context, string, string) (*pruner.Result, error) {
			r := okResult(0.5)
			r.Lines[0].Score = math.Inf(-1)
			return r, nil
		}, http.StatusServiceUnavailable, "line 1 score is -Inf"},
		{"NaN token", func(context.Context, string, string) (*pruner.Result, error) {
			r := okResult(0.5)
			r.TokenScores = []pruner.TokenScore{{Score: math.NaN()}}
			return r, nil
		}, http.StatusServiceUnavailable, "token 0 score is NaN"},
		{"prune fails", func(context.Context, string, string) (*pruner.Result, error) {
			return nil, errors.New("backend exploded")
		}, http.StatusServiceUnavailable, "backend exploded"},
		{"prune panics", func(context.Context, string, string) (*pruner.Result, error) { panic("boom") },
			http.StatusServiceUnavailable, "boom"},
		{"prune hangs past the health timeout", func(ctx context.Context, _, _ string) (*pruner.Result, error) {
			time.Sleep(2 * time.Second) // ignores ctx
			return okResult(0.5), nil
		}, http.StatusServiceUnavailable, "deadline exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeEngine{prune: tc.prune}
			srv, _ := fakeServer(t, Config{HealthTimeout: 200 * time.Millisecond}, f)
			r := do(t, http.MethodGet, srv.URL+"/health", "")
			assert.Equal(t, tc.want, r.status, "%s", r.body)
			assert.Less(t, r.took, 1500*time.Millisecond, "health must be bounded by its timeout")
			assert.EqualValues(t, 1, f.calls.Load(), "one real prune")
			var got map[string]any
			require.NoError(t, json.Unmarshal(r.body, &got), "%q", r.body)
			assert.Equal(t, true, got["model_loaded"])
			assert.Equal(t, "fake", got["scorer"])
			if tc.want == http.StatusOK {
				assert.Equal(t, "healthy", got["status"])
				assert.NotContains(t, got, "error_msg")
				return
			}
			assert.Equal(t, "unhealthy", got["status"])
			assert.Contains(t, got["error_msg"], tc.wantErr)
		})
	}
}

// TestHealthCached: the probe runs at most once per HealthTTL, concurrent
// callers share it, and a negative TTL probes every time.
func TestHealthCached(t *testing.T) {
	f := &fakeEngine{prune: func(context.Context, string, string) (*pruner.Result, error) {
		time.Sleep(50 * time.Millisecond)
		return okResult(0.5), nil
	}}
	srv, _ := fakeServer(t, Config{HealthTTL: time.Hour}, f)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r := do(t, http.MethodGet, srv.URL+"/health", "")
			assert.Equal(t, http.StatusOK, r.status)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, f.calls.Load())

	f2 := &fakeEngine{prune: func(context.Context, string, string) (*pruner.Result, error) { return okResult(0.5), nil }}
	srv2, _ := fakeServer(t, Config{HealthTTL: -1}, f2)
	for range 3 {
		assert.Equal(t, http.StatusOK, do(t, http.MethodGet, srv2.URL+"/health", "").status)
	}
	assert.EqualValues(t, 3, f2.calls.Load())
}

// TestHealthRealModel: the tiny checkpoint passes the real probe.
func TestHealthRealModel(t *testing.T) {
	srv := newServer(t, Config{HealthTTL: -1})
	r := do(t, http.MethodGet, srv.URL+"/health", "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.JSONEq(t, `{"status":"healthy","model_loaded":true,"scorer":"swe-pruner"}`, string(r.body))
}

// hangingEngine prunes "hang" queries until released, ignoring ctx (as the
// library's repair pass did on deeply nested input), and others at once.
func hangingEngine(t *testing.T) (*fakeEngine, func()) {
	release := make(chan struct{})
	var once sync.Once
	f := &fakeEngine{prune: func(_ context.Context, query, _ string) (*pruner.Result, error) {
		if query == "hang" {
			<-release
		}
		return okResult(0.5), nil
	}}
	rel := func() { once.Do(func() { close(release) }) }
	t.Cleanup(rel)
	return f, rel
}

// TestDeadlineBoundsWork: with one slot and a 300 ms deadline, a prune that
// ignores its deadline used to hold the request and the only slot until it
// returned (other requests got 503 meanwhile). Now the client gets 504 with
// a JSON body when the deadline passes, and the slot is free for the next
// request.
func TestDeadlineBoundsWork(t *testing.T) {
	f, release := hangingEngine(t)
	srv, h := fakeServer(t, Config{Timeout: 300 * time.Millisecond, MaxConcurrent: 1, MaxOverrun: 1}, f)

	for _, path := range []string{"/prune", "/v1/prune"} {
		body := strings.Replace(sweBody, `"q"`, `"hang"`, 1)
		if path == "/v1/prune" {
			body = strings.Replace(nativeBody, `"q"`, `"hang"`, 1)
		}
		r := do(t, http.MethodPost, srv.URL+path, body)
		assert.Equal(t, http.StatusGatewayTimeout, r.status, "%s", r.body)
		assert.Less(t, r.took, 2*time.Second)
		assert.Contains(t, requireJSONError(t, r), "did not finish within 300ms")
		if path == "/prune" {
			// The slot is free: a quick request is served at once.
			r = do(t, http.MethodPost, srv.URL+"/prune", sweBody)
			assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
			assert.EqualValues(t, 1, h.overrun.Load())
		}
	}
	// Two prunes overrun now, more than MaxOverrun: new work is refused
	// at once until they stop.
	assert.EqualValues(t, 2, h.overrun.Load())
	r := do(t, http.MethodPost, srv.URL+"/prune", sweBody)
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Contains(t, requireJSONError(t, r), "still running past their deadline")
	assert.Less(t, r.took, 200*time.Millisecond)

	release()
	require.Eventually(t, func() bool { return h.overrun.Load() == 0 }, 5*time.Second, 5*time.Millisecond)
	r = do(t, http.MethodPost, srv.URL+"/prune", sweBody)
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

// TestWaitingRequestGetsFreedSlot is the scenario: one slot, a
// prune that ignores its deadline, and a second request arriving meanwhile.
// The second used to wait out its own deadline and get 503 while the first
// held the slot; now the first gets 504 at its deadline, and the second,
// still within its own, gets the freed slot and is served.
func TestWaitingRequestGetsFreedSlot(t *testing.T) {
	f, release := hangingEngine(t)
	srv, _ := fakeServer(t, Config{Timeout: 500 * time.Millisecond, MaxConcurrent: 1}, f)
	done := make(chan reply, 1)
	go func() {
		done <- do(t, http.MethodPost, srv.URL+"/prune", strings.Replace(sweBody, `"q"`, `"hang"`, 1))
	}()
	time.Sleep(150 * time.Millisecond) // let the hanging request take the slot
	r := do(t, http.MethodPost, srv.URL+"/prune", sweBody)
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
	first := <-done
	assert.Equal(t, http.StatusGatewayTimeout, first.status, "%s", first.body)
	requireJSONError(t, first)
	release()
}

// TestPrunePanicIs500: a panic inside a prune (which now runs on its own
// goroutine) is a 500 with a JSON body, and the server keeps serving.
func TestPrunePanicIs500(t *testing.T) {
	var n atomic.Int64
	f := &fakeEngine{prune: func(context.Context, string, string) (*pruner.Result, error) {
		if n.Add(1) == 1 {
			panic("boom")
		}
		return okResult(0.5), nil
	}}
	srv, _ := fakeServer(t, Config{}, f)
	r := do(t, http.MethodPost, srv.URL+"/v1/prune", nativeBody)
	assert.Equal(t, http.StatusInternalServerError, r.status)
	assert.Contains(t, requireJSONError(t, r), "boom")
	assert.Equal(t, http.StatusOK, do(t, http.MethodPost, srv.URL+"/v1/prune", nativeBody).status)
}

// TestNotFoundAndMethodJSON: 404 and 405 used to be the mux's plain text
// ("404 page not found", "Method Not Allowed"); now they are JSON like every
// other error, and 405 keeps its Allow header.
func TestNotFoundAndMethodJSON(t *testing.T) {
	f := &fakeEngine{prune: func(context.Context, string, string) (*pruner.Result, error) { return okResult(0.5), nil }}
	srv, _ := fakeServer(t, Config{}, f)
	tests := []struct {
		method, path string
		want         int
		allow        string
	}{
		{http.MethodGet, "/nope", http.StatusNotFound, ""},
		{http.MethodPost, "/v2/prune", http.StatusNotFound, ""},
		{http.MethodGet, "/prune", http.StatusMethodNotAllowed, "POST"},
		{http.MethodPut, "/v1/prune", http.StatusMethodNotAllowed, "POST"},
		{http.MethodDelete, "/health", http.StatusMethodNotAllowed, "GET, HEAD"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := do(t, tc.method, srv.URL+tc.path, "")
			assert.Equal(t, tc.want, r.status)
			msg := requireJSONError(t, r)
			assert.Contains(t, msg, tc.path)
			assert.Equal(t, tc.allow, r.header.Get("Allow"))
		})
	}
}

// A model whose first call is slow (a graph compiles) warms up without the
// health probe's timeout; the probe then answers in time.
func TestWarmUpBeforeHealth(t *testing.T) {
	var first atomic.Bool
	f := &fakeEngine{prune: func(context.Context, string, string) (*pruner.Result, error) {
		if first.CompareAndSwap(false, true) {
			time.Sleep(300 * time.Millisecond) // the compile
		}
		return okResult(0.5), nil
	}}
	_, h := fakeServer(t, Config{HealthTimeout: 100 * time.Millisecond}, f)
	require.NoError(t, h.WarmUp(context.Background()))
	require.NoError(t, h.Check(context.Background()))

	nan := &fakeEngine{prune: func(context.Context, string, string) (*pruner.Result, error) { return okResult(math.NaN()), nil }}
	_, hn := fakeServer(t, Config{}, nan)
	assert.ErrorContains(t, hn.WarmUp(context.Background()), "warm-up prune")
}
