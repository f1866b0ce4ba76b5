package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

// fnSpec is a small pure function that exists three times: as JavaScript and
// Python source (correct and with an injected bug) and as Go code that
// computes both results, so the failing test cases are known in advance.
type fnSpec struct {
	base   string                       // verb-ish stem for the name
	params string                       // parameter list
	js     [2]string                    // correct, buggy body (JS); {fn} placeholder
	py     [2]string                    // correct, buggy body (Python)
	eval   func(bug bool, a []int) int  // result
	gen    func(r *rand.Rand) []int     // one input
	args   func(a []int) (string, bool) // rendered call args; bool: first arg is an array
	desc   string                       // what it does, for questions
	bugDsc string                       // what the bug looks like
}

func arrArgs(a []int) (string, bool) { return fmt.Sprint(jsArr(a)), true }
func jsArr(a []int) string {
	var s []string
	for _, x := range a {
		s = append(s, fmt.Sprint(x))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func randArr(r *rand.Rand, n, lo, hi int) []int {
	a := make([]int, n)
	for i := range a {
		a[i] = lo + r.IntN(hi-lo+1)
	}
	return a
}

var catalog = []fnSpec{
	{base: "clamp", params: "value, lo, hi",
		js: [2]string{"  if (value < lo) return lo;\n  if (value > hi) return hi;\n  return value;", "  if (value < lo) return lo;\n  if (value > hi) return lo;\n  return value;"},
		py: [2]string{"    if value < lo:\n        return lo\n    if value > hi:\n        return hi\n    return value", "    if value < lo:\n        return lo\n    if value > hi:\n        return lo\n    return value"},
		eval: func(bug bool, a []int) int {
			v, lo, hi := a[0], a[1], a[2]
			if v < lo {
				return lo
			}
			if v > hi {
				if bug {
					return lo
				}
				return hi
			}
			return v
		},
		gen:  func(r *rand.Rand) []int { lo := r.IntN(20); return []int{r.IntN(120) - 10, lo, lo + 20 + r.IntN(60)} },
		args: func(a []int) (string, bool) { return fmt.Sprintf("%d, %d, %d", a[0], a[1], a[2]), false },
		desc: "limits a value to a range", bugDsc: "values above the maximum come back as the minimum"},
	{base: "total", params: "values",
		js: [2]string{"  let sum = 0;\n  for (const v of values) {\n    if (v > 0) sum += v;\n  }\n  return sum;", "  let sum = 0;\n  for (const v of values) {\n    sum += v;\n  }\n  return sum;"},
		py: [2]string{"    total = 0\n    for v in values:\n        if v > 0:\n            total += v\n    return total", "    total = 0\n    for v in values:\n        total += v\n    return total"},
		eval: func(bug bool, a []int) int {
			s := 0
			for _, v := range a {
				if v > 0 || bug {
					s += v
				}
			}
			return s
		},
		gen: func(r *rand.Rand) []int {
			if r.IntN(2) == 0 {
				return randArr(r, 2+r.IntN(4), 0, 50)
			}
			return randArr(r, 2+r.IntN(4), -20, 50)
		},
		args: arrArgs, desc: "adds up the positive amounts", bugDsc: "negative amounts are not ignored"},
	{base: "largest", params: "values",
		js: [2]string{"  let best = values[0];\n  for (const v of values) {\n    if (v > best) best = v;\n  }\n  return best;", "  let best = 0;\n  for (const v of values) {\n    if (v > best) best = v;\n  }\n  return best;"},
		py: [2]string{"    best = values[0]\n    for v in values:\n        if v > best:\n            best = v\n    return best", "    best = 0\n    for v in values:\n        if v > best:\n            best = v\n    return best"},
		eval: func(bug bool, a []int) int {
			best := a[0]
			if bug {
				best = 0
			}
			for _, v := range a {
				if v > best {
					best = v
				}
			}
			return best
		},
		gen: func(r *rand.Rand) []int {
			if r.IntN(3) == 0 {
				return randArr(r, 2+r.IntN(3), -90, -1)
			}
			return randArr(r, 2+r.IntN(4), -5, 99)
		},
		args: arrArgs, desc: "returns the maximum", bugDsc: "an all-negative list gives 0"},
	{base: "countOver", params: "values, limit",
		js: [2]string{"  return values.filter((v) => v > limit).length;", "  return values.filter((v) => v >= limit).length;"},
		py: [2]string{"    return len([v for v in values if v > limit])", "    return len([v for v in values if v >= limit])"},
		eval: func(bug bool, a []int) int {
			lim, n := a[len(a)-1], 0
			for _, v := range a[:len(a)-1] {
				if v > lim || (bug && v == lim) {
					n++
				}
			}
			return n
		},
		gen: func(r *rand.Rand) []int {
			a := randArr(r, 3+r.IntN(3), 0, 10)
			return append(a, a[r.IntN(len(a))])
		},
		args: func(a []int) (string, bool) { return fmt.Sprintf("%s, %d", jsArr(a[:len(a)-1]), a[len(a)-1]), true },
		desc: "counts the values above a threshold", bugDsc: "values equal to the threshold are counted"},
	{base: "fee", params: "cents",
		js: [2]string{"  if (cents >= 10000) return Math.floor(cents / 50);\n  return 250;", "  if (cents > 10000) return Math.floor(cents / 50);\n  return 250;"},
		py: [2]string{"    if cents >= 10000:\n        return cents // 50\n    return 250", "    if cents > 10000:\n        return cents // 50\n    return 250"},
		eval: func(bug bool, a []int) int {
			c := a[0]
			if c > 10000 || (!bug && c == 10000) {
				return c / 50
			}
			return 250
		},
		gen: func(r *rand.Rand) []int {
			return []int{family.Pick(r, []int{10000, 2500, 9999, 10000, 15000, 40050, 800})}
		},
		args: func(a []int) (string, bool) { return fmt.Sprint(a[0]), false },
		desc: "computes the fee for an amount in cents", bugDsc: "the exact tier boundary gets the flat fee"},
	{base: "average", params: "values",
		js: [2]string{"  if (values.length === 0) return 0;\n  const sum = values.reduce((a, b) => a + b, 0);\n  return Math.floor(sum / values.length);", "  if (values.length === 0) return 0;\n  const sum = values.reduce((a, b) => a + b, 0);\n  return Math.floor(sum / (values.length + 1));"},
		py: [2]string{"    if not values:\n        return 0\n    return sum(values) // len(values)", "    if not values:\n        return 0\n    return sum(values) // (len(values) + 1)"},
		eval: func(bug bool, a []int) int {
			if len(a) == 0 {
				return 0
			}
			s := 0
			for _, v := range a {
				s += v
			}
			n := len(a)
			if bug {
				n++
			}
			return s / n
		},
		gen: func(r *rand.Rand) []int {
			if r.IntN(4) == 0 {
				return []int{}
			}
			return randArr(r, 1+r.IntN(4), 0, 90)
		},
		args: arrArgs, desc: "computes the integer mean", bugDsc: "the mean is divided by one too many"},
}
