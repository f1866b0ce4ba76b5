package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// wantPair is a mined pair seen through its unit's kind and line range.
type wantPair struct {
	nl, kind, unitKind string
	start, end         int
}

func minePath(t *testing.T, file string) ([]Unit, []Pair) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	lang := syntax.Detect(string(b), file)
	require.True(t, lang.IsCode(), file)
	units, pairs := mineFile(context.Background(), lang, b)
	require.NotNil(t, units, "%s did not parse", file)
	return units, pairs
}

func TestMineFixtures(t *testing.T) {
	tests := []struct {
		file  string
		pairs []wantPair
		units int
	}{
		{"sample.go", []wantPair{
			{"Stack is a last-in first-out list of strings.", "doc", "def", 9, 11},
			{"Push puts a value on top of the stack and returns the new depth.", "doc", "def", 14, 20},
			{"trim surrounding whitespace before storing", "inline", "block", 16, 17},
		}, 8},
		{"sample.py", []wantPair{
			{"Keep the most recently used values in memory.", "doc", "def", 7, 19},
			{"Return the cached value for key, or default when it is missing.", "doc", "def", 14, 19},
			{"move the key to the end so it counts as recently used", "inline", "block", 17, 19},
			{"Resolve a path relative to the user's home directory.", "doc", "def", 23, 28},
			{"join the home directory with the relative part", "inline", "block", 28, 28},
		}, 8},
		{"sample.ts", []wantPair{
			{`Parse a duration such as "5m" into milliseconds.`, "doc", "def", 5, 11},
			{"multiply by the length of one unit in milliseconds", "inline", "block", 10, 10},
			{"Start counting from now and remember the start time.", "doc", "def", 15, 17},
			{"Format milliseconds as a short human readable string.", "doc", "def", 25, 27},
		}, 11},
		{"sample.rs", []wantPair{
			{"A point in the plane with integer coordinates.", "doc", "def", 5, 8},
			{"Manhattan distance between two points.", "doc", "def", 12, 17},
			{"sum the absolute differences of both axes", "inline", "block", 14, 16},
		}, 6},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			units, pairs := minePath(t, filepath.Join("testdata", tc.file))
			assert.Len(t, units, tc.units)
			var got []wantPair
			for _, p := range pairs {
				require.Less(t, p.Unit, len(units))
				u := units[p.Unit]
				got = append(got, wantPair{p.NL, p.Kind, u.Kind, u.Start, u.End})
			}
			assert.Equal(t, tc.pairs, got)
			assert.True(t, keepRecord(units, pairs))
			for _, u := range units {
				assert.NotEmpty(t, u.Code)
				assert.LessOrEqual(t, u.Start, u.End)
				for _, l := range strings.Split(u.Code, "\n") {
					l = strings.TrimSpace(l)
					for _, marker := range []string{"//", "#", "/*", "*", `"""`} {
						assert.False(t, strings.HasPrefix(l, marker), "unit %d-%d keeps comment line %q", u.Start, u.End, l)
					}
				}
				for _, p := range pairs {
					assert.NotContains(t, u.Code, p.NL, "unit code holds its answer")
				}
			}
		})
	}
}

// TestMineDropsNoise: directives, license headers, commented-out code,
// short TODOs and trailing comments never become pairs.
func TestMineDropsNoise(t *testing.T) {
	var all []string
	for _, f := range []string{"sample.go", "sample.py", "sample.ts", "sample.rs"} {
		_, pairs := minePath(t, filepath.Join("testdata", f))
		for _, p := range pairs {
			all = append(all, p.NL)
		}
	}
	joined := strings.Join(all, "\n")
	for _, bad := range []string{"nolint", "Copyright", "license", "SPDX", "eslint", "type: ignore", "TODO", "x :=", "path == None", "trailing", "usr/bin", "Module docstring", "@param"} {
		assert.NotContains(t, joined, bad)
	}
}

func TestCleanNL(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		in   string
		want string // "" when refused
	}{
		{"Return the cached value.", "Return the cached value."},
		{"spans\n  two   lines of text", "spans two lines of text"},
		{"too short", ""},
		{"Copyright 2020 The Authors, all rights", ""},
		{"Licensed under the Apache License, Version 2.0", ""},
		{"nolint:gocyclo because it is long", ""},
		{"eslint-disable-next-line no-console here", ""},
		{"pylint: disable=invalid-name for now", ""},
		{"@ts-ignore the types are wrong here", ""},
		{"x := s.items[0]; return x", ""},
		{"foo(bar, baz); qux()", ""},
		{"if (x == nil) return the default", ""},
		{"return early when the key is missing", "return early when the key is missing"},
		{"TODO: handle this case", ""},
		{"TODO(bob): shrink the slice", ""},
		{"TODO: retry when the server answers with 503", "TODO: retry when the server answers with 503"},
		{"Sum the values.\n@param xs {number[]} the values", "Sum the values."},
		{"Add two numbers.\n# Examples\nadd(1, 2)", "Add two numbers."},
		{"Add two numbers.\n>>> add(1, 2)", "Add two numbers."},
		{long, strings.TrimSpace(long[:300])},
	}
	for _, tc := range tests {
		got, ok := cleanNL(tc.in)
		assert.Equal(t, tc.want != "", ok, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
		assert.LessOrEqual(t, len(got), maxNLChars)
	}
}

func TestCommentText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"// plain line", "plain line"},
		{"/// rust doc", "rust doc"},
		{"//! inner doc", "inner doc"},
		{"# python", "python"},
		{"/**\n * Javadoc first\n * second\n */", "\nJavadoc first\nsecond\n"},
		{"/* one line */", "one line"},
		{"//go:generate stringer -type=X", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, commentText(tc.in), "%q", tc.in)
	}
	assert.Equal(t, "Docstring text\nmore", docstringText(`r"""Docstring text
    more"""`))
	assert.Equal(t, "single", docstringText(`'single'`))
}

func TestUnitCaps(t *testing.T) {
	var b strings.Builder
	b.WriteString("package big\n\n// Long does many things in a row.\nfunc Long() {\n")
	for i := range 100 {
		fmt.Fprintf(&b, "\tx%d := %d\n", i, i)
	}
	b.WriteString("}\n")
	units, pairs := mineFile(context.Background(), syntax.Go, []byte(b.String()))
	require.NotEmpty(t, pairs)
	def := units[0]
	assert.Equal(t, "def", def.Kind)
	assert.Equal(t, 4, def.Start)
	assert.Equal(t, 105, def.End)
	assert.Len(t, strings.Split(def.Code, "\n"), maxUnitLines)
	blocks := 0
	for _, u := range units[1:] {
		assert.Equal(t, "block", u.Kind)
		assert.LessOrEqual(t, u.End-u.Start+1, maxBlockLines)
		blocks++
	}
	assert.Equal(t, 9, blocks) // 100 lines in blocks of 12
}

func TestSplitStable(t *testing.T) {
	assert.Equal(t, split("go:a@v1", "x.go"), split("go:a@v1", "x.go"))
	val := 0
	for i := range 4000 {
		if split("go:example.com/m@v1.0.0", fmt.Sprintf("f%d.go", i)) == "val" {
			val++
		}
	}
	assert.InDelta(t, 200, val, 60, "about one file in twenty is val")
	// Pinned so that a change of the hash (which would move files across
	// the split) fails here.
	assert.Equal(t, "train", split("go:github.com/gin-gonic/gin@v1.12.0", "context.go"))
	n := 0
	for i := 0; ; i++ {
		if split("py:x@1", fmt.Sprint(i)) == "val" {
			n = i
			break
		}
	}
	assert.Equal(t, 18, n) // fnv32a("x\x0018") % 20 == 0 (repoKey("py:x@1") is "x"), checked with an independent FNV-1a
}

func TestRepoKey(t *testing.T) {
	tests := []struct{ src, want string }{
		{"git:gin-gonic/gin@history", "gin-gonic/gin"},
		{"git:Gin-Gonic/Gin@0123456789abcdef0123456789abcdef01234567", "gin-gonic/gin"},
		{"go:github.com/gin-gonic/gin@v1.12.0", "gin-gonic/gin"},
		{"go:github.com/BurntSushi/xdg/v2@v2.0.0", "burntsushi/xdg"},
		{"go:github.com/aws/aws-sdk-go-v2/service/s3@v1.0.0", "aws/aws-sdk-go-v2"},
		{"go:gopkg.in/yaml.v3@v3.0.1", "go-yaml/yaml"},
		{"go:gopkg.in/natefinch/lumberjack.v2@v2.2.1", "natefinch/lumberjack"},
		{"go:go.uber.org/zap@v1.27.0", "uber-go/zap"},
		{"go:example.com/m/v3@v3.1.0", "example.com/m"},
		{"go:google.golang.org/grpc@v1.70.0", "google.golang.org/grpc"},
		{"py:tornado@6.2", "tornadoweb/tornado"},
		{"py:PIL@9.4.0", "pil"},
		{"npm:@npmcli/arborist@7.0.0", "@npmcli/arborist"},
		{"npm:semver@7.5.4", "semver"},
		{"test:fixtures@v0", "fixtures"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, repoKey(tc.src), tc.src)
	}
	// The same file of the same repository is on the same side whatever
	// corpus it came through.
	for i := range 200 {
		p := fmt.Sprintf("dir/f%d.go", i)
		want := split("git:gin-gonic/gin@history", p)
		assert.Equal(t, want, split("go:github.com/gin-gonic/gin@v1.12.0", p), p)
		assert.Equal(t, want, split("git:gin-gonic/gin@4e5a1b2c3d4e5f60718293a4b5c6d7e8f9012345", p), p)
	}
}

func TestSkipText(t *testing.T) {
	assert.Equal(t, "generated", skipText([]byte("// Code generated by x. DO NOT EDIT.\npackage p\n")))
	assert.Equal(t, "minified", skipText([]byte(strings.Repeat("a=1;", 100))))
	assert.Equal(t, "standard library copy", skipText([]byte("// Copyright 2009 The Go Authors. All rights reserved.\npackage p\n")))
	assert.Equal(t, "", skipText([]byte("package p\n\nfunc F() {}\n")))
}

// TestMineMessages: a message and the code around the statement that
// emits it, the message's characters blanked in the code; strings that are
// not emitted (Sprintf's) and messages of under three words are not pairs.
func TestMineMessages(t *testing.T) {
	tests := []struct {
		file string
		want []wantPair
		code map[string]string // nl → a line the unit's code must hold
	}{
		{"messages.go", []wantPair{
			{"http method is not valid", "msg", "msg", 10, 12},
			{"empty path for route", "msg", "msg", 13, 15},
			{"adding the route with its handlers", "msg", "msg", 14, 17},
			{"could not open the configuration file", "msg", "msg", 23, 25},
		}, map[string]string{
			"http method is not valid":              `		panic("            " + method + "             ")`,
			"could not open the configuration file": `		return errors.New("                                     ")`,
		}},
		{"messages.py", []wantPair{
			{"attempt of failed", "msg", "msg", 5, 6},
			{"gave up after attempts", "msg", "msg", 4, 7},
			{"negative values are not allowed here", "msg", "msg", 10, 11},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			require.NoError(t, err)
			lang := syntax.Detect(string(b), tt.file)
			units, pairs := mineFileOpts(context.Background(), lang, b, true)
			var got []wantPair
			for _, p := range pairs {
				if p.Kind != "msg" {
					continue
				}
				u := units[p.Unit]
				got = append(got, wantPair{p.NL, p.Kind, u.Kind, u.Start, u.End})
				assert.NotContains(t, u.Code, p.NL, "the unit's code carries its message")
				if line, ok := tt.code[p.NL]; ok {
					assert.Contains(t, strings.Split(u.Code, "\n"), line)
				}
			}
			assert.ElementsMatch(t, tt.want, got)
			// Without the option the file mines as before: no msg units.
			units, pairs = mineFile(context.Background(), lang, b)
			for _, p := range pairs {
				assert.NotEqual(t, "msg", p.Kind)
			}
			for _, u := range units {
				assert.NotEqual(t, "msg", u.Kind)
			}
		})
	}
}
