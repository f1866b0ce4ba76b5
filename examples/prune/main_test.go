package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

const sample = `import time


def backoff(attempt):
    return min(30, 2 ** attempt)


def render_table(rows, columns, width=80):
    header = " | ".join(c.title() for c in columns)
    lines = [header, "-" * min(width, len(header))]
    for row in rows:
        cells = [str(row.get(c, "")) for c in columns]
        lines.append(" | ".join(cells))
    return "\n".join(lines)
`

// unrelatedLine is a line of sample that no backoff query needs.
const unrelatedLine = `cells = [str(row.get(c, ""))`

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
		{"small input whole", []string{"-q", "how is the backoff delay computed?", "-f", file}, "", exitOK,
			[]string{"def backoff(attempt):", unrelatedLine}, nil, []string{"returned whole: shorter than 200 tokens"}},
		{"file input, line model", []string{"-q", "how is the backoff delay computed?", "-min-tokens", "0", "-f", file}, "", exitOK,
			[]string{"def backoff(attempt):", "omitted"}, nil, []string{"line kept"}},
		{"file input, lexical", []string{"-q", "how is the backoff delay computed?", "-scorer", "lexical", "-min-tokens", "0", "-f", file}, "", exitOK,
			[]string{"def backoff(attempt):"}, []string{unrelatedLine}, []string{"lexical (BM25) baseline"}},
		{"lexical shorthand", []string{"-q", "backoff attempt", "-lexical", "-json", "-f", file}, "", exitOK,
			[]string{`"scorer": "lexical"`}, nil, []string{"lexical (BM25) baseline"}},
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
			[]string{`"scorer": "line"`, `"lines"`, `"kept_lines"`}, nil, nil},
		{"swepruner format", []string{"-q", "backoff attempt", "-swepruner", "-f", file}, "", exitOK,
			[]string{"(filtered"}, nil, nil},
		{"tiny model", []string{"-model", tiny, "-q", "backoff", "-f", file}, "", exitOK,
			nil, nil, []string{"lamr kept"}},
		{"tiny model, blocked attention", []string{"-model", tiny, "-q", "backoff", "-min-tokens", "0", "-attention-block", "16", "-f", file}, "", exitOK,
			[]string{"def backoff(attempt):"}, nil, []string{"lamr kept"}},
		{"bad -precision", []string{"-model", tiny, "-q", "x", "-precision", "fp8"}, "", exitUsage, nil, nil, []string{"precision \"fp8\""}},
		{"bad -attention-block", []string{"-model", tiny, "-q", "x", "-attention-block", "-2"}, "", exitUsage, nil, nil, []string{"attention block -2"}},
		{"unknown -backend", []string{"-model", tiny, "-q", "x", "-backend", "tpu9"}, "", exitUsage, nil, nil, []string{`unknown backend "tpu9"`}},
		{"bad -min-tokens", []string{"-q", "x", "-min-tokens", "-1"}, "", exitUsage, nil, nil, []string{"min"}},
		{"bad -min-relevance", []string{"-q", "x", "-min-relevance", "2"}, "", exitUsage, nil, nil, []string{"relevance"}},
		{"budget", []string{"-q", "backoff attempt", "-budget", "60", "-f", file}, "", exitOK,
			[]string{"def backoff(attempt):"}, []string{unrelatedLine}, nil},
		{"missing query", []string{"-f", file}, "", exitUsage, nil, nil, []string{"-q is required"}},
		{"unknown flag", []string{"-q", "x", "-bogus"}, "", exitUsage, nil, nil, []string{"bogus"}},
		{"stray argument", []string{"-q", "x", "extra"}, "", exitUsage, nil, nil, []string{"unexpected arguments"}},
		{"two budgets", []string{"-q", "x", "-budget", "5", "-lines", "0.2"}, "", exitUsage, nil, nil, []string{"exclude each other"}},
		{"compression", []string{"-q", "backoff attempt", "-compression", "2", "-f", file}, "", exitOK,
			[]string{"omitted"}, nil, nil},
		{"ratio is gone", []string{"-q", "x", "-ratio", "0.2"}, "", exitUsage, nil, nil, []string{"-ratio is gone", "-compression X", "-lines F"}},
		{"input over -max-input", []string{"-q", "backoff", "-max-input", "10"}, sample, exitTooBig,
			nil, nil, []string{"input too large: standard input: over 10 bytes (-max-input; 0 lifts the cap)"}},
		{"file over -max-input", []string{"-q", "backoff", "-max-input", "10", "-f", file}, "", exitTooBig,
			nil, nil, []string{"input too large: " + file + ": " + strconv.Itoa(len(sample)) + " bytes, over 10 (-max-input; 0 lifts the cap)"}},
		{"input at -max-input", []string{"-q", "backoff", "-max-input", strconv.Itoa(len(sample))}, sample, exitOK, []string{"def backoff"}, nil, nil},
		{"-max-input 0 lifts the cap", []string{"-q", "backoff", "-max-input", "0"}, sample, exitOK, []string{"def backoff"}, nil, nil},
		{"input over -max-input-lines", []string{"-q", "backoff", "-max-input-lines", "3"}, sample, exitTooBig,
			nil, nil, []string{"input too large", "14 lines > limit 3", "-max-input-lines"}},
		{"negative -max-input", []string{"-q", "x", "-max-input", "-1"}, "", exitUsage, nil, nil, []string{"0 lifts"}},
		{"bad threshold", []string{"-q", "x", "-threshold", "7"}, "", exitUsage, nil, nil, []string{"threshold"}},
		{"unknown -backend, line model", []string{"-q", "x", "-f", file, "-backend", "quantum"}, "", exitUsage, nil, nil, []string{`unknown backend "quantum"`}},
		{"-lexical against -scorer", []string{"-q", "x", "-f", file, "-lexical", "-scorer", "line"}, "", exitUsage, nil, nil, []string{"contradicts -scorer line"}},
		{"unknown -lang", []string{"-q", "x", "-f", file, "-lang", "klingon"}, "", exitUsage, nil, nil, []string{"unknown language", "klingon"}},
		{"-swepruner with a budget", []string{"-q", "x", "-f", file, "-swepruner", "-budget", "50"}, "", exitUsage, nil, nil, []string{"-swepruner keeps lines by threshold"}},
		{"-swepruner with -n", []string{"-q", "x", "-f", file, "-swepruner", "-n"}, "", exitUsage, nil, nil, []string{"-n numbers the library's output"}},
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

// TestUsageErrorsOnce: a bad flag is reported once (by the flag package,
// with the usage), not again by the command.
func TestUsageErrorsOnce(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-q", "x", "-bogus"}, strings.NewReader(""), &stdout, &stderr)
	require.Equal(t, exitUsage, code)
	assert.Equal(t, 1, strings.Count(stderr.String(), "flag provided but not defined: -bogus"), stderr.String())
	assert.Contains(t, stderr.String(), "-compression")
}

// endless is a reader that never ends, counting what was read from it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestBoundedStdin: standard input is read up to -max-input bytes and one
// more, never to its end.
func TestBoundedStdin(t *testing.T) {
	in := &endless{}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-q", "x", "-max-input", "100000"}, in, &stdout, &stderr)
	require.Equal(t, exitTooBig, code, stderr.String())
	assert.LessOrEqual(t, in.n, int64(100000+32<<10), "read at most the cap plus one buffer")
	assert.Contains(t, stderr.String(), "over 100000 bytes")
	assert.Empty(t, stdout.String())
}

// TestJSONIsResult: -json prints the library's Result as json.Marshal
// encodes it, the one shape /v1/prune and the MCP tools' _meta use too.
func TestJSONIsResult(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "retry.py")
	require.NoError(t, os.WriteFile(file, []byte(sample), 0o644))
	ctx := context.Background()
	for _, extra := range [][]string{nil, {"-lines", "0.3"}, {"-scorer", "lexical"}} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"-q", "how is the backoff delay computed?", "-f", file, "-json"}, extra...)
		require.Equal(t, exitOK, run(ctx, args, strings.NewReader(""), &stdout, &stderr), stderr.String())

		opts := []pruner.Option{pruner.WithFileName(file)}
		if len(extra) > 0 && extra[0] == "-lines" {
			opts = append(opts, pruner.WithLineBudget(0.3))
		}
		if len(extra) > 0 && extra[0] == "-scorer" {
			opts = append(opts, pruner.WithScorer(pruner.ScorerLexical))
		}
		p, err := pruner.Load(ctx, "", opts...)
		require.NoError(t, err)
		res, err := p.Prune(ctx, "how is the backoff delay computed?", sample)
		require.NoError(t, err)
		want, err := json.Marshal(res)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), stdout.String(), "%v", extra)
		assert.Contains(t, stdout.String(), `"kept_lines"`)
		assert.NotContains(t, stdout.String(), `"Text"`)
	}
}

// TestNoCgoBuildSaysWhy: without cgo the build fails with an error naming
// the cause, not only a list of undefined tree-sitter symbols.
func TestNoCgoBuildSaysWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "a CGO_ENABLED=0 build cannot succeed: the grammars are C")
	assert.Contains(t, string(out), "pruner_needs_cgo_for_its_tree_sitter_grammars_build_with_CGO_ENABLED_1_and_a_C_compiler")
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
		Text  string `json:"text"`
		Lines []struct {
			Number int  `json:"number"`
			Kept   bool `json:"kept"`
		} `json:"lines"`
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
