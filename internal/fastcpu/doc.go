// Package fastcpu makes the models of this module fast on CPUs in pure Go
// (Go assembly, no cgo): float32 kernels and a GoMLX backend, "fastgo", that
// uses them.
//
// Kernels:
//   - Gemm: batched float32 matrix products of any strides, blocked for the
//     caches (BLIS-style packing of A and B panels, with transposing
//     packers) around a 12×32 AVX-512 micro-kernel (which can also read a
//     row-major B in place) where the CPU has AVX-512 and a 6×16 AVX2+FMA
//     one elsewhere, split over the cores; float32 accumulation, one FMA
//     chain per element in the same order on every path. A single product
//     split by rows packs B once, shared by the workers.
//   - Gemm.MatMulBF16 (Gemms created WithBF16; the backend's "bf16"
//     configuration, for the products of weights): operands rounded to
//     bfloat16, a 12×32 VDPBF16PS micro-kernel adds the products in float32
//     (AVX512_BF16 only; gemmbf16.go). A bfloat16 weight is used as stored.
//   - Row kernels for softmax (max, exp, scale) and the logistic function
//     (AVX2, and AVX-512 for the softmax; Cephes-style polynomial exp with
//     relative error about 1e-7).
//
// CPU features are detected at run time with golang.org/x/sys/cpu; without
// AVX2+FMA, on other architectures or with the purego build tag, portable Go
// kernels run instead.
//
// The backend (New, registered with GoMLX as BackendName) records the ops of
// a graph and, at Compile, fuses masked-softmax attention into one blocked
// op (skipping keys past each row's last unmasked one, which halves causal
// attention) and the RMSNorm, rotary and SwiGLU chains into one pass each
// (rowops.go), folds parameter-free subgraphs into constants, and runs
// float32 DotGeneral, fused attention, large float32 elementwise ops and
// row gathers (embedding lookups) natively; every other op runs in
// segments compiled by GoMLX's pure Go backend (simplego). See
// docs/performance.md for measurements.
package fastcpu
