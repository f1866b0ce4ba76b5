package astrepair

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prunekit/pruner/internal/syntax"
)

// TestOutputDigest is a differential check for restructurings: it digests
// every public output (Repair with 0-3 hops and returns on and off,
// Render, Structure, Closure, Definitions and CallSites of every line,
// Selection Cost/Add sequences) over the fixtures, damaged copies of them
// and the test sources, with random masks. Run it on the old code with
// ASTREPAIR_DIGEST_WRITE=file, then on the new code with
// ASTREPAIR_DIGEST=file: any difference fails, and the new digest is left
// in file.got. The linear-time closure of issue 15 matched the quadratic
// one on all 78,882 digested cases.
func TestOutputDigest(t *testing.T) {
	wpath, cpath := os.Getenv("ASTREPAIR_DIGEST_WRITE"), os.Getenv("ASTREPAIR_DIGEST")
	if wpath == "" && cpath == "" {
		t.Skip("a differential check run by hand: set ASTREPAIR_DIGEST_WRITE=file on the old code, then ASTREPAIR_DIGEST=file on the new")
	}
	ctx := context.Background()
	type src struct {
		name string
		text string
		lang syntax.Language
	}
	var srcs []src
	for _, f := range cleanFixtures(t) {
		b, _ := os.ReadFile(f)
		srcs = append(srcs, src{filepath.Base(f), string(b), syntax.Detect(string(b), f)})
	}
	for i, s := range []string{pyClass, pyTry, goSrc, jsSrc, javaSrc, rustSrc, cSrc, cppSrc, tsSrc, "def f(:\n  (((\n", "}}}{{{\n", "if x:\n\tpass\n  else\n"} {
		for _, l := range syntax.Languages() {
			srcs = append(srcs, src{fmt.Sprintf("seed%d", i), s, l})
		}
	}
	// damaged fixtures: cut at random points
	rng0 := rand.New(rand.NewSource(7))
	for _, f := range cleanFixtures(t) {
		b, _ := os.ReadFile(f)
		for k := 0; k < 3; k++ {
			cut := rng0.Intn(len(b))
			srcs = append(srcs, src{fmt.Sprintf("%s-cut%d", filepath.Base(f), k), string(b[:cut]) + string(b[min(len(b), cut+len(b)/3):]), syntax.Detect(string(b), f)})
		}
	}
	srcs = append(srcs, src{"deepjs", "function f() {\n" + strings.Repeat("{\n", 50) + "x()\n" + strings.Repeat("}\n", 50) + "}\n", syntax.JavaScript})
	srcs = append(srcs, src{"deepgo", "package p\nfunc f() " + strings.Repeat("{", 50) + strings.Repeat("}", 50), syntax.Go})
	var out strings.Builder
	h := func(label string, v any) {
		sum := sha256.Sum256([]byte(fmt.Sprint(v)))
		fmt.Fprintf(&out, "%s %x\n", label, sum[:8])
	}
	for _, s := range srcs {
		a, err := Analyze(ctx, s.text, s.lang)
		if err != nil {
			t.Fatal(err)
		}
		n := a.Lines()
		if n == 0 {
			continue
		}
		pre := s.name + "/" + string(s.lang)
		rng := rand.New(rand.NewSource(int64(len(s.text))))
		for k := 0; k < 24; k++ {
			keep := randomMask(rng, n, []float64{0.01, 0.05, 0.2, 0.5}[k%4], k%2 == 1)
			for _, hops := range []int{0, 1, 2, 3} {
				for _, ret := range []bool{true, false} {
					res, err := a.Repair(ctx, keep, WithMaxHops(hops), WithReturns(ret))
					if err != nil {
						t.Fatal(err)
					}
					h(fmt.Sprintf("%s repair k%d h%d r%v", pre, k, hops, ret), res)
					if hops == 1 {
						h(fmt.Sprintf("%s render k%d r%v", pre, k, ret), digestRender(a, res.Keep))
					}
				}
			}
			h(fmt.Sprintf("%s renderraw k%d", pre, k), digestRender(a, keep))
			h(fmt.Sprintf("%s renderpkg k%d", pre, k), digestRenderPkg(s.text, s.lang, keep))
			var rows []int
			for i, kk := range keep {
				if kk {
					rows = append(rows, i)
				}
			}
			st, err := a.Structure(ctx, rows)
			if err != nil {
				t.Fatal(err)
			}
			h(fmt.Sprintf("%s structure k%d", pre, k), st)
		}
		for line := 0; line < n; line++ {
			c1, err := a.Closure(ctx, line)
			if err != nil {
				t.Fatal(err)
			}
			c2, _ := a.Closure(ctx, line, WithMaxHops(0), WithReturns(false))
			c3, _ := a.Closure(ctx, line, WithMaxHops(2))
			d, _ := digestDefs(a, line)
			c, _ := digestCalls(a, line)
			h(fmt.Sprintf("%s line%d", pre, line), fmt.Sprint(c1, c2, c3, d, c))
		}
		for k := 0; k < 6; k++ {
			sel := a.NewSelection(WithMaxHops(k % 3))
			var log []any
			for step := 0; step < 40; step++ {
				line := rng.Intn(n)
				c, err := sel.Cost(ctx, line)
				if err != nil {
					t.Fatal(err)
				}
				log = append(log, c)
				if rng.Intn(3) > 0 {
					ad, err := sel.Add(ctx, line)
					if err != nil {
						t.Fatal(err)
					}
					log = append(log, ad)
				}
			}
			log = append(log, sel.Result())
			h(fmt.Sprintf("%s sel%d", pre, k), log)
		}
	}
	if wpath != "" {
		if err := os.WriteFile(wpath, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(cpath)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != out.String() {
		_ = os.WriteFile(cpath+".got", []byte(out.String()), 0o644)
		t.Fatalf("digest differs; see %s.got", cpath)
	}
}

func digestRender(a *Analysis, keep []bool) any {
	r, err := a.Render(context.Background(), keep)
	if err != nil {
		panic(err)
	}
	return r
}
func digestRenderPkg(text string, lang syntax.Language, keep []bool) any {
	r, err := Render(context.Background(), text, lang, keep)
	if err != nil {
		panic(err)
	}
	return r
}
func digestDefs(a *Analysis, line int) ([]int, error) {
	return a.Definitions(context.Background(), line)
}
func digestCalls(a *Analysis, line int) ([]int, error) {
	return a.CallSites(context.Background(), line)
}
