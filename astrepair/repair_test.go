package astrepair

import (
	"context"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// lines joins source lines with "\n" and a final terminator.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func maskOf(n int, keep ...int) []bool {
	m := make([]bool, n)
	for _, k := range keep {
		m[k-1] = true
	}
	return m
}

type ruleCase struct {
	name string
	lang syntax.Language
	src  string
	keep []int // 1-based kept lines
	// want maps 1-based lines repair must add to the reason it records.
	want map[int]Reason
	// not lists 1-based lines repair must leave out.
	not  []int
	opts []Option
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			n := len(syntax.SplitLines(tc.src))
			keep := maskOf(n, tc.keep...)
			orig := append([]bool(nil), keep...)
			res, err := Repair(ctx, tc.src, tc.lang, keep, tc.opts...)
			require.NoError(t, err)
			assert.Equal(t, orig, keep, "caller's mask must not change")
			for _, k := range tc.keep {
				assert.Equal(t, ReasonKept, res.Reason[k-1], "line %d", k)
			}
			for line, why := range tc.want {
				assert.True(t, res.Keep[line-1], "line %d should be added (%s)", line, why)
				assert.Equal(t, why, res.Reason[line-1], "reason of line %d", line)
			}
			for _, line := range tc.not {
				assert.False(t, res.Keep[line-1], "line %d should stay removed (got %s)", line, res.Reason[line-1])
			}
			added := 0
			for i, k := range res.Keep {
				if k && !orig[i] {
					added++
					assert.True(t, res.Reason[i].Added(), "line %d added without reason", i+1)
				}
			}
			assert.Equal(t, added, res.Added)
			out := render(t, tc.src, tc.lang, res.Keep)
			tree, err := syntax.Parse(ctx, tc.lang, []byte(out.Text))
			require.NoError(t, err)
			assert.Zero(t, tree.Errors, "rendered output must parse:\n%s", out.Text)
		})
	}
}

var pyClass = lines(
	"import os",               // 1
	"",                        // 2
	"class A:",                // 3
	"    def f(self):",        // 4
	"        x = os.getcwd()", // 5
	"        return x",        // 6
	"",                        // 7
	"    def g(self):",        // 8
	"        return 2",        // 9
)

var pyTry = lines(
	"def f():",                    // 1
	"    try:",                    // 2
	"        a()",                 // 3
	"    except ValueError as e:", // 4
	"        log(e)",              // 5
	"    except KeyError:",        // 6
	"        pass",                // 7
	"    finally:",                // 8
	"        done()",              // 9
	"    b()",                     // 10
)

var pyMisc = lines(
	"@decorator(",      // 1
	"    1)",           // 2
	"def handle(a,",    // 3
	"           b):",   // 4
	"    '''Doc",       // 5
	"    more'''",      // 6
	"    if a:",        // 7
	"        one()",    // 8
	"    elif b:",      // 9
	"        two()",    // 10
	"    else:",        // 11
	"        three(a,", // 12
	"              b)", // 13
	"    y = 1",        // 14
)

var pyHops = lines(
	"from typing import Sequence", // 1
	"",                            // 2
	"def helper(xs: Sequence):",   // 3
	"    return len(xs)",          // 4
	"",                            // 5
	"def main():",                 // 6
	"    print(helper([1]))",      // 7
)

func TestRepairPython(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "method line keeps class and method headers and import", lang: syntax.Python, src: pyClass, keep: []int{5},
			want: map[int]Reason{3: ReasonScope, 4: ReasonScope, 1: ReasonDependency, 6: ReasonReturn},
			not:  []int{2, 7, 8, 9}},
		{name: "no hops leaves the import out", lang: syntax.Python, src: pyClass, keep: []int{5}, opts: []Option{WithMaxHops(0)},
			want: map[int]Reason{3: ReasonScope, 4: ReasonScope}, not: []int{1}},
		{name: "no returns", lang: syntax.Python, src: pyClass, keep: []int{5}, opts: []Option{WithReturns(false)},
			not: []int{6}},
		{name: "except body keeps try and all handlers", lang: syntax.Python, src: pyTry, keep: []int{5},
			want: map[int]Reason{1: ReasonScope, 2: ReasonControl, 4: ReasonControl, 6: ReasonControl, 8: ReasonControl},
			not:  []int{3, 7, 9, 10}},
		{name: "decorator and multi-line signature", lang: syntax.Python, src: pyMisc, keep: []int{14},
			want: map[int]Reason{1: ReasonScope, 2: ReasonScope, 3: ReasonScope, 4: ReasonScope},
			not:  []int{5, 6, 7, 8}},
		{name: "else branch keeps if and elif headers", lang: syntax.Python, src: pyMisc, keep: []int{12},
			want: map[int]Reason{7: ReasonControl, 9: ReasonControl, 11: ReasonControl, 13: ReasonStatement},
			not:  []int{8, 10, 14}},
		{name: "docstring opening keeps its closing line", lang: syntax.Python, src: pyMisc, keep: []int{5},
			want: map[int]Reason{6: ReasonStatement}},
		{name: "one hop brings the helper header, not its import", lang: syntax.Python, src: pyHops, keep: []int{7},
			want: map[int]Reason{6: ReasonScope, 3: ReasonDependency}, not: []int{1, 4}},
		{name: "two hops also bring the import the helper uses", lang: syntax.Python, src: pyHops, keep: []int{7},
			opts: []Option{WithMaxHops(2)}, want: map[int]Reason{3: ReasonDependency, 1: ReasonDependency}},
	})
}

var goSrc = lines(
	"package p",                    // 1
	"",                             // 2
	"import (",                     // 3
	"\t\"fmt\"",                    // 4
	"\t\"os\"",                     // 5
	")",                            // 6
	"",                             // 7
	"type T struct{ n int }",       // 8
	"",                             // 9
	"func (t *T) Run(x int) int {", // 10
	"\tswitch x {",                 // 11
	"\tcase 1:",                    // 12
	"\t\tfmt.Println(\"one\")",     // 13
	"\tdefault:",                   // 14
	"\t\tos.Exit(1)",               // 15
	"\t}",                          // 16
	"\tvals := []int{",             // 17
	"\t\t1,",                       // 18
	"\t}",                          // 19
	"\treturn t.n",                 // 20
	"}",                            // 21
)

func TestRepairGo(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "case body keeps switch, case label, method and import", lang: syntax.Go, src: goSrc, keep: []int{13},
			want: map[int]Reason{10: ReasonScope, 11: ReasonControl, 12: ReasonControl, 16: ReasonBracket, 21: ReasonBracket,
				4: ReasonDependency, 3: ReasonStatement, 6: ReasonBracket, 20: ReasonReturn},
			not: []int{5, 14, 15, 17, 18}},
		{name: "receiver type is a dependency", lang: syntax.Go, src: goSrc, keep: []int{10},
			want: map[int]Reason{8: ReasonDependency}},
		{name: "composite literal opening keeps its closing, not its elements", lang: syntax.Go, src: goSrc, keep: []int{17},
			want: map[int]Reason{19: ReasonBracket}, not: []int{18}},
		{name: "literal element keeps the literal's opening and closing", lang: syntax.Go, src: goSrc, keep: []int{18},
			want: map[int]Reason{17: ReasonStatement, 19: ReasonBracket, 10: ReasonScope}},
	})
}

var jsSrc = lines(
	"import { load } from './load.js';", // 1
	"export class Store {",              // 2
	"  constructor() {",                 // 3
	"    this.items = [];",              // 4
	"  }",                               // 5
	"  async get(key) {",                // 6
	"    try {",                         // 7
	"      return await load(key);",     // 8
	"    } catch (err) {",               // 9
	"      console.error(err);",         // 10
	"    }",                             // 11
	"  }",                               // 12
	"}",                                 // 13
)

var tsSrc = lines(
	"interface Job {",               // 1
	"  id: string;",                 // 2
	"  run(): void;",                // 3
	"}",                             // 4
	"function exec(j: Job): void {", // 5
	"  switch (j.id) {",             // 6
	"    case 'a':",                 // 7
	"      j.run();",                // 8
	"      break;",                  // 9
	"  }",                           // 10
	"}",                             // 11
)

func TestRepairJavaScriptTypeScript(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "catch body keeps try, method, class and closers", lang: syntax.JavaScript, src: jsSrc, keep: []int{10},
			want: map[int]Reason{2: ReasonScope, 6: ReasonScope, 7: ReasonControl, 9: ReasonControl, 11: ReasonBracket, 12: ReasonBracket, 13: ReasonBracket},
			not:  []int{1, 3, 4, 5, 8}},
		{name: "call keeps its import", lang: syntax.JavaScript, src: jsSrc, keep: []int{8},
			want: map[int]Reason{1: ReasonDependency}},
		{name: "case statement keeps switch and case label; type and members are dependencies", lang: syntax.TypeScript, src: tsSrc, keep: []int{8},
			want: map[int]Reason{5: ReasonScope, 6: ReasonControl, 7: ReasonControl, 10: ReasonBracket, 11: ReasonBracket, 1: ReasonDependency, 4: ReasonBracket, 2: ReasonDependency, 3: ReasonDependency},
			not:  []int{9}},
	})
}

var javaSrc = lines(
	"import java.util.List;",          // 1
	"",                                // 2
	"public class A {",                // 3
	"    @Override",                   // 4
	"    public String toString() {",  // 5
	"        List<String> xs = null;", // 6
	"        return \"A\";",           // 7
	"    }",                           // 8
	"    int other() { return 1; }",   // 9
	"}",                               // 10
)

func TestRepairJava(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "method body keeps annotation, signature, class and import", lang: syntax.Java, src: javaSrc, keep: []int{6},
			want: map[int]Reason{1: ReasonDependency, 3: ReasonScope, 4: ReasonScope, 5: ReasonScope, 7: ReasonReturn, 8: ReasonBracket, 10: ReasonBracket},
			not:  []int{9}},
	})
}

var rustSrc = lines(
	"use std::collections::HashMap;", // 1
	"#[derive(Debug)]",               // 2
	"struct P {",                     // 3
	"    a: i32,",                    // 4
	"    b: i32,",                    // 5
	"}",                              // 6
	"fn f(p: &P) -> i32 {",           // 7
	"    match p.a {",                // 8
	"        1 => {",                 // 9
	"            let m: HashMap<i32, i32> = HashMap::new();", // 10
	"            m.len() as i32",                             // 11
	"        }",                                              // 12
	"        _ => 0,",                                        // 13
	"    }",                                                  // 14
	"}",                                                      // 15
)

func TestRepairRust(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "struct field keeps attribute and struct header", lang: syntax.Rust, src: rustSrc, keep: []int{5},
			want: map[int]Reason{2: ReasonScope, 3: ReasonScope, 6: ReasonBracket}, not: []int{4, 7}},
		{name: "match arm body keeps arm, match, fn and import", lang: syntax.Rust, src: rustSrc, keep: []int{10},
			want: map[int]Reason{1: ReasonDependency, 7: ReasonScope, 8: ReasonControl, 9: ReasonControl, 12: ReasonBracket, 14: ReasonBracket, 15: ReasonBracket},
			not:  []int{11, 13}},
	})
}

var cSrc = lines(
	"#include <stdio.h>",         // 1
	"#ifdef DEBUG",               // 2
	"static int level = 1;",      // 3
	"#endif",                     // 4
	"int run(int x) {",           // 5
	"    switch (x) {",           // 6
	"    case 1:",                // 7
	"        printf(\"%d\", x);", // 8
	"        break;",             // 9
	"    default:",               // 10
	"        return level;",      // 11
	"    }",                      // 12
	"    return 0;",              // 13
	"}",                          // 14
)

var cppSrc = lines(
	"namespace n {",         // 1
	"template <typename T>", // 2
	"class Box {",           // 3
	" public:",              // 4
	"  T get() const {",     // 5
	"    return value_;",    // 6
	"  }",                   // 7
	" private:",             // 8
	"  T value_;",           // 9
	"};",                    // 10
	"}  // namespace n",     // 11
)

func TestRepairCAndCPP(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "line inside #ifdef keeps #ifdef and #endif", lang: syntax.C, src: cSrc, keep: []int{3},
			want: map[int]Reason{2: ReasonControl, 4: ReasonBracket}, not: []int{1, 5}},
		{name: "case body keeps switch and label; global is a dependency", lang: syntax.C, src: cSrc, keep: []int{11},
			want: map[int]Reason{5: ReasonScope, 6: ReasonControl, 10: ReasonControl, 12: ReasonBracket, 14: ReasonBracket, 3: ReasonDependency, 2: ReasonControl, 4: ReasonBracket, 13: ReasonReturn},
			not:  []int{7, 8, 9}},
		{name: "method body keeps template, class and namespace", lang: syntax.CPP, src: cppSrc, keep: []int{6},
			want: map[int]Reason{1: ReasonScope, 2: ReasonScope, 3: ReasonScope, 5: ReasonScope, 7: ReasonBracket, 10: ReasonBracket, 11: ReasonBracket},
			not:  []int{4, 8}},
	})
}

func TestRepairErrorsAndEdges(t *testing.T) {
	ctx := context.Background()
	_, err := Repair(ctx, "a\nb\n", syntax.Python, []bool{true})
	assert.ErrorIs(t, err, ErrMaskLength)

	res, err := Repair(ctx, "log line 1\nlog line 2\n", syntax.Text, []bool{false, true})
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true}, res.Keep)
	assert.Equal(t, []Reason{ReasonNone, ReasonKept}, res.Reason)
	assert.Zero(t, res.Added)

	res, err = Repair(ctx, "", syntax.Go, nil)
	require.NoError(t, err)
	assert.Empty(t, res.Keep)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Repair(cancelled, pyClass, syntax.Python, maskOf(9, 5))
	assert.ErrorIs(t, err, context.Canceled)

	_, err = Closure(ctx, pyClass, syntax.Python, 99)
	assert.ErrorIs(t, err, ErrLineRange)
}

func TestClosure(t *testing.T) {
	ctx := context.Background()
	a, err := Analyze(ctx, pyClass, syntax.Python)
	require.NoError(t, err)
	got, err := a.Closure(ctx, 4) // "x = os.getcwd()"
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 3, 5}, got)
	got, err = a.Closure(ctx, 1) // blank line: costs nothing
	require.NoError(t, err)
	assert.Empty(t, got)
	// Closure agrees with Repair of the same single line.
	for line := 0; line < a.Lines(); line++ {
		c, err := a.Closure(ctx, line)
		require.NoError(t, err)
		res, err := a.Repair(ctx, maskOf(a.Lines(), line+1))
		require.NoError(t, err)
		assert.Equal(t, res.Added, len(c), "line %d", line)
	}
}

func TestReasonString(t *testing.T) {
	assert.Equal(t, "scope", ReasonScope.String())
	assert.Equal(t, "return", ReasonReturn.String())
	assert.Equal(t, "reason(99)", Reason(99).String())
	assert.False(t, ReasonKept.Added())
	assert.True(t, ReasonBracket.Added())
}

func TestSelectionMatchesRepair(t *testing.T) {
	ctx := context.Background()
	for _, file := range cleanFixtures(t) {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		text := string(src)
		lang := syntax.Detect(text, file)
		a, err := Analyze(ctx, text, lang)
		require.NoError(t, err)
		rng := rand.New(rand.NewSource(5))
		for _, density := range []float64{0.05, 0.3} {
			keep := randomMask(rng, a.Lines(), density, true)
			sel := a.NewSelection()
			for _, line := range rng.Perm(a.Lines()) {
				if !keep[line] {
					continue
				}
				cost, err := sel.Cost(ctx, line)
				require.NoError(t, err)
				got, err := sel.Add(ctx, line)
				require.NoError(t, err)
				assert.Equal(t, cost, got, "%s line %d: Cost must predict Add", file, line)
				again, err := sel.Add(ctx, line)
				require.NoError(t, err)
				assert.Empty(t, again)
			}
			want, err := a.Repair(ctx, keep)
			require.NoError(t, err)
			got := sel.Result()
			assert.Equal(t, want.Keep, got.Keep, file)
			assert.Equal(t, want.Added, got.Added, file)
		}
	}
	a, err := Analyze(ctx, pyClass, syntax.Python)
	require.NoError(t, err)
	_, err = a.NewSelection().Add(ctx, -1)
	assert.ErrorIs(t, err, ErrLineRange)
	_, err = a.NewSelection().Cost(ctx, 100)
	assert.ErrorIs(t, err, ErrLineRange)
}

// TestAnalysisConcurrentUse backs the claim that an Analysis is safe for
// concurrent use (run with -race to check it fully).
func TestAnalysisConcurrentUse(t *testing.T) {
	ctx := context.Background()
	a, err := Analyze(ctx, goSrc, syntax.Go)
	require.NoError(t, err)
	want, err := a.Repair(ctx, maskOf(a.Lines(), 13))
	require.NoError(t, err)
	errs := make(chan error, 8)
	results := make(chan Result, 8)
	for g := 0; g < 8; g++ {
		go func() {
			res, err := a.Repair(ctx, maskOf(a.Lines(), 13))
			_, _ = a.Render(ctx, res.Keep)
			_, _ = a.Closure(ctx, 12)
			errs <- err
			results <- res
		}()
	}
	for g := 0; g < 8; g++ {
		require.NoError(t, <-errs)
		assert.Equal(t, want.Keep, (<-results).Keep)
	}
}
