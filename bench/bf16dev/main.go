// Command bf16dev measures what the bfloat16 precision (pruner.BF16) and
// blocked attention (pruner.WithAttentionBlock) change in the library's
// output and its speed: it prunes every case of the dev sets (JSON lines
// with "query" and "text") with a Qwen3 checkpoint loaded each way of
// -configs (default "float32,bf16"), and counts, against the first, the
// input lines whose keep decision differs, the documents with any such
// line, and the largest differences of the token scores and the document
// score, beside each way's time. Usage:
//
//	go run ./bench/bf16dev -model testdata/tiny-swepruner -dev /work/shared/evalsets/dev
//	go run ./bench/bf16dev -configs bf16,bf16+block4096,bf16+block2048 -backend xla:PLUGIN ...
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
	"strconv"
	"strings"
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

// setup is one way of loading the checkpoint: a precision and an attention
// block, written "float32", "bf16", "bf16+block2048".
type setup struct {
	name string
	p    *pruner.Pruner
	best time.Duration // per case, reset for each
	sum  time.Duration // per set
	all  time.Duration
	res  *pruner.Result
}

// parseSetup reads one -configs entry into Load options.
func parseSetup(s string) ([]pruner.Option, error) {
	var opts []pruner.Option
	for i, part := range strings.Split(s, "+") {
		switch {
		case i == 0 && (part == "float32" || part == "bf16"):
			opts = append(opts, pruner.WithPrecision(pruner.Precision(part)))
		case i > 0 && strings.HasPrefix(part, "block"):
			n, err := strconv.Atoi(strings.TrimPrefix(part, "block"))
			if err != nil {
				return nil, fmt.Errorf("config %q: %w", s, err)
			}
			opts = append(opts, pruner.WithAttentionBlock(n))
		default:
			return nil, fmt.Errorf("config %q: want float32 or bf16, then +blockN", s)
		}
	}
	return opts, nil
}

func run() error {
	model := flag.String("model", "testdata/tiny-swepruner", "Qwen3 checkpoint folder")
	dev := flag.String("dev", "/work/shared/evalsets/dev", "folder of *.jsonl dev sets")
	limit := flag.Int("limit", 0, "cases per set (0: all)")
	rounds := flag.Int("rounds", 1, "prunes per case and config, rotating which goes first; the fastest of each is timed")
	backendName := flag.String("backend", "", "backend of the pruners (pruner.WithBackend), e.g. xla:/path/to/xla_cuda_plugin.so")
	configs := flag.String("configs", "float32,bf16", "comma-separated ways to load the checkpoint, each compared with the first: float32 or bf16, optionally +blockN (pruner.WithAttentionBlock(N))")
	concurrent := flag.Int("concurrent", 0, "after the sets, prune the first case this many times at once through each pruner (one model, shared) and report the wall time")
	flag.Parse()
	ctx := context.Background()
	var setups []*setup
	for _, c := range strings.Split(*configs, ",") {
		opts, err := parseSetup(c)
		if err != nil {
			return err
		}
		start := time.Now()
		p, err := pruner.Load(ctx, *model, append([]pruner.Option{pruner.WithBackend(*backendName)}, opts...)...)
		if err != nil {
			return fmt.Errorf("load %s: %w", c, err)
		}
		fmt.Printf("load %s: %v\n", c, time.Since(start).Round(time.Millisecond))
		setups = append(setups, &setup{name: c, p: p})
	}
	if len(setups) < 2 {
		return fmt.Errorf("-configs: want at least two, got %q", *configs)
	}
	files, err := filepath.Glob(filepath.Join(*dev, "*.jsonl"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("no *.jsonl in %s", *dev)
	}
	fmt.Printf("model=%s dev=%s limit=%d rounds=%d backend=%q\n", *model, *dev, *limit, *rounds, *backendName)
	fmt.Printf("%-28s %-20s %5s %7s %8s %7s %6s %11s %10s %9s\n", "set", "config", "docs", "lines", "changed", "share", "docs≠", "tokscore_Δ", "docscore_Δ", "time_s")
	type diff struct {
		lines, changed, docsChanged int
		tok, doc                    float64
	}
	tot := make([]diff, len(setups))
	totDocs := 0
	for _, file := range files {
		cases, err := readCases(file, *limit)
		if err != nil {
			return err
		}
		set := make([]diff, len(setups))
		for _, c := range cases {
			for _, u := range setups {
				u.best = 0
			}
			for r := 0; r < max(1, *rounds); r++ {
				for i := range setups {
					u := setups[(i+r)%len(setups)]
					start := time.Now()
					out, err := u.p.Prune(ctx, c.Query, c.Text)
					if err != nil {
						return fmt.Errorf("%s %s: %w", c.ID, u.name, err)
					}
					d := time.Since(start)
					if *rounds > 1 {
						fmt.Printf("  %s round %d %s: %v (%d windows, %d input tokens)\n", c.ID, r, u.name,
							d.Round(10*time.Microsecond), out.Windows, out.Tokens.Input)
					}
					if u.best == 0 || d < u.best {
						u.best = d
					}
					u.res = out
				}
			}
			a := setups[0].res
			for j, u := range setups {
				u.sum += u.best
				b := u.res
				if len(a.Lines) != len(b.Lines) {
					return fmt.Errorf("%s: %d lines vs %d", c.ID, len(a.Lines), len(b.Lines))
				}
				changed := 0
				for i := range a.Lines {
					if a.Lines[i].Kept != b.Lines[i].Kept {
						changed++
					}
				}
				d := &set[j]
				d.lines += len(a.Lines)
				d.changed += changed
				if changed > 0 {
					d.docsChanged++
				}
				for i := range min(len(a.TokenScores), len(b.TokenScores)) {
					d.tok = max(d.tok, math.Abs(a.TokenScores[i].Score-b.TokenScores[i].Score))
				}
				d.doc = max(d.doc, math.Abs(a.Score-b.Score))
			}
		}
		totDocs += len(cases)
		for j, u := range setups {
			d := set[j]
			fmt.Printf("%-28s %-20s %5d %7d %8d %6.2f%% %6d %11.3g %10.3g %9.3f\n", filepath.Base(file), u.name, len(cases), d.lines, d.changed,
				100*float64(d.changed)/float64(max(1, d.lines)), d.docsChanged, d.tok, d.doc, u.sum.Seconds())
			t := &tot[j]
			t.lines += d.lines
			t.changed += d.changed
			t.docsChanged += d.docsChanged
			t.tok, t.doc = max(t.tok, d.tok), max(t.doc, d.doc)
			u.all += u.sum
			u.sum = 0
		}
	}
	for j, u := range setups {
		d := tot[j]
		fmt.Printf("%-28s %-20s %5d %7d %8d %6.2f%% %6d %11.3g %10.3g %9.3f\n", "all", u.name, totDocs, d.lines, d.changed,
			100*float64(d.changed)/float64(max(1, d.lines)), d.docsChanged, d.tok, d.doc, u.all.Seconds())
	}
	if *concurrent > 0 {
		cases, err := readCases(files[0], 1)
		if err != nil || len(cases) == 0 {
			return fmt.Errorf("concurrent: no case in %s: %v", files[0], err)
		}
		for _, u := range setups {
			d, err := pruneConcurrently(ctx, u.p, cases[0], *concurrent)
			if err != nil {
				return err
			}
			fmt.Printf("concurrent %s: %d prunes of %s at once through one pruner: %v wall, %v per prune\n",
				u.name, *concurrent, cases[0].ID, d.Round(time.Millisecond), (d / time.Duration(*concurrent)).Round(100*time.Microsecond))
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
