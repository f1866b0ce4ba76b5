package fastcpu

import (
	"errors"
	"math"
	"sync/atomic"
	"unsafe"
)

// Reduced precision (bfloat16) products.
//
// With WithBF16, Gemm.MatMulBF16 rounds both operands to bfloat16 (round to
// nearest even, as VCVTNE2PS2BF16 does) and multiplies them with VDPBF16PS:
// each instruction adds, per float32 lane, the products of two bfloat16
// pairs to a float32 accumulator. The products of two bfloat16 values are
// exact in float32; what is lost is the operands' mantissa bits (8 instead
// of 24), a relative error up to 2⁻⁹ per operand. A bfloat16 weight (BF16
// checkpoints) is used as it is, without rounding. The backend uses it for
// products whose right operand is a graph parameter (the weights), never
// for attention (see Backend and docs/performance.md).
//
// Layouts: A is converted to rows of bfloat16 pairs (pair q of a row holds
// elements 2q and 2q+1; an odd depth gets a zero high half), rows padded to
// a multiple of 12 with zeros, and read in place by the kernel. B is packed
// in panels of 16 columns: for each pair step, 16 pairs (one ZMM). Depth is
// blocked by kcp pairs, as the float32 path blocks by kc.

// ErrNoBF16 is returned by New for the "bf16" configuration on a CPU (or a
// build) without the AVX512_BF16 kernel.
var ErrNoBF16 = errors.New("fastcpu: bfloat16 products need a CPU with AVX512_BF16 (VDPBF16PS) and an amd64 build without the purego tag")

// BF16Supported reports whether this CPU and build run the bfloat16 kernel.
func BF16Supported() bool { return hasBF16 }

const (
	kcp  = 128 // pairs per depth block (a 32-column B panel pair: 16 KiB)
	mrB  = 12  // rows of the bfloat16 micro-tile
	nrB  = 32  // columns of the bfloat16 micro-tile
	mcbB = 144 // rows of a task's A block (a multiple of mrB)
)

// WithBF16 makes MatMulBF16 available; the kernel is VDPBF16PS where the
// CPU has it, else a portable Go emulation (tests; the backend refuses bf16
// without the hardware).
func WithBF16() GemmOption { return func(g *Gemm) { g.bf16 = true } }

// BF16 reports whether g was created WithBF16.
func (g *Gemm) BF16() bool { return g.bf16 }

// bf16Job is one MatMulBF16 call: A converted, B packed, tasks of C.
type bf16Job struct {
	m, n, k, kp   int
	ap, bp        []uint32
	c             []float32
	rowStep       int
	colStep, cols int // column tasks per row block
	tasks         int
	asm           bool
}

// f32ToBF16 rounds x to bfloat16 as VCVTNE2PS2BF16 does: zeros and
// denormals give a zero of the same sign, NaNs a quiet NaN, everything else
// rounds to nearest even (overflowing to infinity).
func f32ToBF16(x float32) uint16 {
	u := math.Float32bits(x)
	switch {
	case u&0x7f800000 == 0:
		return uint16(u>>16) & 0x8000
	case u&0x7fffffff > 0x7f800000:
		return uint16(u>>16) | 0x40
	case u&0x7fffffff == 0x7f800000:
		return uint16(u >> 16)
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

func pairOf(lo, hi float32) uint32 { return uint32(f32ToBF16(lo)) | uint32(f32ToBF16(hi))<<16 }

// asF32 views 32-bit pairs as float32 values (bit patterns unchanged) for
// the float32 transposers, which move 32-bit elements.
func asF32(u []uint32) []float32 {
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&u[0])), len(u))
}

func (g *Gemm) getU32(n int) *[]uint32 {
	buf, _ := g.bf16bufs.Get().(*[]uint32)
	if buf == nil {
		buf = new([]uint32)
	}
	if cap(*buf) < n {
		*buf = make([]uint32, n)
	}
	*buf = (*buf)[:n]
	return buf
}

// MatMulBF16 is MatMul with bfloat16 operands and float32 accumulation (see
// the comment at the top of this file). g must have been created WithBF16.
func (g *Gemm) MatMulBF16(batch, m, n, k int, a, b Strided, c []float32) {
	if !g.bf16 {
		panic("fastcpu: MatMulBF16 on a Gemm created without WithBF16")
	}
	if batch == 0 || m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(c[:batch*m*n])
		return
	}
	workers := g.workers
	if 2*m*n*k < 1<<17 {
		workers = 1
	}
	kp := (k + 1) / 2
	mpad, npad := roundUp(m, mrB), roundUp(n, nrB)
	abuf, bbuf := g.getU32(mpad*kp), g.getU32(npad*kp)
	defer g.bf16bufs.Put(abuf)
	defer g.bf16bufs.Put(bbuf)
	j := &bf16Job{m: m, n: n, k: k, kp: kp, ap: *abuf, bp: *bbuf,
		asm: g.level >= isaAVX512 && hasBF16}
	// Tasks: blocks of rows (at most mcbB), and of columns when the rows
	// alone give fewer than two tasks per worker.
	j.rowStep = min(mcbB, roundUp((mpad+2*workers-1)/(2*workers), mrB))
	rowBlocks := (mpad + j.rowStep - 1) / j.rowStep
	colParts := max(1, (2*workers+rowBlocks-1)/rowBlocks)
	j.colStep = roundUp((npad+colParts-1)/colParts, nrB)
	j.cols = (npad + j.colStep - 1) / j.colStep
	j.tasks = rowBlocks * j.cols
	for bi := 0; bi < batch; bi++ {
		j.c = c[bi*m*n : (bi+1)*m*n]
		// Convert A and pack B, all workers together.
		panels := npad / 16
		depthBlocks := (kp + kcp - 1) / kcp
		rowChunks := (mpad + mrB*4 - 1) / (mrB * 4)
		prep := rowChunks + panels*depthBlocks
		g.parallel(workers, prep, func(t int, tmp *[]uint32) {
			if t < rowChunks {
				r0 := t * mrB * 4
				convertA(j.ap, a, bi, r0, min(mpad, r0+mrB*4), m, k, kp, j.asm)
				return
			}
			t -= rowChunks
			pc, col := t/panels*kcp, t%panels*16
			kcb := min(kcp, kp-pc)
			packBPairs(j.bp[pc*npad+col*kcb:pc*npad+(col+16)*kcb], b, bi, pc, kcb, col, min(16, n-col), k, tmp, j.asm)
		})
		g.parallel(workers, j.tasks, func(t int, _ *[]uint32) { g.bf16Task(j, t, npad) })
	}
}

// parallel runs f(0..count-1) on up to workers goroutines (the caller's
// included); each goroutine gets its own scratch slice (pooled).
func (g *Gemm) parallel(workers, count int, f func(t int, tmp *[]uint32)) {
	var next atomic.Int64
	run := func() {
		tmp, _ := g.bf16tmp.Get().(*[]uint32)
		if tmp == nil {
			tmp = new([]uint32)
		}
		defer g.bf16tmp.Put(tmp)
		for {
			t := int(next.Add(1)) - 1
			if t >= count {
				return
			}
			f(t, tmp)
		}
	}
	g.team.run(min(workers, count), run)
}

// bf16Task computes task t of j: a block of rows × a block of columns of C,
// over the whole depth.
func (g *Gemm) bf16Task(j *bf16Job, t, npad int) {
	rb, cb := t/j.cols, t%j.cols
	i0, c0 := rb*j.rowStep, cb*j.colStep
	i1 := min(roundUp(j.m, mrB), i0+j.rowStep)
	c1 := min(npad, c0+j.colStep)
	var tile [mrB * nrB]float32
	for pc := 0; pc < j.kp; pc += kcp {
		kcb := min(kcp, j.kp-pc)
		load := pc > 0
		for jr := c0; jr < c1; jr += nrB {
			bp := j.bp[pc*npad+jr*kcb : pc*npad+(jr+nrB)*kcb]
			for ir := i0; ir < i1; ir += mrB {
				ap := j.ap[ir*j.kp+pc:]
				if ir+mrB <= j.m && jr+nrB <= j.n {
					kernelBF16(kcb, ap, j.kp, bp, j.c[ir*j.n+jr:], j.n, load, j.asm)
					continue
				}
				kernelBF16(kcb, ap, j.kp, bp, tile[:], nrB, false, j.asm)
				putAside(j.c[ir*j.n+jr:], j.n, tile[:], nrB, min(mrB, j.m-ir), min(nrB, j.n-jr), load)
			}
		}
	}
}

// convertA writes rows [r0,r1) of A[bi] (m×k, rows from m on are zero) as
// bfloat16 pairs into dst (row stride kp).
func convertA(dst []uint32, a Strided, bi, r0, r1, m, k, kp int, asm bool) {
	for i := r0; i < r1; i++ {
		row := dst[i*kp : (i+1)*kp]
		if i >= m {
			clear(row)
			continue
		}
		base := bi*a.BatchStride + i*a.RowStride
		done := 0
		if a.ColStride == 1 && a.BF16 == nil {
			src := a.Data[base : base+k]
			if asm {
				done = cvtPairsSIMD(row, src)
			}
			for q := done; q < k/2; q++ {
				row[q] = pairOf(src[2*q], src[2*q+1])
			}
			if k%2 == 1 {
				row[kp-1] = pairOf(src[k-1], 0)
			}
			continue
		}
		for q := 0; q < kp; q++ {
			lo := a.elem(base + 2*q*a.ColStride)
			var hi float32
			if 2*q+1 < k {
				hi = a.elem(base + (2*q+1)*a.ColStride)
			}
			row[q] = pairOf(lo, hi)
		}
	}
}

// packBPairs packs pair steps [p0,p0+depth) × columns [j0,j0+cols) of B[bi]
// (k×n, cols ≤ 16) into one panel of 16 columns: for each step, 16 pairs
// (columns past cols are zero). A bfloat16 B is used as it is; a float32 B
// is rounded. B stored as the rows of a weight matrix (RowStride 1) is
// converted row by row into tmp and transposed with the float32 transposers
// (they move 32-bit elements: one pair each); bfloat16 weights of even
// depth are transposed in place.
func packBPairs(panel []uint32, b Strided, bi, p0, depth, j0, cols, k int, tmp *[]uint32, asm bool) {
	base := bi*b.BatchStride + j0*b.ColStride
	if b.RowStride == 1 && cols == 16 && k%2 == 0 {
		if b.BF16 != nil && b.ColStride%2 == 0 {
			src := asF32(unsafe.Slice((*uint32)(unsafe.Pointer(&b.BF16[0])), len(b.BF16)/2))
			off, ld := base/2+p0, b.ColStride/2
			done := 0
			if asm {
				done = packB16TSIMD(asF32(panel), src, off, ld, depth, true)
			}
			for j := 0; j < 16; j++ {
				for q := done; q < depth; q++ {
					panel[q*16+j] = math.Float32bits(src[off+j*ld+q])
				}
			}
			return
		}
		if b.BF16 == nil {
			if cap(*tmp) < 16*depth {
				*tmp = make([]uint32, 16*depth)
			}
			t := (*tmp)[:16*depth]
			for j := 0; j < 16; j++ {
				src := b.Data[base+j*b.ColStride+2*p0 : base+j*b.ColStride+2*(p0+depth)]
				row := t[j*depth : (j+1)*depth]
				done := 0
				if asm {
					done = cvtPairsSIMD(row, src)
				}
				for q := done; q < depth; q++ {
					row[q] = pairOf(src[2*q], src[2*q+1])
				}
			}
			done := 0
			if asm {
				done = packB16TSIMD(asF32(panel), asF32(t), 0, depth, depth, true)
			}
			for j := 0; j < 16; j++ {
				for q := done; q < depth; q++ {
					panel[q*16+j] = t[j*depth+q]
				}
			}
			return
		}
	}
	for q := 0; q < depth; q++ {
		p := 2 * (p0 + q)
		for j := 0; j < 16; j++ {
			if j >= cols {
				panel[q*16+j] = 0
				continue
			}
			o := base + p*b.RowStride + j*b.ColStride
			if b.BF16 != nil {
				lo := uint32(b.BF16[o])
				var hi uint32
				if p+1 < k {
					hi = uint32(b.BF16[o+b.RowStride])
				}
				panel[q*16+j] = lo | hi<<16
				continue
			}
			var hi float32
			if p+1 < k {
				hi = b.Data[o+b.RowStride]
			}
			panel[q*16+j] = pairOf(b.Data[o], hi)
		}
	}
}

// kernelBF16 runs the 12×32 bfloat16 micro-kernel: C (row stride ldc) =
// (load ? C : 0) + A·B over kp pair steps, A's 12 rows at a + r·lda, B two
// consecutive 16-column panels.
func kernelBF16(kp int, a []uint32, lda int, b []uint32, c []float32, ldc int, load, asm bool) {
	_ = a[(mrB-1)*lda+kp-1]
	_ = b[2*16*kp-1]
	_ = c[(mrB-1)*ldc+nrB-1]
	if asm {
		kernel12x32BF16(kp, &a[0], lda, &b[0], &c[0], ldc, load)
		return
	}
	kernelBF16Go(kp, a, lda, b, c, ldc, load)
}

// kernelBF16Go is the portable kernel: the same products (exact in
// float32) added low half first, then high half, to float32 accumulators
// (VDPBF16PS's order as Intel documents it may differ in the last bit).
func kernelBF16Go(kp int, a []uint32, lda int, b []uint32, c []float32, ldc int, load bool) {
	var acc [mrB][nrB]float32
	for q := 0; q < kp; q++ {
		b0 := b[q*16 : q*16+16]
		b1 := b[16*kp+q*16 : 16*kp+q*16+16]
		for r := 0; r < mrB; r++ {
			av := a[r*lda+q]
			alo, ahi := bf16ToF32(uint16(av)), bf16ToF32(uint16(av>>16))
			row := &acc[r]
			for j, bv := range b0 {
				row[j] += alo * bf16ToF32(uint16(bv))
				row[j] += ahi * bf16ToF32(uint16(bv>>16))
			}
			for j, bv := range b1 {
				row[16+j] += alo * bf16ToF32(uint16(bv))
				row[16+j] += ahi * bf16ToF32(uint16(bv>>16))
			}
		}
	}
	for r := 0; r < mrB; r++ {
		dst := c[r*ldc : r*ldc+nrB]
		for j := range dst {
			if load {
				dst[j] += acc[r][j]
			} else {
				dst[j] = acc[r][j]
			}
		}
	}
}
