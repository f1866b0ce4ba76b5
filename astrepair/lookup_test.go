package astrepair

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

const lookupGo = `package client

import "time"

// maxRetries bounds the attempts.
var maxRetries = 3

const (
	backoff = time.Second
	jitter  = 0.1
)

// Client sends requests.
type Client struct {
	n int
}

// do sends one request.
func (c *Client) do() error {
	return nil
}

func retry() {}

type Server struct{}

func (s *Server) do() error {
	return nil
}
`

const lookupPy = `import os

MAX = 3


class Retry:
    """Retries."""

    def __init__(self):
        self.n = 0

    @property
    def count(self):
        return self.n


class Backoff:
    def __init__(self):
        pass


def outer():
    def inner():
        return 1
    return inner
`

const lookupJS = `import x from "y";

export const limit = 10;
let a = 1, b = 2;

const handler = () => {
  return a;
};

class Queue {
  push(v) {
    return v;
  }
}
`

const lookupC = `#include <stdio.h>

#define MAX_LEN 64

static const char *prefix = "x";
int counter;

int f(void);

int f(void) {
  return counter;
}
`

const lookupJava = `class Limits {
    private static final int MAX = 3;
    private int n;

    int get() {
        return n;
    }
}
`

func TestLookupDefinitions(t *testing.T) {
	cases := []struct {
		lang  syntax.Language
		text  string
		name  string
		want  []Match
		label string // when want is nil: only the label of the single match
	}{
		{syntax.Go, lookupGo, "maxRetries", []Match{{"var maxRetries", 5, 6}}, ""},
		{syntax.Go, lookupGo, "var maxRetries", []Match{{"var maxRetries", 5, 6}}, ""},
		{syntax.Go, lookupGo, "backoff", []Match{{"const backoff", 9, 9}}, ""},
		{syntax.Go, lookupGo, "type Client", []Match{{"type Client", 13, 16}}, ""},
		{syntax.Go, lookupGo, "func (c *Client) do", []Match{{"func (c *Client) do", 18, 21}}, ""},
		{syntax.Go, lookupGo, "Client.do", []Match{{"func (c *Client) do", 18, 21}}, ""},
		{syntax.Go, lookupGo, "Server.do", []Match{{"func (s *Server) do", 27, 29}}, ""},
		// Ambiguous: both methods.
		{syntax.Go, lookupGo, "do", []Match{{"func (c *Client) do", 18, 21}, {"func (s *Server) do", 27, 29}}, ""},
		{syntax.Go, lookupGo, "func do", []Match{{"func (c *Client) do", 18, 21}, {"func (s *Server) do", 27, 29}}, ""},
		{syntax.Go, lookupGo, "  func   retry ", []Match{{"func retry", 23, 23}}, ""},
		{syntax.Go, lookupGo, "RETRY", []Match{{"func retry", 23, 23}}, ""},
		{syntax.Python, lookupPy, "MAX", []Match{{"MAX", 3, 3}}, ""},
		{syntax.Python, lookupPy, "class Retry", []Match{{"class Retry", 6, 14}}, ""},
		// The decorator belongs to the method.
		{syntax.Python, lookupPy, "count", []Match{{"def count", 12, 14}}, ""},
		{syntax.Python, lookupPy, "Retry.__init__", []Match{{"def __init__", 9, 10}}, ""},
		{syntax.Python, lookupPy, "__init__", []Match{{"def __init__", 9, 10}, {"def __init__", 18, 19}}, ""},
		// Nested: the smallest definition the name names.
		{syntax.Python, lookupPy, "outer.inner", []Match{{"def inner", 23, 24}}, ""},
		{syntax.Python, lookupPy, "def outer", []Match{{"def outer", 22, 25}}, ""},
		{syntax.JavaScript, lookupJS, "limit", []Match{{"const limit", 3, 3}}, ""},
		{syntax.JavaScript, lookupJS, "b", []Match{{"let b", 4, 4}}, ""},
		{syntax.JavaScript, lookupJS, "handler", []Match{{"const handler", 6, 8}}, ""},
		{syntax.JavaScript, lookupJS, "Queue.push", []Match{{"push", 11, 13}}, ""},
		{syntax.C, lookupC, "MAX_LEN", []Match{{"#define MAX_LEN", 3, 3}}, ""},
		{syntax.C, lookupC, "prefix", []Match{{"static const char *prefix", 5, 5}}, ""},
		{syntax.C, lookupC, "counter", []Match{{"int counter", 6, 6}}, ""},
		{syntax.C, lookupC, "f", []Match{{"int f", 10, 12}}, ""},
		{syntax.Java, lookupJava, "MAX", []Match{{"private static final int MAX", 2, 2}}, ""},
		{syntax.Java, lookupJava, "Limits.get", []Match{{"int get", 5, 7}}, ""},
	}
	for _, tc := range cases {
		t.Run(string(tc.lang)+"/"+tc.name, func(t *testing.T) {
			a, err := Analyze(context.Background(), tc.text, tc.lang)
			require.NoError(t, err)
			got, err := a.Lookup(tc.name)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLookupCutLabel(t *testing.T) {
	a, err := Analyze(context.Background(), lookupGo, syntax.Go)
	require.NoError(t, err)
	got, err := a.Lookup("func (c *Cli…")
	require.NoError(t, err)
	assert.Equal(t, []Match{{"func (c *Client) do", 18, 21}}, got)
}

func TestLookupUnknown(t *testing.T) {
	a, err := Analyze(context.Background(), lookupGo, syntax.Go)
	require.NoError(t, err)
	_, err = a.Lookup("retries")
	require.ErrorIs(t, err, ErrUnknownName)
	var une *UnknownNameError
	require.True(t, errors.As(err, &une))
	assert.Equal(t, "retries", une.Name)
	require.NotEmpty(t, une.Closest)
	// A label holding the name comes first, then one two letters away.
	assert.Equal(t, []string{"var maxRetries", "func retry"}, une.Closest[:2])
	assert.Contains(t, err.Error(), "closest: var maxRetries, func retry")

	_, err = a.Lookup("   ")
	require.ErrorIs(t, err, ErrUnknownName)

	// A name a megabyte long is cut in the message.
	_, err = a.Lookup(strings.Repeat("é", 1<<19))
	require.ErrorIs(t, err, ErrUnknownName)
	assert.Less(t, len(err.Error()), 600)

	// Plain text without records has no names at all.
	ta, err := Analyze(context.Background(), "just\nsome\nwords\n", syntax.Text)
	require.NoError(t, err)
	_, err = ta.Lookup("words")
	require.ErrorIs(t, err, ErrUnknownName)
	assert.Contains(t, err.Error(), "ask for a line range")
}

func TestLookupRecords(t *testing.T) {
	goTest := `=== RUN   TestParse
--- FAIL: TestParse (0.00s)
    --- PASS: TestParse/case_01 (0.00s)
    --- FAIL: TestParse/case_02 (0.00s)
        parse_test.go:12: want 1, got 2
        parse_test.go:13: want 3, got 4
--- PASS: TestFormat (0.00s)
FAIL
FAIL	example.com/p	0.01s
`
	gitLog := `commit 1111111111111111111111111111111111111111
Author: A <a@example.com>
Date:   Mon Jan 1 00:00:00 2024 +0000

    Fix the parser

    More words.

commit 2222222222222222222222222222222222222222
Author: B <b@example.com>
Date:   Tue Jan 2 00:00:00 2024 +0000

    Add retries
`
	grep := `pkg/parser.go:10:func Parse() {
pkg/parser.go:20:	return Parse()
pkg/lexer.go:5:// Parse is used here
pkg/parser.go:40:	Parse()
`
	traceback := `running job
Traceback (most recent call last):
  File "job.py", line 3, in <module>
    main()
  File "job.py", line 2, in main
    raise ValueError("bad")
ValueError: bad
done
`
	diff := `diff --git a/x.go b/x.go
index 1..2 100644
--- a/x.go
+++ b/x.go
@@ -1,3 +1,3 @@ func a()
-a
+b
@@ -10,3 +10,3 @@ func b()
-c
+d
diff --git a/y.go b/y.go
--- a/y.go
+++ b/y.go
@@ -1 +1 @@
-e
+f
`
	cases := []struct {
		name, text, q string
		want          []Match
	}{
		{"go test subtest", goTest, "TestParse/case_02", []Match{{"--- FAIL: TestParse/case_02", 4, 6}}},
		{"go test whole label", goTest, "--- FAIL: TestParse", []Match{{"--- FAIL: TestParse", 2, 6}}},
		{"go test passing", goTest, "TestFormat", []Match{{"--- PASS: TestFormat", 7, 7}}},
		{"go test package", goTest, "example.com/p", []Match{{"FAIL example.com/p", 9, 9}}},
		{"commit subject", gitLog, "Fix the parser", []Match{{"Fix the parser", 1, 8}}},
		{"last commit", gitLog, "add retries", []Match{{"Add retries", 9, 13}}},
		{"grep file group", grep, "pkg/parser.go", []Match{{"pkg/parser.go", 1, 2}, {"pkg/parser.go", 4, 4}}},
		{"grep tail", grep, "lexer.go", []Match{{"pkg/lexer.go", 3, 3}}},
		{"exception with traceback", traceback, "ValueError", []Match{{"ValueError: bad", 2, 7}}},
		{"diff file", diff, "x.go", []Match{{"x.go", 1, 10}}},
		{"hunk", diff, "func b()", []Match{{"func b()", 8, 10}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Analyze(context.Background(), tc.text, syntax.Text)
			require.NoError(t, err)
			got, err := a.Lookup(tc.q)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzLookup: any text and name give matches inside the text's lines, in
// order, or an error that wraps ErrUnknownName; never a panic.
func FuzzLookup(f *testing.F) {
	f.Add(lookupGo, "do", uint8(0))
	f.Add(lookupPy, "Retry.__init__", uint8(1))
	f.Add("--- FAIL: TestX (0.00s)\n    x_test.go:1: no\n", "TestX", uint8(7))
	f.Add("commit abcdef1\n\n    subject\n", "subject…", uint8(7))
	f.Add("a\x00b\n\xff\xfe\n", "\xff", uint8(7))
	langs := []syntax.Language{syntax.Go, syntax.Python, syntax.JavaScript, syntax.TypeScript, syntax.Java, syntax.Rust, syntax.C, syntax.Text}
	f.Fuzz(func(t *testing.T, text, name string, l uint8) {
		if len(text) > 1<<16 {
			return
		}
		lang := langs[int(l)%len(langs)]
		a, err := Analyze(context.Background(), text, lang)
		if err != nil {
			return
		}
		got, err := a.Lookup(name)
		if err != nil {
			require.ErrorIs(t, err, ErrUnknownName)
			return
		}
		require.NotEmpty(t, got)
		prev := 0
		for _, m := range got {
			require.GreaterOrEqual(t, m.First, 1)
			require.LessOrEqual(t, m.First, m.Last)
			require.LessOrEqual(t, m.Last, a.Lines())
			require.GreaterOrEqual(t, m.First, prev)
			prev = m.First
		}
	})
}

// recordLog is a log of n distinct ERROR records.
func recordLog(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "2024-01-01 ERROR worker %d failed to open /var/data/shard-%d.bin\n", i, i*7)
	}
	return b.String()
}

// Past maxClosestMeasured labels the suggestions stop measuring edit
// distances but still find every label that holds the name.
func TestLookupClosestBounded(t *testing.T) {
	n := maxClosestMeasured + 500
	text := recordLog(n) + "2024-01-02 ERROR zebra quota exceeded\n"
	a, err := Analyze(context.Background(), text, syntax.Text)
	require.NoError(t, err)
	_, err = a.Lookup("ZEBRA QUOTA")
	require.NoError(t, err, "a whole part of a label, found ignoring case")
	_, err = a.Lookup("zebra quo")
	var une *UnknownNameError
	require.ErrorAs(t, err, &une)
	assert.Equal(t, "ERROR zebra quota exceeded", une.Closest[0])
}

// BenchmarkLookupUnknown: an unknown name among 500,000 records (39 MB of
// log): every name is read six times, and the suggestions measure the
// first maxClosestMeasured labels.
func BenchmarkLookupUnknown(b *testing.B) {
	a, err := Analyze(context.Background(), recordLog(500000), syntax.Text)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Lookup("nosuchname"); err == nil {
			b.Fatal("found")
		}
	}
}
