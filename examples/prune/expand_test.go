package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunExpand: placeholders name what they fold and their range; -expand
// shows ranges in full, byte-identical to the input, and refuses ranges
// outside the input or overlapping.
func TestRunExpand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "retry.py")
	require.NoError(t, os.WriteFile(file, []byte(sample), 0o644))
	base := []string{"-q", "how is the backoff delay computed?", "-min-tokens", "0", "-f", file}
	in := strings.SplitAfter(sample, "\n")
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    []string
		notStdout []string
		stderr    []string
	}{
		{"placeholders name their folds", nil, exitOK,
			[]string{"# ... 9 lines omitted (6-14): def render_table\n"}, []string{unrelatedLine}, nil},
		{"no names", []string{"-no-names"}, exitOK,
			[]string{"# ... 9 lines omitted (6-14)\n"}, []string{"render_table"}, nil},
		{"expand a whole fold", []string{"-expand", "6-14"}, exitOK,
			[]string{strings.Join(in[5:14], "")}, []string{"omitted"}, []string{"line kept 14 of 14 lines"}},
		{"expand inside a fold", []string{"-expand", "9-10"}, exitOK,
			[]string{"# ... 3 lines omitted (6-8): def render_table\n" + in[8] + in[9] + "    # ... 4 lines omitted (11-14)\n"}, []string{unrelatedLine}, nil},
		{"several ranges", []string{"-expand", "12,8"}, exitOK,
			[]string{in[7], in[11]}, nil, nil},
		{"json", []string{"-expand", "12", "-json"}, exitOK,
			[]string{`"reason": "expanded"`, `"first_line": 13`}, nil, nil},
		{"line numbers", []string{"-expand", "12", "-n"}, exitOK,
			[]string{"    12\t" + in[11]}, nil, nil},
		{"outside the input", []string{"-expand", "10-20"}, exitUsage,
			nil, nil, []string{"-expand", "10-20 is outside the input's lines 1-14"}},
		{"overlapping", []string{"-expand", "6-9,9-12"}, exitUsage,
			nil, nil, []string{"6-9 and 9-12 overlap"}},
		{"malformed", []string{"-expand", "6-nine"}, exitUsage,
			nil, nil, []string{"invalid line range", "FIRST-LAST"}},
		{"by name", []string{"-expand", "render_table"}, exitOK,
			[]string{strings.Join(in[7:14], "")}, nil, []string{"expanded render_table (def render_table): lines 8-14"}},
		{"name and range, flag repeated", []string{"-expand", "render_table", "-expand", "1"}, exitOK,
			[]string{in[0], strings.Join(in[7:14], "")}, nil, nil},
		{"unknown name", []string{"-expand", "render_tables"}, exitUsage,
			nil, nil, []string{"unknown name", "closest: def render_table"}},
		{"empty", []string{"-expand", " "}, exitUsage,
			nil, nil, []string{"empty"}},
		{"delta", []string{"-expand", "render_table", "-delta"}, exitOK,
			[]string{"      \t# ... 2 lines omitted (6-7)\n     8\t" + in[7], "    14\t" + in[13]}, []string{"     1\t"}, nil},
		{"delta needs expand", []string{"-delta"}, exitUsage,
			nil, nil, []string{"-delta prints what -expand adds"}},
		{"delta is text", []string{"-delta", "-expand", "1", "-json"}, exitUsage,
			nil, nil, []string{"-json"}},
		{"reversed", []string{"-expand", "9-6"}, exitUsage,
			nil, nil, []string{"1 ≤ FIRST ≤ LAST"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append(append([]string(nil), base...), tc.args...), strings.NewReader(""), &stdout, &stderr)
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
