package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"-scorer", "magic"}, {"stray"}, {"-model", "../../../../testdata/tiny-swepruner", "-root", "/does/not/exist"}} {
		err := run(context.Background(), args, nil, io.Discard, io.Discard)
		assert.Error(t, err, "%q", args)
	}
}

// TestStdio speaks JSON-RPC to the server over pipes, as an MCP client
// does: initialize, then read_pruned.
func TestStdio(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-model", "../../../../testdata/tiny-swepruner", "-root", root}, inR, outW, io.Discard)
		outW.Close()
	}()
	out := bufio.NewScanner(outR)
	send := func(msg string) {
		_, err := io.WriteString(inW, msg+"\n")
		require.NoError(t, err)
	}
	recv := func() map[string]any {
		require.True(t, out.Scan(), "a response")
		var m map[string]any
		require.NoError(t, json.Unmarshal(out.Bytes(), &m))
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	assert.Contains(t, recv(), "result")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_pruned","arguments":{"path":"a.txt","context_focus_question":"greeting?"}}}`)
	resp := recv()
	res, ok := resp["result"].(map[string]any)
	require.True(t, ok, "%v", resp)
	content := res["content"].([]any)[0].(map[string]any)
	assert.Equal(t, "hello\n", content["text"], "small output passes through")

	cancel()
	inW.Close()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}
