package linemodel

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

func TestLineDate(t *testing.T) {
	for l, want := range map[string]stamp{
		"Date:   Fri Nov 5 02:54:15 2021 +0100":                       mkStamp(2021, 11, 5, 2, 54, 15),
		"d4f2f354 (Jade Nakamura 2017-05-28 14:20:39 -0400  5) # Key": mkStamp(2017, 5, 28, 14, 20, 39),
		"2026-11-24 01:09:09,855 INFO    ordersync: fetching page 1":  mkStamp(2026, 11, 24, 1, 9, 9),
		"[2026-11-25T08:24:51] INFO migrate":                          mkStamp(2026, 11, 25, 8, 24, 51),
		"-rw-r--r--  1 root root  6842 Apr 28  2025 runners.py":       mkStamp(2025, 4, 28, 0, 0, 0),
		"drwxrwxrwt 35 root root 12288 Nov 25 08:22 ..":               mkStamp(0, 11, 25, 8, 22, 0),
		"order 2026-13-01 is not a date":                              0,
		"no date here, 20261124":                                      0,
		"May 3 people":                                                mkStamp(0, 5, 3, 0, 0, 0),
		"12026-11-24 is preceded by a digit":                          0,
	} {
		assert.Equal(t, want, lineDate(l), l)
	}
}

func TestParseDateRange(t *testing.T) {
	type tc struct {
		q       string
		ok      bool
		in, out stamp
	}
	for _, c := range []tc{
		{"Filter the log to November 2021 only.", true, mkStamp(2021, 11, 21, 17, 30, 15), mkStamp(2021, 10, 31, 23, 0, 0)},
		{"Show commits dated October 2018.", true, mkStamp(2018, 10, 1, 0, 0, 0), mkStamp(2019, 10, 1, 0, 0, 0)},
		{"What went in over the course of Nov 2015?", true, mkStamp(2015, 11, 30, 0, 0, 0), mkStamp(2015, 12, 1, 0, 0, 0)},
		{"Anything committed in 2019?", true, mkStamp(2019, 6, 1, 0, 0, 0), mkStamp(2020, 1, 1, 0, 0, 0)},
		{"What changed on 2021-11-05?", true, mkStamp(2021, 11, 5, 23, 0, 0), mkStamp(2021, 11, 6, 0, 0, 0)},
		{"Which files changed in March?", true, mkStamp(2020, 3, 2, 0, 0, 0), mkStamp(2020, 4, 2, 0, 0, 0)},
		{"Which files changed since March 2023?", true, mkStamp(2024, 1, 2, 0, 0, 0), mkStamp(2023, 2, 28, 23, 0, 0)},
		{"Which files changed since March 2023?", true, mkStamp(2023, 3, 1, 0, 0, 0), mkStamp(2022, 12, 1, 0, 0, 0)},
		{"anything after 2021-05-01?", true, mkStamp(2021, 5, 2, 0, 0, 1), mkStamp(2021, 5, 1, 23, 0, 0)},
		{"changed after June 2022", true, mkStamp(2023, 1, 1, 0, 0, 0), mkStamp(2022, 6, 30, 0, 0, 0)},
		{"commits before 2020", true, mkStamp(2019, 12, 31, 23, 59, 59), mkStamp(2020, 1, 1, 0, 0, 0)},
		{"lines older than March 2018", true, mkStamp(2017, 5, 1, 0, 0, 0), mkStamp(2018, 3, 5, 0, 0, 0)},
		{"what was written until 2019?", true, mkStamp(2019, 12, 31, 0, 0, 0), mkStamp(2020, 1, 1, 0, 0, 0)},
		{"lines touched between 2019 and 2021", true, mkStamp(2020, 7, 1, 0, 0, 0), mkStamp(2022, 1, 1, 0, 0, 0)},
		{"lines touched between 2019 and 2021", true, mkStamp(2019, 1, 1, 0, 0, 0), mkStamp(2018, 12, 31, 0, 0, 0)},
		{"from May 2020 to June 2021, who committed?", true, mkStamp(2021, 6, 30, 0, 0, 0), mkStamp(2021, 7, 1, 0, 0, 0)},
		{"Show the commits from October 2018.", true, mkStamp(2018, 10, 9, 0, 0, 0), mkStamp(2018, 11, 1, 0, 0, 0)},
		{"Which lines changed since March?", true, mkStamp(2020, 3, 9, 0, 0, 0), mkStamp(2020, 4, 9, 0, 0, 0)}, // a month of any year stays a month
		{"may I see the newest lines?", false, 0, 0},
		{"which files have more than 2048 lines?", false, 0, 0},
		{"requests that failed after 2000 ms", false, 0, 0},
		{"march through the failures", false, 0, 0},
		{"why did job img-0152 fail?", false, 0, 0},
	} {
		r, ok := parseDateRange(c.q)
		require.Equal(t, c.ok, ok, c.q)
		if ok {
			assert.True(t, r.holds(c.in), c.q)
			assert.False(t, r.holds(c.out), c.q)
		}
	}
}

func TestDateColumns(t *testing.T) {
	blame := "d4f2f354 (Ann 2017-05-28 14:20:39 -0400 1) a = 1\n" +
		"5b0e4eab (Bob 2016-10-18 19:12:39 -0400 2) b = 2\n" +
		"e1af3a5a (Cy  2021-11-07 03:15:39 +0800 3) c = 3\n" +
		"plain line\n"
	X, n := Features(context.Background(), "which lines changed in November 2021?", blame, syntax.Text)
	require.Equal(t, 4, n)
	rank, in := make([]float32, n), make([]float32, n)
	for i := range n {
		rank[i] = X[i*NumFeatures+slices.Index(FeatureNames, "date_rank")]
		in[i] = X[i*NumFeatures+slices.Index(FeatureNames, "date_in")]
	}
	assert.Equal(t, []float32{2. / 3, 1. / 3, 1, 0}, rank, "newest first")
	assert.Equal(t, []float32{-1, -1, 1, 0}, in)

	for q, want := range map[string][]float32{
		"which lines changed since May 2017?":       {1, -1, 1, 0},
		"what is older than 2017?":                  {-1, 1, -1, 0},
		"lines written between 2016 and 2017":       {1, 1, -1, 0},
		"which lines came after 2017-05-28?":        {-1, -1, 1, 0},
		"the lines from 2017, who wrote them?":      {1, -1, -1, 0},
		"who changed what from 2017 to 2021, then?": {1, -1, 1, 0},
	} {
		X, _ := Features(context.Background(), q, blame, syntax.Text)
		assert.Equal(t, want, column(t, X, "date_in"), q)
	}
}
