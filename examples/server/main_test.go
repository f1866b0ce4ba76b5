package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/examples/server/internal/httpapi"
	"github.com/prunekit/pruner/internal/golden"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		check   func(t *testing.T, f *flags)
	}{
		{"no model: built-in default", nil, false, func(t *testing.T, f *flags) { assert.Equal(t, "", f.model) }},
		{"stray argument", []string{"-model", "m", "extra"}, true, nil},
		{"unknown flag", []string{"-model", "m", "-nope"}, true, nil},
		{"defaults", []string{"-model", "m"}, false, func(t *testing.T, f *flags) {
			assert.Equal(t, "127.0.0.1:8000", f.addr)
			assert.Equal(t, 8192, f.maxLength)
			assert.Equal(t, f.timeout+30*time.Second, f.writeTimeout)
		}},
		{"device", []string{"-model", "m", "-backend", "xla", "-precision", "bf16", "-attention-block", "2048"}, false, func(t *testing.T, f *flags) {
			assert.Equal(t, "xla", f.backend)
			assert.Equal(t, "bf16", f.precision)
			assert.Equal(t, 2048, f.attnBlock)
		}},
		{"-timeout 0 is the default deadline, also for the write timeout", []string{"-timeout", "0"}, false, func(t *testing.T, f *flags) {
			assert.Equal(t, httpapi.DefaultTimeout, f.timeout)
			assert.Equal(t, httpapi.DefaultTimeout+30*time.Second, f.writeTimeout)
		}},
		{"negative timeout", []string{"-timeout", "-1s"}, true, nil},
		{"negative grace", []string{"-shutdown-grace", "-1s"}, true, nil},
		{"negative -max-body", []string{"-max-body", "-1"}, true, nil},
		{"-view-cache defaults to 64 MiB", nil, false, func(t *testing.T, f *flags) { assert.EqualValues(t, 64<<20, f.viewCache) }},
		{"-view-cache 0 keeps none", []string{"-view-cache", "0"}, false, func(t *testing.T, f *flags) { assert.Zero(t, f.viewCache) }},
		{"negative -view-cache", []string{"-view-cache", "-1"}, true, nil},
		{"explicit", []string{"-model", "m", "-addr", ":0", "-max-body", "10", "-timeout", "5s"}, false, func(t *testing.T, f *flags) {
			assert.Equal(t, ":0", f.addr)
			assert.EqualValues(t, 10, f.maxBody)
			assert.Equal(t, 35*time.Second, f.writeTimeout)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parse(tc.args, io.Discard)
			if tc.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			tc.check(t, f)
		})
	}
}

// TestServeAndShutdown starts the real server, prunes through it and stops
// it the way SIGTERM does (cancelling the context): run returns nil and the
// port is closed.
func TestServeAndShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	model := filepath.Join(golden.Dir(), "tiny-swepruner")
	addr, done := startServer(ctx, t, []string{"-model", model, "-addr", "127.0.0.1:0"}, io.Discard)
	checkPrunesAdd(t, addr)
	cancel()
	waitShutdown(t, done)
	_, err := http.Get("http://" + addr + "/health")
	assert.Error(t, err)
}

// startServer runs the server with args until ctx ends and returns its
// address once it listens, with the channel run's result arrives on.
func startServer(ctx context.Context, t *testing.T, args []string, stderr io.Writer) (string, <-chan error) {
	t.Helper()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, stderr, ready) }()
	select {
	case addr := <-ready:
		return addr, done
	case err := <-done:
		t.Fatalf("run returned early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start")
	}
	return "", nil
}

// checkPrunesAdd prunes a two-line function through the SWE-Pruner
// endpoint with threshold 0, which keeps it whole.
func checkPrunesAdd(t *testing.T, addr string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": "add", "code": "def add(a, b):\n    return a + b\n", "threshold": 0})
	resp, err := http.Post("http://"+addr+"/prune", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	resp.Body.Close()
	assert.Equal(t, "def add(a, b):\n    return a + b", got["pruned_code"])
}

// waitShutdown waits for run to return nil after its context ended.
func waitShutdown(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not shut down")
	}
}

// A request still running when the grace ends is cancelled and answers,
// instead of losing its connection.
func TestShutdownCancelsAfterGrace(t *testing.T) {
	reqCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	started := make(chan struct{})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-r.Context().Done() // a prune that would outlast the grace
			w.WriteHeader(http.StatusServiceUnavailable)
		}),
		BaseContext: func(net.Listener) context.Context { return reqCtx },
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(ln)
	status := make(chan int, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/prune")
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	<-started
	require.NoError(t, shutdown(srv, 50*time.Millisecond, cancelRequests, slog.New(slog.NewTextHandler(io.Discard, nil))))
	assert.Equal(t, http.StatusServiceUnavailable, <-status)
}
