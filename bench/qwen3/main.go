// Command qwen3 times the Qwen3 backbone forward of this repository on a GoMLX
// backend and, with -torch, the same configuration in PyTorch on the CPU
// (bench/torch_qwen3.py run by Debian's /usr/bin/python3), printing the
// Go/PyTorch time ratio. With -ort it also exports each case to ONNX
// (torch_qwen3.py --export-onnx, cached under -onnx-dir) and times it with
// ONNX Runtime's CPU provider (bench/ort_qwen3.js on Node.js with
// onnxruntime-node), printing the Go/ORT ratio. Weights are random; only
// speed is compared (ORT's output is checked against PyTorch's).
//
//	go run ./bench/qwen3 -config tiny,h256,l1-0.6b -tokens 512,2048 -backend fastgo -torch -ort
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
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
	// The whole Qwen3-0.6B backbone, for accelerators.
	"0.6b": {HiddenSize: 1024, NumLayers: 28, NumHeads: 16, NumKVHeads: 8, HeadDim: 128, IntermediateSize: 3072},
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "qwen3 bench:", err)
		os.Exit(1)
	}
}

func run() error {
	cfgList := flag.String("config", "tiny,h256,l1-0.6b", "comma-separated configs: tiny, h256, l1-0.6b, 0.6b (all 28 layers, for accelerators)")
	tokList := flag.String("tokens", "512,2048", "comma-separated sequence lengths")
	backendName := flag.String("backend", "fastgo", `GoMLX backend: "fastgo" (internal/fastcpu; "fastgo,avx2" or "fastgo,purego" force those kernels) or any name internal/backend.New accepts, e.g. "simplego" (plain GoMLX pure Go backend)`)
	reps := flag.Int("reps", 3, "timed repetitions per case (the minimum is reported)")
	torch := flag.Bool("torch", false, "also time PyTorch (bench/torch_qwen3.py) and print Go/PyTorch ratios")
	python := flag.String("python", "/usr/bin/python3", "python interpreter with torch (Debian python3-torch)")
	torchArgs := flag.String("torch-args", "", "extra arguments for torch_qwen3.py, e.g. \"--threads 1\"")
	variants := flag.String("torch-threads", "2:2,2:1,1:1", "PyTorch thread settings tried, torch:openblas each; the fastest is reported")
	attns := flag.String("torch-attn", "eager,inplace", "torch_qwen3.py attention variants tried; the fastest is reported")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the Go runs to this file")
	ort := flag.Bool("ort", false, "also time ONNX Runtime on the CPU (bench/ort_qwen3.js on Node.js) and print Go/ORT ratios")
	ortModules := flag.String("ort-modules", defaultORTModules(), "node_modules directory holding onnxruntime-node (default $NODE_PATH, else /tmp/ortpeer/node_modules)")
	ortThreads := flag.Int("ort-threads", 2, "ONNX Runtime intra-op threads")
	onnxDir := flag.String("onnx-dir", filepath.Join(os.TempDir(), "pruner-qwen3-onnx"), "cache directory of the exported ONNX models (one per config, tokens and torch_qwen3.py version)")
	node := flag.String("node", "node", "Node.js executable")
	precisions := flag.String("precision", "float32", `comma-separated precisions of the Go weight products timed side by side, each case alternating between them: "float32", "bf16" (fastgo's bfloat16 weight products, AVX512_BF16 only; on XLA the graph's bfloat16 products, as pruner.BF16), e.g. "float32,bf16"`)
	queryBlock := flag.Int("query-block", 0, "decoder attention in blocks of this many queries (backbone.ParamQueryBlock, as pruner.Load builds it for XLA); 0: one block")
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

	precs := strings.Split(*precisions, ",")
	var bs []backends.Backend
	graphBF16 := make([]bool, len(precs))
	for i, prec := range precs {
		prec = strings.TrimSpace(prec)
		precs[i] = prec
		var b backends.Backend
		var err error
		cfg, ok := strings.CutPrefix(*backendName, "fastgo")
		switch {
		case prec != "float32" && prec != "bf16":
			return fmt.Errorf("bad -precision entry %q (want float32 or bf16)", prec)
		case ok && (cfg == "" || cfg[0] == ','):
			if prec == "bf16" {
				cfg += ",bf16"
			}
			b, err = fastcpu.New(strings.TrimPrefix(cfg, ","))
		case prec == "bf16":
			// Other backends (XLA) get bfloat16 products in the graph, as
			// pruner.BF16 builds them there.
			var name string
			if name, graphBF16[i], err = backend.WithPrecision(*backendName, backend.BF16); err != nil {
				return err
			}
			b, err = backend.New(name)
		default:
			b, err = backend.New(*backendName)
		}
		if err != nil {
			return err
		}
		defer b.Finalize()
		bs = append(bs, b)
	}
	b := bs[0]
	var err error
	var toks []int
	for _, s := range strings.Split(*tokList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad -tokens entry %q", s)
		}
		toks = append(toks, n)
	}
	script := filepath.Join(sourceDir(), "..", "torch_qwen3.py")
	ortScript := filepath.Join(sourceDir(), "..", "ort_qwen3.js")
	var ortVersion string
	if *torch || *ort {
		if err := checkTorch(*python); err != nil {
			return err
		}
	}
	if *ort {
		if ortVersion, err = checkORT(*node, ortScript, *ortModules); err != nil {
			return err
		}
		if err := os.MkdirAll(*onnxDir, 0o755); err != nil {
			return err
		}
	}
	model, avx512 := cpuInfo(readFile("/proc/cpuinfo"))
	kernel := "-"
	if k, ok := b.(interface{ Kernel() string }); ok {
		kernel = k.Kernel()
	}
	fmt.Printf("cpu=%q avx512=%s backend=%s kernel=%s GOMAXPROCS=%d cpus=%d reps=%d load1=%s (start)\n",
		model, avx512, b.Name(), kernel, runtime.GOMAXPROCS(0), runtime.NumCPU(), *reps, load1())
	if *torch {
		fmt.Printf("torch: %s %s; tried threads (torch:openblas) %s x attention %s; fastest reported\n", *python, script, *variants, *attns)
	}
	if *ort {
		fmt.Printf("ort: onnxruntime-node %s from %s, %s %s, CPU provider, intra-op threads %d, inter-op 1, sequential, graph optimization all; models in %s\n",
			ortVersion, *ortModules, *node, ortScript, *ortThreads, *onnxDir)
	}
	extraHead := ""
	for _, prec := range precs[1:] {
		extraHead += fmt.Sprintf(" %10s %8s %9s", prec+"_ms", prec+"/ort", prec+"_diff")
	}
	fmt.Printf("precision=%s (go_ms: %s; %s_diff: largest |difference| from the %s output)\n", *precisions, precs[0], strings.Join(precs[1:], ","), precs[0])
	fmt.Printf("%-8s %6s %10s %22s %8s %10s %7s %9s%s %6s\n", "config", "tokens", "go_ms", "torch_ms@thr", "go/torch", "ort_ms", "go/ort", "ort_diff", extraHead, "load1")
	for _, name := range strings.Split(*cfgList, ",") {
		name = strings.TrimSpace(name)
		cfg, ok := configs[name]
		if !ok {
			return fmt.Errorf("unknown config %q", name)
		}
		cfg.VocabSize, cfg.RopeTheta, cfg.RMSNormEps = benchVocab, backbone.DefaultRopeTheta, backbone.DefaultRMSNormEps
		var es []*mlctx.Exec
		for i, b := range bs {
			ctx := randomContext(cfg) // the same weights; one context per backend
			if graphBF16[i] {
				ctx.SetParam(backbone.ParamBF16Products, true)
			}
			if *queryBlock > 0 {
				ctx.SetParam(backbone.ParamQueryBlock, *queryBlock)
			}
			e, err := mlctx.NewExec(b, ctx, func(ctx *mlctx.Context, ids *Node) *Node {
				return backbone.Forward(ctx.In("backbone"), cfg, ids, cfg.NumLayers)[0]
			})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			es = append(es, e)
		}
		for _, n := range toks {
			// Each precision in turn, twice, the minimum kept: the
			// precisions see the same load.
			ms := make([]float64, len(es))
			outs := make([][]float32, len(es))
			for round := 0; round < min(2, len(es)); round++ {
				for i, e := range es {
					t, out, err := timeGo(e, n, *reps)
					if err != nil {
						return fmt.Errorf("%s/%d %s: %w", name, n, precs[i], err)
					}
					if ms[i] == 0 || t < ms[i] {
						ms[i] = t
					}
					outs[i] = out
				}
			}
			goMs := ms[0]
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
			ortCol, ortRatio, ortDiff := "-", "-", "-"
			ortMs := 0.0
			if *ort {
				onnx, err := exportONNX(*python, script, *onnxDir, name, n)
				if err != nil {
					return fmt.Errorf("onnx export %s/%d: %w", name, n, err)
				}
				res, err := timeORT(*node, ortScript, *ortModules, onnx, *ortThreads, *reps)
				if err != nil {
					return fmt.Errorf("ort %s/%d: %w", name, n, err)
				}
				ortMs = res.Ms
				ortCol = fmt.Sprintf("%.1f", res.Ms)
				ortRatio = fmt.Sprintf("%.2f", goMs/res.Ms)
				ortDiff = fmt.Sprintf("%.1e", res.MaxAbsDiff)
			}
			extra := ""
			for i := 1; i < len(es); i++ {
				ratio := "-"
				if ortMs > 0 {
					ratio = fmt.Sprintf("%.2f", ms[i]/ortMs)
				}
				extra += fmt.Sprintf(" %10.1f %8s %9.1e", ms[i], ratio, maxAbsDiff(outs[0], outs[i]))
			}
			fmt.Printf("%-8s %6d %10.1f %22s %8s %10s %7s %9s%s %6s\n", name, n, goMs, torchCol, ratioCol, ortCol, ortRatio, ortDiff, extra, load1())
		}
		for _, e := range es {
			e.Finalize()
		}
	}
	fmt.Printf("load1=%s (end)\n", load1())
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
func timeGo(e *mlctx.Exec, n, reps int) (float64, []float32, error) {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32((i * 7919) % benchVocab)
	}
	in := tensors.FromFlatDataAndDimensions(ids, 1, n)
	best := 0.0
	var last []float32
	for i := -1; i < reps; i++ {
		start := time.Now()
		out, err := e.Exec(in)
		if err != nil {
			return 0, nil, err
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		if i == reps-1 {
			last = tensors.MustCopyFlatData[float32](out[0])
		}
		out[0].MustFinalizeAll()
		if i >= 0 && (best == 0 || ms < best) {
			best = ms
		}
	}
	return best, last, nil
}

// maxAbsDiff returns the largest |a[i] − b[i]| (NaN if any is NaN).
func maxAbsDiff(a, b []float32) float64 {
	worst := 0.0
	for i := range min(len(a), len(b)) {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if d > worst || math.IsNaN(d) {
			worst = d
		}
	}
	return worst
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
	if err := lastJSONLine(out, &res); err != nil {
		return 0, err
	}
	if res.Ms <= 0 {
		return 0, fmt.Errorf("no timing in output %q", out)
	}
	return res.Ms, nil
}

// Install hints named by the errors when a peer is missing.
const (
	torchInstall = "apt-get install -y python3-torch libopenblas0-pthread"
	ortInstall   = "npm install --ignore-scripts onnxruntime-node@1.30.0"
)

// defaultORTModules is $NODE_PATH (its first entry) or /tmp/ortpeer/node_modules.
func defaultORTModules() string {
	if p := os.Getenv("NODE_PATH"); p != "" {
		return filepath.SplitList(p)[0]
	}
	return "/tmp/ortpeer/node_modules"
}

// checkTorch fails with the install command when python cannot import torch.
func checkTorch(python string) error {
	out, err := exec.Command(python, "-c", "import torch").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s cannot import torch (%v: %s); install it with `%s`",
			python, err, strings.TrimSpace(string(out)), torchInstall)
	}
	return nil
}

// checkORT runs ort_qwen3.js --version and returns the onnxruntime-node
// version, failing with the install command when node or the package is missing.
func checkORT(node, script, modules string) (string, error) {
	if _, err := exec.LookPath(node); err != nil {
		return "", fmt.Errorf("node not found (%v): install Node.js (`apt-get install -y nodejs`), then `%s` in a directory and pass its node_modules with -ort-modules", err, ortInstall)
	}
	if _, err := os.Stat(filepath.Join(modules, "onnxruntime-node", "package.json")); err != nil {
		return "", fmt.Errorf("onnxruntime-node not found in %s: run `%s` in a directory (e.g. /tmp/ortpeer) and pass its node_modules with -ort-modules", modules, ortInstall)
	}
	out, err := exec.Command(node, script, "--modules", modules, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s --modules %s --version: %v: %s (install with `%s`, then -ort-modules DIR/node_modules)",
			node, script, modules, err, strings.TrimSpace(string(out)), ortInstall)
	}
	var res struct {
		Version string `json:"ort_version"`
	}
	if err := lastJSONLine(out, &res); err != nil {
		return "", err
	}
	return res.Version, nil
}

// onnxName is the cache file of one exported case; the script's digest in
// the name makes an edited torch_qwen3.py export afresh.
func onnxName(cfg string, tokens int, script []byte) string {
	sum := sha256.Sum256(script)
	return fmt.Sprintf("%s-%d-%s.onnx", cfg, tokens, hex.EncodeToString(sum[:4]))
}

// exportONNX returns the cached ONNX model of one case, exporting it (and its
// .ref.f32 PyTorch output) with torch_qwen3.py --export-onnx when absent.
func exportONNX(python, script, dir, cfg string, n int) (string, error) {
	src, err := os.ReadFile(script)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, onnxName(cfg, n, src))
	_, errModel := os.Stat(file)
	_, errRef := os.Stat(file + ".ref.f32")
	if errModel == nil && errRef == nil {
		return file, nil
	}
	args := []string{script, "--config", cfg, "--tokens", strconv.Itoa(n), "--attn", "eager", "--threads", "2", "--export-onnx", file}
	cmd := exec.Command(python, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s%s", python, strings.Join(args, " "), err, out, stderr.String())
	}
	return file, nil
}

// ortResult is the JSON line of ort_qwen3.js.
type ortResult struct {
	Ms         float64 `json:"ms"`
	MaxAbsDiff float64 `json:"max_abs_diff"`
	Threads    int     `json:"threads"`
	Version    string  `json:"ort_version"`
}

// timeORT runs ort_qwen3.js on one exported model.
func timeORT(node, script, modules, model string, threads, reps int) (ortResult, error) {
	args := []string{script, "--modules", modules, "--model", model, "--threads", strconv.Itoa(threads), "--reps", strconv.Itoa(reps)}
	cmd := exec.Command(node, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return ortResult{}, fmt.Errorf("%s %s: %w (output %s)", node, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	var res ortResult
	if err := lastJSONLine(out, &res); err != nil {
		return ortResult{}, err
	}
	if res.Ms <= 0 {
		return ortResult{}, fmt.Errorf("no timing in output %q", out)
	}
	return res, nil
}

// lastJSONLine decodes the last line of out that starts with "{" into v.
func lastJSONLine(out []byte, v any) error {
	var last string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "{") {
			last = line
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if last == "" {
		return fmt.Errorf("no JSON line in output %q", out)
	}
	if err := json.Unmarshal([]byte(last), v); err != nil {
		return fmt.Errorf("parse %q: %w", last, err)
	}
	return nil
}

// parseLoad1 returns the 1-minute load average of a /proc/loadavg line.
func parseLoad1(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, errors.New("empty loadavg")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, fmt.Errorf("loadavg %q: %w", s, err)
	}
	return v, nil
}

// load1 is the machine's 1-minute load average, "?" where unreadable.
func load1() string {
	v, err := parseLoad1(readFile("/proc/loadavg"))
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.2f", v)
}

// cpuInfo returns the first model name of a /proc/cpuinfo text and its
// AVX-512 flags ("no" without any, "?" without a flags line).
func cpuInfo(text string) (model, avx512 string) {
	model, avx512 = "unknown", "?"
	var flags []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch {
		case key == "model name" && model == "unknown":
			model = val
		case key == "flags" && avx512 == "?":
			for _, f := range strings.Fields(val) {
				if strings.HasPrefix(f, "avx512") {
					flags = append(flags, f)
				}
			}
			avx512 = "no"
			if len(flags) > 0 {
				avx512 = strings.Join(flags, ",")
			}
		}
	}
	return model, avx512
}

// readFile returns a file's text, "" where unreadable.
func readFile(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	return string(b)
}

// sourceDir is the directory of this program's sources when run from the
// repository root (go run ./bench/qwen3), else the working directory's bench/qwen3.
func sourceDir() string {
	if _, err := os.Stat("bench/torch_qwen3.py"); err == nil {
		return "bench/qwen3"
	}
	return "."
}
