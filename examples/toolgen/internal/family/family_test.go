package family

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCandidatesSkipCommentsAndStrings(t *testing.T) {
	src := "package x\n\n// if a < b { return 1 }\nfunc f(a, b int) int {\n\ts := \"a < b == 3\"\n\tif a < b {\n\t\treturn 10\n\t}\n\tg(a, b)\n\treturn len(s)\n}\n"
	cs := Candidates(src, LangC)
	require.NotEmpty(t, cs)
	kinds := map[string]bool{}
	for _, m := range cs {
		assert.NotEqual(t, 3, m.Line, "comment line mutated: %+v", m)
		assert.NotEqual(t, 5, m.Line, "string literal mutated: %+v", m)
		kinds[m.Kind] = true
		out := m.Apply(src)
		assert.Equal(t, strings.Count(src, "\n"), strings.Count(out, "\n"), "line count must not change")
		lines := strings.Split(out, "\n")
		assert.Equal(t, m.After, lines[m.Line-1])
	}
	assert.True(t, kinds["compare"], "a < b should flip")
	assert.True(t, kinds["swap"], "g(a, b) should swap")
	assert.True(t, kinds["drop"], "g(a, b) can be dropped")
}

func TestCandidatesPython(t *testing.T) {
	src := "def f(a, b):\n    \"\"\"a < b\n    and 3\"\"\"\n    x = a + 1  # a < b\n    if x >= b and a:\n        return True\n    return False\n"
	cs := Candidates(src, LangPython)
	lines := map[int][]string{}
	for _, m := range cs {
		lines[m.Line] = append(lines[m.Line], m.Kind)
		assert.NotContains(t, []int{2, 3}, m.Line, "docstring mutated: %+v", m)
		if m.Kind == "drop" {
			assert.Equal(t, "    pass", m.After)
		}
	}
	assert.Contains(t, lines[4], "arith")
	assert.Contains(t, lines[4], "off-by-one")
	assert.Contains(t, lines[5], "compare")
	assert.Contains(t, lines[5], "logic")
	assert.Contains(t, lines[6], "bool")
}

func TestCheckDropsBadGold(t *testing.T) {
	sc := &Scenario{Text: "a\n\nb\n", Qs: []Question{
		{"blank gold", []int{2}},
		{"out of range", []int{4}},
		{"good", []int{3, 1, 3}},
		{"same gold", []int{1, 3}},
	}}
	require.NoError(t, sc.Check(5))
	require.Len(t, sc.Qs, 1)
	assert.Equal(t, []int{1, 3}, sc.Qs[0].Gold)
	assert.Error(t, (&Scenario{Text: "a\n", Qs: []Question{{"q", []int{0}}}}).Check(5))
}

func TestDropKeepsStatementsWhole(t *testing.T) {
	src := "def f(a, b):\n    x = (a and\n         b)\n    y = a == b and \\\n        b\n    z = g(a,\n          b)\n    w = h(a)\n    return x\n"
	for _, m := range Candidates(src, LangPython) {
		if m.Kind == "drop" {
			assert.Equal(t, 8, m.Line, "only the one-line statement w = h(a) can go, not %q", m.Before)
		}
	}
}

func TestScrub(t *testing.T) {
	for in, want := range map[string]string{
		"E   assert '/tmp/toolgen...7543/projects' == '~/projects'":    "E   assert '/home/dev/pr...7543/projects' == '~/projects'",
		"PosixPath('/tmp/pytest-of-root/pytest-4/test_rotate0/f.txt')": "PosixPath('/tmp/pytest-of-dev/pytest-4/test_rotate0/f.txt')",
		"/home/dev/project/src/x.py:12":                                "/home/dev/project/src/x.py:12",
	} {
		assert.Equal(t, want, Scrub(in))
		assert.Equal(t, want, Scrub(Scrub(in)), "idempotent")
	}
}

func TestPickWeighted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	xs := []string{"a", "b", "never"}
	w := map[string]int{"a": 1, "b": 3, "never": 0}
	for range 4000 {
		counts[PickWeighted(r, xs, func(x string) int { return w[x] })]++
	}
	assert.Zero(t, counts["never"])
	assert.InDelta(t, 3.0, float64(counts["b"])/float64(counts["a"]), 0.4)
	assert.Equal(t, "a", PickWeighted(r, xs, func(string) int { return 0 }))
}

func TestQuestionsAdd(t *testing.T) {
	var qs Questions
	qs.Add("union", []int{3}, nil, []int{1, 2})
	qs.Add("no gold", nil)
	require.Len(t, qs, 1)
	assert.Equal(t, Question{Query: "union", Gold: []int{3, 1, 2}}, qs[0])
}
