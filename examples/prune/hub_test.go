package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/hfhub/hubtest"
)

// TestHubModel: -model hf:owner/name downloads from the Hub (HF_ENDPOINT, a
// fake one here) into the cache with progress on stderr, and prints what
// -model on the local folder prints; the second run downloads nothing.
func TestHubModel(t *testing.T) {
	local := filepath.Join("..", "..", "testdata", "tiny-swepruner")
	s := hubtest.New(t)
	s.AddRepo("acme/tiny-swepruner", hubtest.ReadDir(t, local))
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_ENDPOINT", s.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("GOMEMLIMIT", "off") // keep this test process's limit as it is

	args := func(model string) []string {
		return []string{"-model", model, "-q", "how is the backoff computed?", "-min-tokens", "0", "-json"}
	}
	var want, wantErr bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), args(local), strings.NewReader(sample), &want, &wantErr), wantErr.String())
	for i, wantProgress := range []bool{true, false} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args("hf:acme/tiny-swepruner"), strings.NewReader(sample), &out, &errOut)
		require.Equal(t, exitOK, code, errOut.String())
		assert.JSONEq(t, want.String(), out.String())
		assert.Equal(t, wantProgress, strings.Contains(errOut.String(), "downloading model.safetensors: done (4.7 MiB)"), "run %d: %s", i, errOut.String())
	}

	var out, errOut bytes.Buffer
	code := run(context.Background(), args("hf:acme/missing"), strings.NewReader(sample), &out, &errOut)
	assert.Equal(t, exitRuntime, code)
	assert.Contains(t, errOut.String(), "repository acme/missing not found")

	// A bad option is refused before anything is fetched.
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	out.Reset()
	errOut.Reset()
	code = run(context.Background(), append(args("hf:acme/tiny-swepruner"), "-lang", "klingon"), strings.NewReader(sample), &out, &errOut)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut.String(), "klingon")
	assert.NotContains(t, errOut.String(), "downloading")
}
