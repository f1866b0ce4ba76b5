package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/testcorpus"
)

var long = flag.Bool("long", false, "run the stress tests at soak sizes")

// devTexts returns the in-repository corpus's texts and, where ../shared is
// beside the repository, the dev set's, each cut to at most maxBytes at a
// line boundary (0: whole).
func devTexts(t *testing.T, maxBytes int) []string {
	t.Helper()
	cases, err := testcorpus.Cases("evalsets/dev")
	require.NoError(t, err)
	var texts []string
	for _, c := range cases {
		text := c.Text
		if maxBytes > 0 && len(text) > maxBytes {
			if cut := bytes.LastIndexByte([]byte(text[:maxBytes]), '\n'); cut > 0 {
				text = text[:cut+1]
			} else {
				text = text[:maxBytes]
			}
		}
		texts = append(texts, text)
	}
	return texts
}

// checkVerbatim checks a /v1/prune response against its input: outside the
// placeholders, the output is the kept input lines, byte for byte and in
// order.
func checkVerbatim(text string, res *pruner.Result) error {
	in := chunk.SplitLines(text)
	if len(res.Lines) != len(in) {
		return fmt.Errorf("%d lines in the result, %d in the input", len(res.Lines), len(in))
	}
	ph := map[int]bool{}
	for _, p := range res.Placeholders {
		ph[p.OutputLine] = true
	}
	next := 0
	for _, ol := range chunk.SplitLines(res.Text) {
		if ph[ol.Number] {
			continue
		}
		for next < len(in) && !res.Lines[next].Kept {
			next++
		}
		if next == len(in) {
			return fmt.Errorf("output line %d has no kept input line", ol.Number)
		}
		if got, want := res.Text[ol.Start:ol.End], text[in[next].Start:in[next].End]; got != want {
			return fmt.Errorf("output line %d = %q, input line %d = %q", ol.Number, got, next+1, want)
		}
		next++
	}
	for ; next < len(in); next++ {
		if res.Lines[next].Kept {
			return fmt.Errorf("kept input line %d missing from the output", next+1)
		}
	}
	return nil
}

// TestServerCancelStress drives /v1/prune from 8 loopback clients over the
// dev set's texts. Each request carries its own context, cancelled after the
// response is read (as a finished client call does) or given a deadline of
// 0–5 ms that may cut the request off mid-prune, so the server's request
// contexts are cancelled at every point of the pipeline. Before the parse
// cancellation fix this crashed the whole server process. Every 200
// response is checked against the verbatim contract; the only other
// outcome allowed is the client's own deadline.
func TestServerCancelStress(t *testing.T) {
	calls, maxBytes := 5_000, 1500
	if *long {
		calls, maxBytes = 50_000, 0
	}
	texts := devTexts(t, maxBytes)
	p, err := pruner.Load(context.Background(), "")
	require.NoError(t, err)
	h, err := New(p, Config{MaxConcurrent: 4})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: time.Minute}

	const workers = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok, gone int
		shed     int
	)
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for i := w; i < calls; i += workers {
				text := texts[i%len(texts)]
				body, _ := json.Marshal(NativeRequest{Query: "how are errors handled?", Text: &text})
				ctx, cancel := context.WithCancel(context.Background())
				if i%2 == 1 {
					ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rng.IntN(5_000_001)))
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/prune", bytes.NewReader(body))
				resp, err := client.Do(req)
				var data []byte
				if err == nil {
					data, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				cancel()
				switch {
				case err != nil && errors.Is(err, context.DeadlineExceeded):
					mu.Lock()
					gone++
					mu.Unlock()
					continue
				case err != nil:
					errs <- fmt.Errorf("request %d: %w", i, err)
					return
				case resp.StatusCode == http.StatusServiceUnavailable && json.Valid(data):
					// Load shed: cancelled prunes still winding down hold
					// the overrun allowance. A JSON answer, not a failure.
					mu.Lock()
					shed++
					mu.Unlock()
					continue
				case resp.StatusCode != http.StatusOK:
					errs <- fmt.Errorf("request %d: status %d: %s", i, resp.StatusCode, data)
					return
				}
				var res pruner.Result
				if err := json.Unmarshal(data, &res); err != nil {
					errs <- fmt.Errorf("request %d: %w", i, err)
					return
				}
				if err := checkVerbatim(text, &res); err != nil {
					errs <- fmt.Errorf("request %d: %w", i, err)
					return
				}
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d requests: %d answered and checked, %d cut off by the client's deadline, %d shed (503)", calls, ok, gone, shed)
	require.Greater(t, ok, calls/3, "most requests must be answered")
	// The server is still alive and answers.
	resp, err := client.Get(srv.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
