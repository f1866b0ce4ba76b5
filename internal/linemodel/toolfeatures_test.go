package linemodel

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

func TestToolColumns(t *testing.T) {
	log := "2031-03-02 14:00:01,100 INFO reindex: shard 1 done (40 docs)\n" +
		"2031-03-02 14:00:01,200 INFO reindex: shard 2 done (40 docs)\n" +
		"2031-03-02 14:00:01,300 INFO reindex: shard 3 done (40 docs)\n" +
		"Traceback (most recent call last):\n" +
		"  File \"/srv/app/reindex.py\", line 88, in flush\n" +
		"KeyError: shard 4 has no mapping\n" +
		"4.0K\tsrc/a.go\n" +
		"1.2M\tsrc/big.go\n" +
		"store/cache.go:19:7: undefined: evictAll\n"
	X, n := Features(context.Background(), "why did the reindex stop?", log, syntax.Text)
	require.Equal(t, 9, n)
	col := func(name string) []float32 { return column(t, X, name) }
	assert.Equal(t, []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}, col("is_text"))
	assert.Equal(t, []float32{0, 0, 0, 0.5, 0, 0.5, 0, 0, 0.5}, col("err_word"), "Traceback, KeyError, undefined: one word each")
	assert.Equal(t, []float32{0, 0, 0, 0, 1, 0, 0, 0, 1}, col("loc_ref"))
	freq := col("tmpl_freq")
	assert.Positive(t, freq[0], "the three page lines share a shape")
	assert.Equal(t, freq[0], freq[2])
	assert.Zero(t, freq[5], "a line whose shape is unique")
	rank := col("num_rank")
	assert.Greater(t, rank[7], rank[6], "1.2M is larger than 4.0K")
	assert.Zero(t, rank[3], "no number on the line")

	code, _ := Features(context.Background(), "q", "package p\n", syntax.Go)
	assert.Zero(t, code[slices.Index(FeatureNames, "is_text")])
}

// column returns feature name's column of a feature matrix.
func column(t *testing.T, X []float32, name string) []float32 {
	t.Helper()
	j := slices.Index(FeatureNames, name)
	require.GreaterOrEqual(t, j, 0, name)
	out := make([]float32, len(X)/NumFeatures)
	for i := range out {
		out[i] = X[i*NumFeatures+j]
	}
	return out
}

// TestToolColumnsBounded: a 50,000-character line of colons and digits
// costs no more than a short one (hasLocation was quadratic on it).
func TestToolColumnsBounded(t *testing.T) {
	long := strings.Repeat("a:1", 200_000) // 600 KB, no delimiter
	text := strings.Repeat(long[:50_000]+"\n", 40) + long + "\n"
	allocs := testing.AllocsPerRun(1, func() {
		X, n := Features(context.Background(), "q", text, syntax.Text)
		require.Equal(t, 41, n)
		require.Len(t, X, 41*NumFeatures)
	})
	assert.Less(t, allocs, 5000.0)
	assert.True(t, hasLocation("x.go:1"))
	assert.False(t, hasLocation(long), "no path before the colons")
}

func TestNumRankTies(t *testing.T) {
	ti := newToolInfo(context.Background(), "", []string{"4 a", "9 b", "4 c", "x"}, syntax.Text)
	assert.Equal(t, ti.numRank[0], ti.numRank[2], "equal numbers share a rank")
	assert.Greater(t, ti.numRank[1], ti.numRank[0])
	assert.Zero(t, ti.numRank[3])
}

func TestHasLocation(t *testing.T) {
	for l, want := range map[string]bool{
		"parser/lexer.go:6:2: x":                    true,
		"    at Object.<anonymous> (lib/x.js:12:5)": true,
		`  File "a.py", line 3, in f`:               true,
		"12:30:01 INFO started":                     false,
		"Date: Mon Nov 24 10:43:03 2025":            false,
		"":                                          false,
		"a:":                                        false,
	} {
		assert.Equal(t, want, hasLocation(l), "%q", l)
	}
}

// TestListingColumns: the columns that read listings — a number's rank in
// its directory or section, section headers and their query match, and
// the query's size predicate — on du and ls -lR output.
func TestListingColumns(t *testing.T) {
	du := "164\tsrc/io/FileUtilsTest.java\n" +
		"72\tsrc/io/FilenameUtilsTest.java\n" +
		"812\tsrc/io/input\n" +
		"40\tsrc/io/input/BoundedInputStreamTest.java\n" +
		"12\tsrc/io/input/TailerTest.java\n"
	X, n := Features(context.Background(), "Which test files are larger than 50 KB?", du, syntax.Text)
	require.Equal(t, 5, n)
	grp := column(t, X, "grp_num_rank")
	assert.Equal(t, float32(1), grp[2], "src/io/input is the largest entry of src/io")
	assert.Equal(t, float32(1), grp[3], "the largest entry of src/io/input")
	assert.Less(t, grp[4], grp[3])
	assert.Less(t, column(t, X, "num_rank")[3], column(t, X, "num_rank")[0], "globally, 40 ranks below 164")
	// 50 KB is more than any number here: the listing counts kilobytes.
	assert.Equal(t, []float32{1, 1, 1, -1, -1}, column(t, X, "size_cmp"))

	ls := "src/middleware/jwk:\n" +
		"total 64\n" +
		"-rw-rw-r--  1 root root 43998 Aug 22 05:55 index.test.ts\n" +
		"-rw-rw-r--  1 root root    28 Aug 22  2025 index.ts\n" +
		"\n" +
		"src/middleware/cache:\n" +
		"-rw-rw-r--  1 root root 37482 Aug 22 05:55 index.test.ts\n"
	X, n = Features(context.Background(), "Which jwk files are below 200 bytes?", ls, syntax.Text)
	require.Equal(t, 7, n)
	assert.Equal(t, []float32{1, 0, 0, 0, 0, 1, 0}, column(t, X, "rec_head"), "sections are the records")
	sec := column(t, X, "rec_head_bm25")
	assert.Positive(t, sec[3], "the jwk section matches the query")
	assert.Equal(t, sec[0], sec[3])
	assert.Zero(t, sec[6], "the cache section does not")
	assert.Equal(t, []float32{2. / 3, 1, 1. / 3, 0}, column(t, X, "grp_num_rank")[1:5], "ranks within the jwk section: 64, 43998, 28 (not the year 2025)")
	assert.Equal(t, []float32{0, 1, -1, 1}, column(t, X, "size_cmp")[0:4], "64 and 28 are below 200 bytes, 43998 is not")
}

func TestLargestNumberSkipsDates(t *testing.T) {
	for l, want := range map[string]float64{
		"-rw-r--r--  1 root root  383 Apr 28  2025 runners.py": 383,
		"-rw-r--r--  1 root root  383 Apr 28 05:55 runners.py": 383,
		"Date:   Sun Nov 21 17:30:15 2021 -0700":               0,
		" lib/main/build-site.js | 68 +++++++---":              68,
		"4.0K\tsrc/a.go": 4096,
	} {
		v, ok := largestNumber(l)
		assert.Equal(t, want != 0, ok, l)
		assert.Equal(t, want, v, l)
	}
}

// TestRecordColumns: git log's commits are records; a TAP failure's
// indented details are the failing line's outline block.
func TestRecordColumns(t *testing.T) {
	log := "commit 1111\n" +
		"Author: Ann <a@x>\n" +
		"\n" +
		"    Fix the retry backoff\n" +
		"\n" +
		"commit 2222\n" +
		"Author: Bob <b@x>\n" +
		"\n" +
		"    Update docs\n"
	X, n := Features(context.Background(), "who fixed the retry backoff?", log, syntax.Text)
	require.Equal(t, 9, n)
	assert.Equal(t, []float32{1, 0, 0, 0, 0, 1, 0, 0, 0}, column(t, X, "rec_head"))
	rec := column(t, X, "rec_max_bm25")
	assert.Positive(t, rec[0], "the first commit's message matches")
	assert.Equal(t, rec[0], rec[1], "one value for the whole record")
	assert.Zero(t, rec[5], "the second commit does not match")

	tap := "# Subtest: Cart\n" +
		"not ok 2 - merges quantities\n" +
		"  ---\n" +
		"  error: 'expected 3 got 2'\n" +
		"  ...\n" +
		"ok 3 - clears\n"
	X, n = Features(context.Background(), "what error did the failing test give?", tap, syntax.Text)
	require.Equal(t, 6, n)
	blk := column(t, X, "blk_max_bm25")
	assert.Positive(t, blk[1], "the error line is in the failing test's block")
	assert.Equal(t, blk[1], blk[2], "the details share their head's block")
	assert.Equal(t, blk[1], blk[3])
	assert.Less(t, blk[5], blk[1], "the passing test's block is its own line")

	code, _ := Features(context.Background(), "q", "func f() {\n\treturn\n}\n", syntax.Go)
	assert.Zero(t, code[slices.Index(FeatureNames, "blk_max_bm25")], "no records in code")
}

func TestParseSizePredicate(t *testing.T) {
	for q, want := range map[string]sizePredicate{
		"Which test files are larger than 50 KB?":           {v: 50 << 10, greater: true},
		"Show source files with sizes above the 16 KB mark": {v: 16 << 10, greater: true},
		"List anything below 200 bytes.":                    {v: 200},
		"commits with more than 10 lines changed":           {v: 10, greater: true},
		"Any source files exceeding 1.5MB?":                 {v: 1.5 * (1 << 20), greater: true},
		"Which .py files are larger than 30,000 bytes?":     {v: 30000, greater: true},
		"files of 1,048,576 bytes or more":                  {v: 1 << 20, greater: true, inclusive: true},
		"which .rs files take 36K or more on disk?":         {v: 36 << 10, greater: true, inclusive: true},
		"anything at least 2 MB":                            {v: 2 << 20, greater: true, inclusive: true},
		"logs of at most 100 lines":                         {v: 100, inclusive: true},
		"archives of 10 MB and up":                          {v: 10 << 20, greater: true, inclusive: true},
		"modules of 4K or smaller":                          {v: 4 << 10, inclusive: true},
		"list the 64K+ files":                               {v: 64 << 10, greater: true, inclusive: true},
		"under 3 seconds, 1,5 tests":                        {v: 3},
	} {
		got, ok := parseSizePredicate(q)
		require.True(t, ok, q)
		assert.Equal(t, want, got, q)
	}
	for _, q := range []string{"Why was job img-0152 requeued?", "the 3 fattest files", "what failed at line 42", "", "the 2 or 3 largest files", "see section 4, or more"} {
		_, ok := parseSizePredicate(q)
		assert.False(t, ok, q)
	}
	p := sizePredicate{v: 36 << 10, greater: true, inclusive: true}
	assert.True(t, p.holds(36<<10))
	p.inclusive = false
	assert.False(t, p.holds(36<<10))
}

func TestThousands(t *testing.T) {
	for in, want := range map[string]string{"30,000": "30000", "1,048,576": "1048576", "1,5": "1,5", "10,0000": "10,0000", "a,bcd": "a,bcd", "12": "12", "3,141k": "3141k"} {
		assert.Equal(t, want, thousands(in), in)
	}
}

// TestQuotedCodeRoles: grep and blame lines take the role of the code they
// quote; diagnostics, log lines and listings are not code.
func TestQuotedCodeRoles(t *testing.T) {
	for l, want := range map[string]string{
		"./tokio/src/sync/mpsc/block.rs:49:use super::BLOCK_CAP;":                           "import",
		"./tokio/src/sync/mpsc/block.rs-138-    pub(crate) fn distance(&self) -> usize {":   "def",
		"src/x.go:12:\tcfg.Retries = 3":                                                     "assign",
		"lib/a.js:7:  if (x === 1) {":                                                       "control",
		"marshmallow/decorators.py:13:        @post_load":                                   "decorator",
		"pkg/y.py:class Loader(Base):":                                                      "class",
		"fmt/printf.h-286-  return arg_index;":                                              "return",
		"lib/a.js:9:  run(cb);":                                                             "call",
		"d4f2f354 (Jade Nakamura 2017-05-28 14:20:39 -0400  6) SCHEMA = '_schema'":          "assign",
		"^ad5d982 (Greta Larsen  2016-09-10 17:39:39 -0400  1) # -*- coding: utf-8 -*-":     "comment",
		"76d719495 lib/runner.js (Josh 2025-10-27 10:43:03 -0400 11) var E = require('x');": "import",
	} {
		code, ok := matchedCode(l)
		require.True(t, ok, l)
		assert.Equal(t, want, roleNames[codeRole(code)], l)
	}
	for _, l := range []string{
		"fetch/page.go:28:19: 2006-02-01 should be 2006-01-02",
		"INFO:billing.export:starting run 788db853: max_attempts=5",
		"json.decoder.JSONDecodeError: Expecting value: line 1 column 1",
		"[2026-11-25 08:24:51,004] INFO     migrate - fetching table 1/20",
		"./cmd:",
		"Date:   Thu Jun 15 11:23:39 2017 -0700",
		"-rw-r--r--  1 root root  383 Apr 28  2025 runners.py",
	} {
		_, ok := matchedCode(l)
		assert.False(t, ok, l)
	}
	X, n := Features(context.Background(), "where is it declared?", "a/b.go:3:func Run() {\na/c.go:9:\tRun()\n", syntax.Text)
	require.Equal(t, 2, n)
	assert.Equal(t, float32(1), X[slices.Index(FeatureNames, "role_def")])
	assert.Equal(t, float32(1), X[NumFeatures+slices.Index(FeatureNames, "role_call")])
}

// TestRecordColumnsLinear: texts whose records or outline blocks are as
// large or as deep as they can be (every line one level deeper, one record
// of 200,000 lines, every line a record) cost linear work; a quadratic
// pass over them would not finish.
func TestRecordColumnsLinear(t *testing.T) {
	const n = 200_000
	var deep, flat, heads strings.Builder
	for i := range n {
		deep.WriteString(strings.Repeat(" ", i%100) + "x:1 f()\n")
		if i == 0 {
			flat.WriteString("commit 1\n")
		} else {
			flat.WriteString("  a/b.go:1:x = 1\n")
		}
		heads.WriteString("commit 1 Nov 5 2021\n")
	}
	for _, text := range []string{deep.String(), flat.String(), heads.String()} {
		X, got := Features(context.Background(), "commit x in November 2021 larger than 1 KB", text, syntax.Text)
		require.Equal(t, n, got)
		require.Len(t, X, n*NumFeatures)
	}
}

// FuzzToolParsers: the parsers of the tool columns take any line or query
// without panicking; quoted code is a suffix of its line; a date has a
// month and a day in range; a size predicate's value is a finite number.
func FuzzToolParsers(f *testing.F) {
	for _, s := range []string{
		"src/a.go:12:\tx := 1", "d4f2f354 (Ann 2017-05-28 14:20:39 -0400 5) a = 1",
		"Date:   Fri Nov 5 02:54:15 2021 +0100", "larger than 50 KB", "in November 2021",
		"-rw-r--r--  1 root root  383 Apr 28  2025 runners.py", "a:1:2:", "^abcdef0 (x 1)", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if code, ok := matchedCode(s); ok {
			require.True(t, strings.HasSuffix(s, code), "%q quotes %q", s, code)
			_ = codeRole(code)
		}
		if d := lineDate(s); d != 0 {
			mo, day := int64(d)/1e8%100, int64(d)/1e6%100
			require.True(t, mo >= 1 && mo <= 12 && day >= 1 && day <= 31, "%q: %d", s, d)
		}
		if p, ok := parseSizePredicate(s); ok {
			require.False(t, math.IsInf(p.v, 0) || math.IsNaN(p.v), "%q", s)
		}
		if r, ok := parseDateRange(s); ok {
			require.LessOrEqual(t, r.lo, r.hi, s)
		}
		_, _ = largestNumber(s)
		_, _ = pathDir(s)
		_ = isSectionHeader([]string{s}, 0)
	})
}
