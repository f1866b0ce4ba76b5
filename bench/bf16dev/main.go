// Command bf16dev measures what the bfloat16 precision (pruner.BF16) changes
// in the library's output: it prunes every case of the dev sets (JSON lines
// with "query" and "text") with a Qwen3 checkpoint twice, in float32 and in
// bfloat16, and counts the input lines whose keep decision differs, the
// documents with any such line, and the largest differences of the token
// scores and the document score. Usage:
//
//	go run ./bench/bf16dev -model testdata/tiny-swepruner -dev /work/shared/evalsets/dev
//
// It stops with the library's error on a CPU without AVX512_BF16.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/prunekit/pruner"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bf16dev:", err)
		os.Exit(1)
	}
}

type devCase struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	Text  string `json:"text"`
}

func run() error {
	model := flag.String("model", "testdata/tiny-swepruner", "Qwen3 checkpoint folder")
	dev := flag.String("dev", "/work/shared/evalsets/dev", "folder of *.jsonl dev sets")
	limit := flag.Int("limit", 0, "cases per set (0: all)")
	rounds := flag.Int("rounds", 1, "prunes per case and precision, alternating which goes first; the fastest of each is timed")
	backendName := flag.String("backend", "", "backend of both pruners (pruner.WithBackend), e.g. xla:/path/to/xla_cuda_plugin.so")
	concurrent := flag.Int("concurrent", 0, "after the sets, prune the first case this many times at once through each pruner (one model, shared) and report the wall time")
	flag.Parse()
	ctx := context.Background()
	opts := []pruner.Option{pruner.WithBackend(*backendName)}
	start := time.Now()
	f32, err := pruner.Load(ctx, *model, opts...)
	if err != nil {
		return err
	}
	fmt.Printf("load float32: %v\n", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	bf, err := pruner.Load(ctx, *model, append(opts, pruner.WithPrecision(pruner.BF16))...)
	if err != nil {
		return err
	}
	fmt.Printf("load bf16: %v\n", time.Since(start).Round(time.Millisecond))
	files, err := filepath.Glob(filepath.Join(*dev, "*.jsonl"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("no *.jsonl in %s", *dev)
	}
	fmt.Printf("model=%s dev=%s limit=%d rounds=%d backend=%q\n", *model, *dev, *limit, *rounds, *backendName)
	fmt.Printf("%-28s %5s %7s %8s %7s %6s %11s %10s %9s %9s\n", "set", "docs", "lines", "changed", "share", "docs≠", "tokscore_Δ", "docscore_Δ", "f32_s", "bf16_s")
	var tot struct {
		docs, lines, changed, docsChanged int
		tok, doc                          float64
		t32, t16                          time.Duration
	}
	for _, file := range files {
		cases, err := readCases(file, *limit)
		if err != nil {
			return err
		}
		var s struct {
			lines, changed, docsChanged int
			tok, doc                    float64
			t32, t16                    time.Duration
		}
		for _, c := range cases {
			var a, b *pruner.Result
			var t32, t16 time.Duration
			for r := 0; r < max(1, *rounds); r++ {
				for i := 0; i < 2; i++ {
					p, res, best := f32, &a, &t32
					if (i+r)%2 == 1 {
						p, res, best = bf, &b, &t16
					}
					start := time.Now()
					out, err := p.Prune(ctx, c.Query, c.Text)
					if err != nil {
						return fmt.Errorf("%s: %w", c.ID, err)
					}
					d := time.Since(start)
					if *rounds > 1 {
						fmt.Printf("  %s round %d %s: %v (%d windows, %d input tokens)\n", c.ID, r, map[bool]string{true: "float32", false: "bf16"}[p == f32],
							d.Round(10*time.Microsecond), out.Windows, out.Tokens.Input)
					}
					if *best == 0 || d < *best {
						*best = d
					}
					*res = out
				}
			}
			s.t32 += t32
			s.t16 += t16
			if len(a.Lines) != len(b.Lines) {
				return fmt.Errorf("%s: %d lines vs %d", c.ID, len(a.Lines), len(b.Lines))
			}
			changed := 0
			for i := range a.Lines {
				if a.Lines[i].Kept != b.Lines[i].Kept {
					changed++
				}
			}
			s.lines += len(a.Lines)
			s.changed += changed
			if changed > 0 {
				s.docsChanged++
			}
			for i := range min(len(a.TokenScores), len(b.TokenScores)) {
				s.tok = max(s.tok, math.Abs(a.TokenScores[i].Score-b.TokenScores[i].Score))
			}
			s.doc = max(s.doc, math.Abs(a.Score-b.Score))
		}
		fmt.Printf("%-28s %5d %7d %8d %6.2f%% %6d %11.3g %10.3g %9.1f %9.1f\n", filepath.Base(file), len(cases), s.lines, s.changed,
			100*float64(s.changed)/float64(max(1, s.lines)), s.docsChanged, s.tok, s.doc, s.t32.Seconds(), s.t16.Seconds())
		tot.docs += len(cases)
		tot.lines += s.lines
		tot.changed += s.changed
		tot.docsChanged += s.docsChanged
		tot.tok, tot.doc = max(tot.tok, s.tok), max(tot.doc, s.doc)
		tot.t32 += s.t32
		tot.t16 += s.t16
	}
	fmt.Printf("%-28s %5d %7d %8d %6.2f%% %6d %11.3g %10.3g %9.1f %9.1f\n", "all", tot.docs, tot.lines, tot.changed,
		100*float64(tot.changed)/float64(max(1, tot.lines)), tot.docsChanged, tot.tok, tot.doc, tot.t32.Seconds(), tot.t16.Seconds())
	if *concurrent > 0 {
		cases, err := readCases(files[0], 1)
		if err != nil || len(cases) == 0 {
			return fmt.Errorf("concurrent: no case in %s: %v", files[0], err)
		}
		for _, p := range []struct {
			name string
			p    *pruner.Pruner
		}{{"float32", f32}, {"bf16", bf}} {
			d, err := pruneConcurrently(ctx, p.p, cases[0], *concurrent)
			if err != nil {
				return err
			}
			fmt.Printf("concurrent %s: %d prunes of %s at once through one pruner: %v wall, %v per prune\n",
				p.name, *concurrent, cases[0].ID, d.Round(time.Millisecond), (d / time.Duration(*concurrent)).Round(100*time.Microsecond))
		}
	}
	return nil
}

// pruneConcurrently prunes c n times at once through p (as a server does
// with concurrent requests: one model, its weights shared) and returns the
// wall time.
func pruneConcurrently(ctx context.Context, p *pruner.Pruner, c devCase, n int) (time.Duration, error) {
	errs := make(chan error, n)
	start := time.Now()
	for range n {
		go func() {
			_, err := p.Prune(ctx, c.Query, c.Text)
			errs <- err
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return time.Since(start), first
}

func readCases(file string, limit int) ([]devCase, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []devCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() && (limit == 0 || len(out) < limit) {
		var c devCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}
