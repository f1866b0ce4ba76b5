// Command qwen3 times the Qwen3 backbone forward of this repository on a GoMLX
// backend and, with -torch, the same configuration in PyTorch on the CPU
// (bench/torch_qwen3.py run by Debian's /usr/bin/python3), printing the
// Go/PyTorch time ratio. Weights are random; only speed is compared.
//
//	go run ./bench/qwen3 -config tiny,h256,l1-0.6b -tokens 512,2048 -backend fastgo -torch
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best with the dot import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	mlctx "github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/prunekit/pruner/backbone"
	"github.com/prunekit/pruner/internal/backend"
	"github.com/prunekit/pruner/internal/fastcpu"
)

// benchVocab keeps random embeddings small; the vocabulary size does not
// change the forward cost (one gather).
const benchVocab = 4096

// configs are the benchmarked shapes (torch_qwen3.py has the same table).
var configs = map[string]backbone.Config{
	"tiny":    {HiddenSize: 16, NumLayers: 4, NumHeads: 4, NumKVHeads: 2, HeadDim: 8, IntermediateSize: 48},
	"h256":    {HiddenSize: 256, NumLayers: 4, NumHeads: 4, NumKVHeads: 2, HeadDim: 64, IntermediateSize: 768},
	"l1-0.6b": {HiddenSize: 1024, NumLayers: 1, NumHeads: 16, NumKVHeads: 8, HeadDim: 128, IntermediateSize: 3072},
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "qwen3 bench:", err)
		os.Exit(1)
	}
}

func run() error {
	cfgList := flag.String("config", "tiny,h256,l1-0.6b", "comma-separated configs: tiny, h256, l1-0.6b")
	tokList := flag.String("tokens", "512,2048", "comma-separated sequence lengths")
	backendName := flag.String("backend", "fastgo", `GoMLX backend: "fastgo" (internal/fastcpu) or any name internal/backend.New accepts, e.g. "simplego" (plain GoMLX pure Go backend)`)
	reps := flag.Int("reps", 3, "timed repetitions per case (the minimum is reported)")
	torch := flag.Bool("torch", false, "also time PyTorch (bench/torch_qwen3.py) and print Go/PyTorch ratios")
	python := flag.String("python", "/usr/bin/python3", "python interpreter with torch (Debian python3-torch)")
	torchArgs := flag.String("torch-args", "", "extra arguments for torch_qwen3.py, e.g. \"--threads 1\"")
	variants := flag.String("torch-threads", "2:2,2:1,1:1", "PyTorch thread settings tried, torch:openblas each; the fastest is reported")
	attns := flag.String("torch-attn", "eager,inplace", "torch_qwen3.py attention variants tried; the fastest is reported")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the Go runs to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	var b backends.Backend
	var err error
	if *backendName == "fastgo" {
		b, err = fastcpu.New("")
	} else {
		b, err = backend.New(*backendName)
	}
	if err != nil {
		return err
	}
	defer b.Finalize()
	var toks []int
	for _, s := range strings.Split(*tokList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad -tokens entry %q", s)
		}
		toks = append(toks, n)
	}
	script := filepath.Join(sourceDir(), "..", "torch_qwen3.py")
	fmt.Printf("backend=%s GOMAXPROCS=%d cpus=%d reps=%d\n", b.Name(), runtime.GOMAXPROCS(0), runtime.NumCPU(), *reps)
	if *torch {
		fmt.Printf("torch: %s %s; tried threads (torch:openblas) %s x attention %s; fastest reported\n", *python, script, *variants, *attns)
	}
	fmt.Printf("%-8s %6s %10s %22s %8s\n", "config", "tokens", "go_ms", "torch_ms@thr", "go/torch")
	for _, name := range strings.Split(*cfgList, ",") {
		name = strings.TrimSpace(name)
		cfg, ok := configs[name]
		if !ok {
			return fmt.Errorf("unknown config %q", name)
		}
		cfg.VocabSize, cfg.RopeTheta, cfg.RMSNormEps = benchVocab, backbone.DefaultRopeTheta, backbone.DefaultRMSNormEps
		ctx := randomContext(cfg)
		e, err := mlctx.NewExec(b, ctx, func(ctx *mlctx.Context, ids *Node) *Node {
			return backbone.Forward(ctx.In("backbone"), cfg, ids, cfg.NumLayers)[0]
		})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, n := range toks {
			goMs, err := timeGo(e, n, *reps)
			if err != nil {
				return fmt.Errorf("%s/%d: %w", name, n, err)
			}
			torchCol, ratioCol := "-", "-"
			if *torch {
				tMs := 0.0
				best := ""
				for _, attn := range strings.Split(*attns, ",") {
					for _, v := range strings.Split(*variants, ",") {
						th, bt, ok := strings.Cut(strings.TrimSpace(v), ":")
						if !ok {
							return fmt.Errorf("bad -torch-threads entry %q (want torch:openblas)", v)
						}
						ms, err := timeTorch(*python, script, name, n, *reps,
							*torchArgs+" --attn "+strings.TrimSpace(attn)+" --threads "+th+" --blas-threads "+bt)
						if err != nil {
							return fmt.Errorf("torch %s/%d: %w", name, n, err)
						}
						if tMs == 0 || ms < tMs {
							tMs, best = ms, v+","+strings.TrimSpace(attn)
						}
					}
				}
				torchCol = fmt.Sprintf("%.1f@%s", tMs, best)
				ratioCol = fmt.Sprintf("%.2f", goMs/tMs)
			}
			fmt.Printf("%-8s %6d %10.1f %22s %8s\n", name, n, goMs, torchCol, ratioCol)
		}
		e.Finalize()
	}
	return nil
}

// randomContext returns a context holding random backbone weights under
// "backbone", named as backbone.Forward reads them.
func randomContext(cfg backbone.Config) *mlctx.Context {
	r := rand.New(rand.NewSource(1))
	ctx := mlctx.New()
	names := make([]string, 0)
	shapes := cfg.ExpectedShapes()
	for n := range shapes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		dims := shapes[n]
		size := 1
		for _, d := range dims {
			size *= d
		}
		v := make([]float32, size)
		offset := 0.0
		if strings.HasSuffix(n, "norm.weight") {
			offset = 1 // RMSNorm gains near 1, as in trained models
		}
		for i := range v {
			v[i] = float32(offset + r.NormFloat64()*0.05)
		}
		dot := strings.LastIndexByte(n, '.')
		scope := "/backbone/" + strings.ReplaceAll(n[:dot], ".", "/")
		ctx.InAbsPath(scope).VariableWithValue(n[dot+1:], tensors.FromFlatDataAndDimensions(v, dims...))
	}
	return ctx.Reuse()
}

// timeGo runs one warm-up forward (graph build and compile) and returns the
// minimum of reps timed forwards in milliseconds.
func timeGo(e *mlctx.Exec, n, reps int) (float64, error) {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32((i * 7919) % benchVocab)
	}
	in := tensors.FromFlatDataAndDimensions(ids, 1, n)
	best := 0.0
	for i := -1; i < reps; i++ {
		start := time.Now()
		out, err := e.Exec(in)
		if err != nil {
			return 0, err
		}
		out[0].MustFinalizeAll()
		ms := float64(time.Since(start).Microseconds()) / 1000
		if i >= 0 && (best == 0 || ms < best) {
			best = ms
		}
	}
	return best, nil
}

// timeTorch runs torch_qwen3.py for one case and parses its JSON line.
func timeTorch(python, script, cfg string, n, reps int, extra string) (float64, error) {
	args := []string{script, "--config", cfg, "--tokens", strconv.Itoa(n), "--reps", strconv.Itoa(reps)}
	args = append(args, strings.Fields(extra)...)
	cmd := exec.Command(python, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", python, strings.Join(args, " "), err)
	}
	var res struct {
		Ms float64 `json:"ms"`
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				return 0, fmt.Errorf("parse %q: %w", line, err)
			}
		}
	}
	if res.Ms <= 0 {
		return 0, fmt.Errorf("no timing in output %q", out)
	}
	return res.Ms, nil
}

// sourceDir is the directory of this program's sources when run from the
// repository root (go run ./bench/qwen3), else the working directory's bench/qwen3.
func sourceDir() string {
	if _, err := os.Stat("bench/torch_qwen3.py"); err == nil {
		return "bench/qwen3"
	}
	return "."
}
