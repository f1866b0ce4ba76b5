package fastcpu

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

//go:generate go run ./internal/genops
//go:generate go run ./internal/genkernel
//go:generate go run ./internal/genbf16

// BackendName is the name the fastgo backend is registered under with GoMLX
// (backends.NewWithConfig("fastgo")).
const BackendName = "fastgo"

func init() {
	backends.Register(BackendName, func(config string) (backends.Backend, error) { return New(config) })
}

// Backend is a GoMLX backend that runs float32 DotGeneral with this
// package's blocked SIMD matrix product and every other op with GoMLX's pure
// Go backend (simplego). A graph is cut at each float32 DotGeneral into
// segments; each segment is compiled and run by simplego, and buffers pass
// between segments and products without copies (both live in Go memory).
// Buffers are simplego buffers: the data interface is simplego's.
type Backend struct {
	backends.Backend // the simplego backend: buffers, capabilities, devices
	gemm             *Gemm
	fusedAttention   atomic.Int64
	nativeProducts   atomic.Int64
	nativeElemwise   atomic.Int64
	fusedRowOps      atomic.Int64
	bf16Operands     atomic.Int64
	constantBytes    atomic.Int64
	nativeGathers    atomic.Int64
	bf16Products     atomic.Int64
}

// Stats counts what this backend's compilations lowered natively.
type Stats struct {
	FusedAttention int64 // masked-softmax attention blocks fused
	NativeProducts int64 // float32 DotGenerals run on Gemm (outside fusions)
	NativeElemwise int64 // float32 elementwise ops and last-axis sums run natively
	FusedRowOps    int64 // RMSNorm, rotary and SwiGLU chains fused into one pass (see rowops.go)
	BF16Operands   int64 // products reading a bfloat16 weight without converting it first
	ConstantBytes  int64 // bytes of folded constants the compiled executables keep
	NativeGathers  int64 // row gathers (embedding lookups) copied row by row
	BF16Products   int64 // weight products run in bfloat16 (the "bf16" configuration)
}

// Stats returns the counts over all graphs compiled by b so far.
func (b *Backend) Stats() Stats {
	return Stats{FusedAttention: b.fusedAttention.Load(), NativeProducts: b.nativeProducts.Load(),
		NativeElemwise: b.nativeElemwise.Load(), FusedRowOps: b.fusedRowOps.Load(),
		BF16Operands: b.bf16Operands.Load(), ConstantBytes: b.constantBytes.Load(),
		NativeGathers: b.nativeGathers.Load(), BF16Products: b.bf16Products.Load()}
}

var _ backends.Backend = (*Backend)(nil)

// New returns a fastgo backend. config is a comma-separated list: "purego"
// selects the portable kernels even where AVX2+FMA is available, "avx2" the
// AVX2 ones even where AVX-512 is (tests and benchmarks compare them), "bf16"
// runs the products of weights (DotGenerals whose right operand is a graph
// parameter) with bfloat16 operands and float32 accumulation (VDPBF16PS; an
// error wrapping ErrNoBF16 on CPUs without AVX512_BF16; attention and every
// other op stay float32; see gemmbf16.go); the other
// options go to simplego (none means "ops_sequential", as the library's Go
// backend uses: simplego's parallel op scheduler races in v0.26).
func New(config string) (*Backend, error) {
	var opts []GemmOption
	var rest []string
	bf16 := false
	for _, o := range strings.Split(config, ",") {
		switch o = strings.TrimSpace(o); o {
		case "":
		case "purego":
			opts = append(opts, WithPureGo())
		case "avx2":
			opts = append(opts, WithoutAVX512())
		case "bf16":
			bf16 = true
		default:
			rest = append(rest, o)
		}
	}
	if bf16 {
		g := NewGemm(opts...)
		if !hasBF16 || g.level < isaAVX512 {
			return nil, fmt.Errorf("%w (config %q)", ErrNoBF16, config)
		}
		opts = append(opts, WithBF16())
	}
	if len(rest) == 0 {
		rest = []string{"ops_sequential"}
	}
	inner, err := simplego.New(strings.Join(rest, ","))
	if err != nil {
		return nil, fmt.Errorf("fastgo: simplego backend: %w", err)
	}
	return &Backend{Backend: inner, gemm: NewGemm(opts...)}, nil
}

// Kernel names the matrix product micro-kernel the backend runs: "avx512",
// "avx2" or "go" (see Gemm.Kernel).
func (b *Backend) Kernel() string { return b.gemm.Kernel() }

// Precision names the arithmetic of the weight products: "bf16" (the "bf16"
// configuration: bfloat16 operands, float32 accumulation) or "float32".
func (b *Backend) Precision() string {
	if b.gemm.bf16 {
		return "bf16"
	}
	return "float32"
}

// Name implements backends.Backend.
func (b *Backend) Name() string { return BackendName }

// String implements backends.Backend.
func (b *Backend) String() string { return BackendName }

// Description implements backends.Backend.
func (b *Backend) Description() string {
	kernel := "pure Go"
	if b.gemm.SIMD() {
		kernel = "AVX2+FMA"
	}
	if b.gemm.bf16 {
		return fmt.Sprintf("fastgo: simplego with AVX512_BF16 bfloat16 weight products (float32 accumulation) and %s float32 products (%d workers)", kernel, b.gemm.workers)
	}
	return fmt.Sprintf("fastgo: simplego with %s float32 matrix products (%d workers)", kernel, b.gemm.workers)
}

// Builder implements backends.Backend.
func (b *Backend) Builder(name string) backends.Builder {
	return &Builder{name: name, backend: b}
}
