package rubric

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

func src(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func mask(n int, keep ...int) []bool {
	m := make([]bool, n)
	for _, k := range keep {
		m[k-1] = true
	}
	return m
}

var pyControl = src(
	"import os",                       // 1
	"",                                // 2
	"def helper(p):",                  // 3
	"    return os.path.join(p, 'x')", // 4
	"",                                // 5
	"class A:",                        // 6
	"    def run(self):",              // 7
	"        try:",                    // 8
	"            v = helper('a')",     // 9
	"        except OSError:",         // 10
	"            v = None",            // 11
	"        return v",                // 12
)

var pyChain = src(
	"from base import Base",  // 1
	"class Config(Base):",    // 2
	"    pass",               // 3
	"def helper(c: Config):", // 4
	"    pass",               // 5
	"def main():",            // 6
	"    helper(None)",       // 7
)

func TestDependencyPropagation(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		lang syntax.Language
		text string
		keep []int
		opts []Option
		// dep maps 1-based lines to their expected dependency score; lines
		// not listed must score 0.
		dep map[int]float64
		// label lists the 1-based dependency-positive lines.
		label []int
	}{
		{
			name: "scope headers, control companions and a used definition are one hop",
			lang: syntax.Python, text: pyControl, keep: []int{9},
			dep:   map[int]float64{3: 0.6, 6: 0.6, 7: 0.6, 8: 0.6, 10: 0.6},
			label: []int{3, 6, 7, 8, 10},
		},
		{
			name: "hops decay geometrically and binarize at the threshold",
			lang: syntax.Python, text: pyChain, keep: []int{7},
			dep:   map[int]float64{6: 0.6, 4: 0.6, 2: 0.36, 1: 0.216},
			label: []int{6, 4, 2},
		},
		{
			name: "max hops cuts the chain",
			lang: syntax.Python, text: pyChain, keep: []int{7}, opts: []Option{WithMaxHops(2)},
			dep:   map[int]float64{6: 0.6, 4: 0.6, 2: 0.36},
			label: []int{6, 4, 2},
		},
		{
			name: "custom decay and threshold",
			lang: syntax.Python, text: pyChain, keep: []int{7}, opts: []Option{WithDecay(0.5), WithThreshold(0.4)},
			dep:   map[int]float64{6: 0.5, 4: 0.5, 2: 0.25, 1: 0.125},
			label: []int{6, 4},
		},
		{
			name: "call sites of a kept definition",
			lang: syntax.Python, text: pyChain, keep: []int{4},
			dep:   map[int]float64{7: 0.6, 2: 0.6, 6: 0.6, 1: 0.36},
			label: []int{7, 2, 6, 1},
		},
		{
			name: "kept scope header needed by another kept line is dependency support",
			lang: syntax.Python, text: pyControl, keep: []int{6, 9},
			dep:   map[int]float64{3: 0.6, 6: 0.6, 7: 0.6, 8: 0.6, 10: 0.6},
			label: []int{3, 6, 7, 8, 10},
		},
		{
			name: "go import of a used package and the enclosing function",
			lang: syntax.Go, text: src("package p", "", "import \"fmt\"", "", "func F() {", "\tfmt.Println(1)", "}"), keep: []int{6},
			dep:   map[int]float64{3: 0.6, 5: 0.6, 7: 0.6},
			label: []int{3, 5, 7},
		},
		{
			name: "non-code text has no dependency rubric",
			lang: syntax.Text, text: src("INFO a", "ERROR b"), keep: []int{2},
			dep: map[int]float64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(syntax.SplitLines(tt.text))
			l, err := Build(ctx, tt.text, tt.lang, mask(n, tt.keep...), tt.opts...)
			require.NoError(t, err)
			for i := 0; i < n; i++ {
				assert.InDelta(t, tt.dep[i+1], l.Dependency[i], 1e-9, "dependency of line %d", i+1)
				if tt.dep[i+1] > 0 {
					assert.Equal(t, int(math.Round(math.Log(tt.dep[i+1])/math.Log(decayOf(tt.opts)))), l.Hops[i], "hop of line %d", i+1)
				}
			}
			var labelled []int
			for i, b := range l.DependencyLabel {
				if b {
					labelled = append(labelled, i+1)
				}
			}
			assert.ElementsMatch(t, tt.label, labelled)
		})
	}
}

func decayOf(opts []Option) float64 {
	c, _ := newConfig(opts)
	return c.decay
}

func TestSemanticRubric(t *testing.T) {
	ctx := context.Background()
	keep := mask(7, 4, 5)
	l, err := Build(ctx, pyChain, syntax.Python, keep, WithDocScore(0.8))
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0, 0, 0.8, 0.8, 0, 0}, l.Semantic)
	assert.Equal(t, []bool{false, false, false, true, true, false, false}, l.SemanticLabel)

	low, err := Build(ctx, pyChain, syntax.Python, keep, WithDocScore(0.2))
	require.NoError(t, err)
	assert.Equal(t, make([]bool, 7), low.SemanticLabel, "a weakly relevant document yields no semantic positives")
	assert.Equal(t, l.Dependency, low.Dependency, "the document score does not touch dependency")
}

func TestBuildErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Build(ctx, pyChain, syntax.Python, []bool{true})
	assert.ErrorIs(t, err, ErrMaskLength)
	for _, o := range []Option{WithDecay(0), WithDecay(1.5), WithDocScore(-1), WithThreshold(math.NaN()), WithMaxHops(-1)} {
		_, err := Build(ctx, pyChain, syntax.Python, mask(7, 7), o)
		assert.ErrorIs(t, err, ErrBadOption)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Build(cancelled, pyChain, syntax.Python, mask(7, 7))
	assert.ErrorIs(t, err, context.Canceled)
}
