package swecompat_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/prunekit/pruner/internal/swecompat"
)

func TestSplitLines(t *testing.T) {
	// Expected values are CPython 3.11's str.splitlines().
	tests := []struct {
		text string
		want []string
	}{
		{"", []string{}},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\r\nb", []string{"a", "b"}},
		{"a\rb", []string{"a", "b"}},
		{"a\n\rb", []string{"a", "", "b"}},
		{"\r\r\n", []string{"", ""}},
		{"\n\n", []string{"", ""}},
		{"x\r", []string{"x"}},
		{"a\x1fb\x1cc\x1dd\x1ee\vf\fg\u0085h\u2028i\u2029j", []string{"a\x1fb", "c", "d", "e", "f", "g", "h", "i", "j"}},
		// Invalid UTF-8 bytes are content, kept byte for byte.
		{"a\xffb\n\xc2\nc\x85", []string{"a\xffb", "\xc2", "c\x85"}},
		// U+0085 encoded in UTF-8 is a break; a lone 0x85 byte is not.
		{"a\xc2\x85b", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			assert.Equal(t, tt.want, orEmptyStrings(swecompat.SplitLines(tt.text)))
		})
	}
}

func TestAggregateLines(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		spans  [][2]int
		scores []float64
		want   map[int]float64
	}{
		{name: "empty", text: "", spans: [][2]int{{0, 3}}, scores: []float64{1}, want: map[int]float64{}},
		{name: "NaN clamps to one as in Python", text: "ab", spans: [][2]int{{0, 2}}, scores: []float64{math.NaN()}, want: map[int]float64{1: 1}},
		{name: "infinities clamp", text: "ab\ncd", spans: [][2]int{{0, 2}, {3, 5}}, scores: []float64{math.Inf(-1), math.Inf(1)}, want: map[int]float64{1: 0, 2: 1}},
		{name: "spans clamped to text", text: "ab\ncd", spans: [][2]int{{-5, 1}, {4, 99}}, scores: []float64{0.2, 0.6}, want: map[int]float64{1: 0.2, 2: 0.6}},
		{name: "extra spans ignored", text: "ab", spans: [][2]int{{0, 1}, {1, 2}}, scores: []float64{0.4}, want: map[int]float64{1: 0.4}},
		{name: "code points not bytes", text: "é€\nx", spans: [][2]int{{0, 2}, {3, 4}}, scores: []float64{0.25, 0.75}, want: map[int]float64{1: 0.25, 2: 0.75}},
		{
			// Windows drift left by one per CRLF: line 2 is taken as
			// [3, 5) = "\nc", line 3 as [6, 8) = "\ne".
			name: "crlf drift", text: "ab\r\ncd\r\nef", spans: [][2]int{{3, 4}, {4, 5}, {6, 7}},
			scores: []float64{0.0, 1.0, 0.5}, want: map[int]float64{2: 0.5, 3: 0.5},
		},
		{name: "last writer wins", text: "abcd", spans: [][2]int{{0, 4}, {1, 3}}, scores: []float64{0.2, 1}, want: map[int]float64{1: 0.6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := swecompat.AggregateLines(tt.text, tt.spans, tt.scores)
			assert.Len(t, got, len(tt.want))
			for k, v := range tt.want {
				assert.InDelta(t, v, got[k], 1e-15, "line %d", k)
			}
		})
	}
}

func TestPruneLines(t *testing.T) {
	long := "this line is certainly longer than eighteen characters"
	tests := []struct {
		name       string
		text       string
		scores     map[int]float64
		keepFirst  bool
		wantKept   []int
		wantPruned string
	}{
		{name: "empty", text: "", scores: map[int]float64{1: 1}, keepFirst: true, wantKept: []int{}, wantPruned: ""},
		{name: "nothing kept", text: "a\nb\n", wantKept: []int{}, wantPruned: "(filtered 2 lines)"},
		{name: "gap fill is single pass", text: "a\nb\nc\nd\ne\n", scores: map[int]float64{1: 1, 3: 1, 5: 1},
			wantKept: []int{1, 2, 3, 4, 5}, wantPruned: "a\nb\nc\nd\ne"},
		{name: "two-line gap not filled", text: "k\n" + long + "\n" + long + "\nk\n", scores: map[int]float64{1: 1, 4: 1},
			wantKept: []int{1, 4}, wantPruned: "k\n(filtered 2 lines)\nk"},
		{name: "run of exactly 18 chars re-emitted", text: "k\n123456789\n\n123456789\nk", scores: map[int]float64{1: 1, 5: 1},
			wantKept: []int{1, 5}, wantPruned: "k\n123456789\n\n123456789\nk"},
		{name: "run of 19 chars replaced", text: "k\n123456789\n\n1234567890\nk", scores: map[int]float64{1: 1, 5: 1},
			wantKept: []int{1, 5}, wantPruned: "k\n(filtered 3 lines)\nk"},
		{name: "kept blank line still filtered", text: "k\n \x1f\nk\n", scores: map[int]float64{1: 1, 2: 1, 3: 1},
			wantKept: []int{1, 2, 3}, wantPruned: "k\n \x1f\nk"},
		{name: "zero width space is not blank", text: "k\n\u200b\n", scores: map[int]float64{1: 1, 2: 1},
			wantKept: []int{1, 2}, wantPruned: "k\n\u200b"},
		{name: "threshold is inclusive, NaN never kept", text: "a\nb\nc\nd", scores: map[int]float64{1: 0.5, 2: math.NaN(), 4: 0.49},
			wantKept: []int{1}, wantPruned: "a\n(filtered 3 lines)"},
		{name: "line numbers out of range ignored", text: "a\nb", scores: map[int]float64{0: 1, -1: 1, 3: 1},
			wantKept: []int{}, wantPruned: "(filtered 2 lines)"},
		{name: "CRLF rendered with LF", text: "a\r\nb\r\n", scores: map[int]float64{1: 1, 2: 1}, wantKept: []int{1, 2}, wantPruned: "a\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, pruned := swecompat.PruneLines(tt.text, tt.scores, 0.5, tt.keepFirst)
			assert.Equal(t, tt.wantKept, orEmpty(kept))
			assert.Equal(t, tt.wantPruned, pruned)
		})
	}
}

func TestPruneLinesFork(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		scores     map[int]float64
		keepLast   bool
		wantKept   []int
		wantPruned string
	}{
		{name: "tab-indented suite", text: "if x:\n\ty = 1\n\tz = 2\nw\n", scores: map[int]float64{1: 1, 4: 1},
			wantKept: []int{1, 4}, wantPruned: "if x:\n\tpass  # (filtered 2 lines)\nw"},
		{name: "run starting blank takes header indent", text: "def f():\n\n    a = 1\nb\n", scores: map[int]float64{1: 1, 4: 1},
			wantKept: []int{1, 4}, wantPruned: "def f():\n    pass  # (filtered 2 lines)\nb"},
		{name: "next kept line deeper keeps comment", text: "if x:\n    a\n        b\n", scores: map[int]float64{1: 1, 3: 1},
			wantKept: []int{1, 3}, wantPruned: "if x:\n    # (filtered 1 lines)\n        b"},
		{name: "trailing suite", text: "class A:  \n    x = 1\n", scores: map[int]float64{1: 1},
			wantKept: []int{1}, wantPruned: "class A:  \n    pass  # (filtered 1 lines)"},
		{name: "shallow run after header is pushed in", text: "  if x:\ny\n  z\n", scores: map[int]float64{1: 1, 3: 1},
			wantKept: []int{1, 3}, wantPruned: "  if x:\n      pass  # (filtered 1 lines)\n  z"},
		{name: "no colon", text: "a = 1\n    b = 2\nc = 3", scores: map[int]float64{1: 1, 3: 1},
			wantKept: []int{1, 3}, wantPruned: "a = 1\n    # (filtered 1 lines)\nc = 3"},
		{name: "keep last", text: "a\nb\nc", keepLast: true, wantKept: []int{3}, wantPruned: "# (filtered 2 lines)\nc"},
		{name: "no gap fill", text: "a\nb\nc", scores: map[int]float64{1: 1, 3: 1},
			wantKept: []int{1, 3}, wantPruned: "a\n# (filtered 1 lines)\nc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, pruned := swecompat.PruneLinesFork(tt.text, tt.scores, 0.5, false, tt.keepLast)
			assert.Equal(t, tt.wantKept, orEmpty(kept))
			assert.Equal(t, tt.wantPruned, pruned)
			assert.Equal(t, pruned, swecompat.RenderFork(tt.text, kept))
		})
	}
}
