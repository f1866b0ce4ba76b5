package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = "import time\n\n\ndef backoff(attempt):\n    return min(30, 2 ** attempt)\n\n\ndef unrelated():\n    return 42\n"

func TestRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "retry.py")
	require.NoError(t, os.WriteFile(file, []byte(sample), 0o644))
	tiny := filepath.Join("..", "..", "testdata", "tiny-lamr")
	tests := []struct {
		name      string
		args      []string
		stdin     string
		code      int
		stdout    []string // substrings
		notStdout []string
		stderr    []string
	}{
		{"file input, line model", []string{"-q", "how is the backoff delay computed?", "-f", file}, "", exitOK,
			[]string{"def backoff(attempt):"}, []string{"return 42"}, []string{"line kept"}},
		{"file input, lexical", []string{"-q", "how is the backoff delay computed?", "-scorer", "lexical", "-f", file}, "", exitOK,
			[]string{"def backoff(attempt):"}, []string{"return 42"}, []string{"lexical (BM25) baseline"}},
		{"lexical shorthand", []string{"-q", "backoff attempt", "-lexical", "-json", "-f", file}, "", exitOK,
			[]string{`"Scorer": "lexical"`}, nil, []string{"lexical (BM25) baseline"}},
		{"unknown scorer", []string{"-q", "x", "-scorer", "magic"}, "", exitUsage, nil, nil, []string{"unknown scorer"}},
		{"binary input", []string{"-q", "x"}, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10", exitBinary,
			nil, nil, []string{"input looks binary: ", "NUL bytes", "pass -binary"}},
		{"UTF-16 input", []string{"-q", "x"}, "\xff\xfeh\x00i\x00\n\x00", exitBinary, nil, nil, []string{"UTF-16", "convert it to UTF-8"}},
		{"binary input as text", []string{"-q", "x", "-binary"}, "\x00\x01\x02\nIHDR\n", exitOK, []string{"IHDR"}, nil, nil},
		{"stdin input", []string{"-q", "backoff attempt"}, sample, exitOK,
			[]string{"def backoff(attempt):"}, nil, []string{"kept"}},
		{"line numbers", []string{"-q", "backoff attempt", "-n", "-f", file}, "", exitOK,
			[]string{"     4\tdef backoff(attempt):"}, nil, nil},
		{"json", []string{"-q", "backoff attempt", "-json", "-f", file}, "", exitOK,
			[]string{`"Scorer": "line"`, `"Lines"`}, nil, nil},
		{"swepruner format", []string{"-q", "backoff attempt", "-swepruner", "-f", file}, "", exitOK,
			[]string{"(filtered"}, nil, nil},
		{"tiny model", []string{"-model", tiny, "-q", "backoff", "-f", file}, "", exitOK,
			nil, nil, []string{"lamr kept"}},
		{"budget", []string{"-q", "backoff attempt", "-budget", "20", "-f", file}, "", exitOK,
			[]string{"def backoff(attempt):"}, []string{"return 42"}, nil},
		{"missing query", []string{"-f", file}, "", exitUsage, nil, nil, []string{"-q is required"}},
		{"unknown flag", []string{"-q", "x", "-bogus"}, "", exitUsage, nil, nil, []string{"bogus"}},
		{"stray argument", []string{"-q", "x", "extra"}, "", exitUsage, nil, nil, []string{"unexpected arguments"}},
		{"two budgets", []string{"-q", "x", "-budget", "5", "-lines", "0.2"}, "", exitUsage, nil, nil, []string{"exclude each other"}},
		{"bad threshold", []string{"-q", "x", "-threshold", "7"}, "", exitUsage, nil, nil, []string{"threshold"}},
		{"missing file", []string{"-q", "x", "-f", filepath.Join(dir, "nope.py")}, "", exitRuntime, nil, nil, []string{"nope.py"}},
		{"bad model", []string{"-q", "x", "-model", dir}, "", exitRuntime, nil, nil, []string{"bad checkpoint"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, strings.NewReader(tc.stdin), &stdout, &stderr)
			require.Equal(t, tc.code, code, "stderr: %s", stderr.String())
			for _, s := range tc.stdout {
				assert.Contains(t, stdout.String(), s)
			}
			for _, s := range tc.notStdout {
				assert.NotContains(t, stdout.String(), s)
			}
			for _, s := range tc.stderr {
				assert.Contains(t, stderr.String(), s)
			}
		})
	}
}

// TestBinary builds the command and runs it as a subprocess on a real file,
// as a user's shell would.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "prune")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	src := filepath.Join(runtime.GOROOT(), "src", "strings", "builder.go")

	cmd := exec.Command(bin, "-q", "where does the builder grow its buffer?", "-f", src, "-json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var res struct {
		Text  string
		Lines []struct {
			Number int
			Kept   bool
		}
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	assert.Contains(t, res.Text, "func (b *Builder) grow(n int) {")
	assert.Less(t, strings.Count(res.Text, "\n"), len(res.Lines), "something was folded")

	cmd = exec.Command(bin, "-q", "x", "-threshold", "2")
	require.Error(t, cmd.Run())
	assert.Equal(t, exitUsage, cmd.ProcessState.ExitCode())

	cmd = exec.Command(bin, "-q", "grow buffer")
	cmd.Stdin = strings.NewReader("func grow() {\n\tbuf = append(buf, 0)\n}\n")
	out, err = cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "func grow() {")
}
