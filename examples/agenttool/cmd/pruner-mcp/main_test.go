package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"-scorer", "magic"}, {"stray"}, {"-model", "../../../../testdata/tiny-swepruner", "-root", "/does/not/exist"},
		{"-lines", "0.2", "-budget", "100"}, {"-lines", "3"}, {"-max-input", "-1"}, {"-ratio", "4"}, {"-view-cache", "-1"}} {
		err := run(context.Background(), args, nil, io.Discard, io.Discard)
		assert.Error(t, err, "%q", args)
	}
}

// session runs the server on pipes with args and speaks JSON-RPC to it.
type session struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *bufio.Scanner
	done   chan error
	cancel context.CancelFunc
}

func start(t *testing.T, args ...string) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1), cancel: cancel}
	s.out.Buffer(nil, 1<<20)
	go func() {
		s.done <- run(ctx, args, inR, outW, io.Discard)
		outW.Close()
	}()
	t.Cleanup(func() { cancel(); inW.Close() })
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	assert.Contains(t, s.recv(), "result")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *session) send(msg string) {
	_, err := io.WriteString(s.in, msg+"\n")
	require.NoError(s.t, err)
}

func (s *session) recv() map[string]any {
	require.True(s.t, s.out.Scan(), "a response")
	var m map[string]any
	require.NoError(s.t, json.Unmarshal(s.out.Bytes(), &m))
	return m
}

// TestMaxInput: -max-input caps the files the tools read (0 lifts it) and
// the JSON-RPC messages read from standard input, which end the session
// with an error naming the cap instead of being buffered whole.
func TestMaxInput(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("retry later\n", 100)), 0o644))
	read := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_pruned","arguments":{"path":"big.txt"}}}`

	s := start(t, "-root", root, "-max-input", "1000")
	res := s.call(read)
	assert.Equal(t, true, res["isError"], "%v", res)
	assert.Contains(t, fmt.Sprint(res["content"]), "over the 1000 byte limit")

	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_pruned","arguments":{"path":"` + strings.Repeat("x", 2000) + `"}}}`)
	select {
	case err := <-s.done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "JSON-RPC message of over 1000 bytes")
	case <-time.After(10 * time.Second):
		t.Fatal("an oversized message did not end the session")
	}

	s = start(t, "-root", root, "-max-input", "0")
	res = s.call(read)
	assert.Nil(t, res["isError"], "%v", res)
	assert.Contains(t, fmt.Sprint(res["content"]), "retry later")
}

// call sends a tools/call and returns its result.
func (s *session) call(msg string) map[string]any {
	s.send(msg)
	resp := s.recv()
	res, ok := resp["result"].(map[string]any)
	require.True(s.t, ok, "%v", resp)
	return res
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

// TestStdioFollowUp: over stdio, a read_pruned call with expand answers
// with the new lines only, against the view the previous call sent; with
// -view-cache 0, against the first view each time.
func TestStdioFollowUp(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "step %d ok: compiled module\n", i)
	}
	b.WriteString("ERROR cannot open config file\nmake: exit status 2\n")
	require.NoError(t, os.WriteFile(filepath.Join(root, "build.log"), []byte(b.String()), 0o644))
	model := "../../../../testdata/tiny-swepruner"
	read := func(id int, expand string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_pruned","arguments":`+
			`{"path":"build.log","context_focus_question":"why did the build fail?","expand":%q}}}`, id, expand)
	}
	for _, tc := range []struct{ cache string }{{"67108864"}, {"0"}} {
		s := start(t, "-model", model, "-root", root, "-threshold", "1", "-tail", "0", "-view-cache", tc.cache)
		first := fmt.Sprint(s.call(read(2, ""))["content"])
		assert.Contains(t, first, "... 40 lines omitted (1-40); likely relevant: ", "cache %s: a chosen threshold applies to the first view, with its hint", tc.cache)
		d1 := fmt.Sprint(s.call(read(3, "1-10"))["content"])
		assert.Contains(t, d1, "[unfolded lines 1-10 of build.log; new lines only, numbered;", "cache %s", tc.cache)
		assert.Contains(t, d1, "    10\tstep 10 ok")
		d2 := fmt.Sprint(s.call(read(4, "1-12"))["content"])
		assert.Contains(t, d2, "[unfolded lines 1-12 of build.log; new lines only, numbered; the rest of your earlier view stands]")
		assert.Contains(t, d2, "    12\tstep 12 ok")
		if tc.cache == "0" {
			assert.Contains(t, d2, "     1\tstep 1 ok", "against the first view")
		} else {
			assert.NotContains(t, d2, "     1\tstep 1 ok", "against the last view sent")
		}
	}
}
