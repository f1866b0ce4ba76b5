package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/golden"
	"github.com/prunekit/pruner/internal/hfhub/hubtest"
)

// TestServeHubModel: -model hf:owner/name is fetched (progress on stderr)
// and served; errors from the Hub stop the server before it listens.
func TestServeHubModel(t *testing.T) {
	s := hubtest.New(t)
	s.AddRepo("acme/tiny-swepruner", hubtest.ReadDir(t, filepath.Join(golden.Dir(), "tiny-swepruner")))
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_ENDPOINT", s.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("GOMEMLIMIT", "off") // keep this test process's limit as it is

	err := run(context.Background(), []string{"-model", "hf:acme/missing", "-addr", "127.0.0.1:0"}, &bytes.Buffer{}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not found")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	addr, done := startServer(ctx, t, []string{"-model", "hf:acme/tiny-swepruner", "-addr", "127.0.0.1:0"}, &stderr)
	checkPrunesAdd(t, addr)
	cancel()
	waitShutdown(t, done)
	assert.True(t, strings.Contains(stderr.String(), "downloading model.safetensors: done"), stderr.String())
}

// syncBuffer is a bytes.Buffer safe for the server goroutine to write while
// the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
