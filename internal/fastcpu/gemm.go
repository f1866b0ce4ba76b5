package fastcpu

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// maxSharedB bounds the float32 size of a B packed whole and shared by the
// workers (16 MB: a Qwen3-0.6B MLP matrix is 3M values); larger ones are
// packed block by block per task, as before sharing.
const maxSharedB = 1 << 22

// Micro-kernel tile and cache blocking sizes.
const (
	mr = 6    // rows of the micro-tile (one broadcast each)
	nr = 16   // columns of the micro-tile (two 8-lane vectors)
	kc = 256  // depth of a packed panel (B micro-panel kc×nr = 16 KiB, in L1)
	mc = 144  // rows of a packed A block (mc×kc = 144 KiB, in L2)
	nc = 3072 // columns of a packed B block (kc×nc = 3 MiB)
)

// Strided describes a batch of matrices stored in a flat slice: element
// (b, i, j) is Data[b*BatchStride + i*RowStride + j*ColStride]. A B operand
// (MatMul's b) may instead be stored as bfloat16 bit patterns in BF16 (Data
// nil): packing widens it to float32, exactly, so products keep float32
// arithmetic while the matrix takes half the memory.
type Strided struct {
	Data                              []float32
	BF16                              []uint16
	BatchStride, RowStride, ColStride int
}

// at returns element (b, i, j).
func (s Strided) at(b, i, j int) float32 {
	return s.elem(b*s.BatchStride + i*s.RowStride + j*s.ColStride)
}

// elem returns the element at flat offset o, widened from bfloat16 if need be.
func (s Strided) elem(o int) float32 {
	if s.BF16 != nil {
		return bf16ToF32(s.BF16[o])
	}
	return s.Data[o]
}

func bf16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Gemm multiplies batches of float32 matrices. It is safe for concurrent use;
// packing buffers are pooled, so steady-state calls do not allocate them.
// The zero value is not usable: create one with NewGemm.
type Gemm struct {
	workers  int
	level    isa       // the kernels' instruction set
	bufs     sync.Pool // *workBuf
	jobs     sync.Pool // *job
	packed   sync.Pool // *[]float32: B packed once for all workers
	bf16     bool      // MatMulBF16 allowed (WithBF16)
	bf16bufs sync.Pool // *[]uint32: A and B as bfloat16 pairs
	bf16tmp  sync.Pool // *[]uint32: a worker's scratch (float32 weight rows converted)
	team     *team     // the workers of parallel parts (shared by the backend's operations)
}

type workBuf struct {
	a, b []float32
	tile [mr * nr]float32
	wide [4 * mr * nr]float32 // a 12×32 edge tile of the AVX-512 kernel
}

// GemmOption configures NewGemm.
type GemmOption func(*Gemm)

// WithWorkers sets the number of goroutines one product may use (default
// GOMAXPROCS at creation).
func WithWorkers(n int) GemmOption {
	return func(g *Gemm) {
		if n > 0 {
			g.workers = n
		}
	}
}

// WithPureGo forces the pure Go micro-kernel even where the assembly one
// could run (tests compare the two).
func WithPureGo() GemmOption { return func(g *Gemm) { g.level = isaGo } }

// WithoutAVX512 keeps to the AVX2 micro-kernel on a CPU with AVX-512
// (tests compare the two).
func WithoutAVX512() GemmOption { return func(g *Gemm) { g.level = min(g.level, isaAVX2) } }

// NewGemm returns a Gemm that uses the SIMD micro-kernel when this CPU
// supports it.
func NewGemm(opts ...GemmOption) *Gemm {
	g := &Gemm{workers: runtime.GOMAXPROCS(0), level: hostISA()}
	for _, o := range opts {
		o(g)
	}
	g.team = &team{spinners: 2 * g.workers}
	g.bufs.New = func() any {
		return &workBuf{a: make([]float32, mc*kc), b: make([]float32, kc*nc)}
	}
	return g
}

// serial returns a Gemm with g's kernels and one worker (for products run
// inside work that is already split over the cores).
func (g *Gemm) serial() *Gemm {
	s := NewGemm(WithWorkers(1))
	s.level, s.bf16 = g.level, g.bf16
	return s
}

// SIMD reports whether g runs the assembly micro-kernel.
func (g *Gemm) SIMD() bool { return g.level >= isaAVX2 }

// isa is an instruction set level of the kernels.
type isa uint8

const (
	isaGo isa = iota
	isaAVX2
	isaAVX512
)

// hostISA returns the best level this CPU runs.
func hostISA() isa {
	switch {
	case hasAVX512:
		return isaAVX512
	case hasSIMD:
		return isaAVX2
	}
	return isaGo
}

// String names the level: "avx512", "avx2" or "go".
func (l isa) String() string { return [...]string{"go", "avx2", "avx512"}[l] }

// Kernel names the micro-kernel g runs: "avx512" (12×32 tiles, with the
// AVX2 one on the edges), "avx2" or "go".
func (g *Gemm) Kernel() string { return g.level.String() }

// job is one MatMul call shared by its workers (pooled: a call allocates
// nothing but the goroutines it starts).
type job struct {
	batch, m, n, k int
	a, b           Strided
	c              []float32
	parts, step    int  // tasks per batch entry and their width
	splitN         bool // parts split columns (else rows)
	// pb holds all of B packed (nil: each task packs its own): the panels
	// of depth block pc start at pb[pc*npad], panel jr at +jr*kcb.
	pb   []float32
	npad int
	next atomic.Int64
}

// MatMul computes C[b] = A[b]·B[b] for b < batch, where A[b] is m×k, B[b] is
// k×n (both any strides, see Strided) and C is dense row-major
// [batch, m, n]. C is overwritten. Slices must be large enough for the
// described elements; the caller checks shapes.
func (g *Gemm) MatMul(batch, m, n, k int, a, b Strided, c []float32) {
	if batch == 0 || m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(c[:batch*m*n])
		return
	}
	workers := g.workers
	if flops := 2 * batch * m * n * k; flops < 1<<17 {
		workers = 1
	}
	j, _ := g.jobs.Get().(*job)
	if j == nil {
		j = new(job)
	}
	j.batch, j.m, j.n, j.k, j.a, j.b, j.c = batch, m, n, k, a, b, c
	j.parts, j.splitN, j.step = 1, false, m
	var pbuf *[]float32
	switch {
	case batch == 1 && workers > 1 && n >= m && n >= 4*nr*workers:
		// A product at least as wide as it is tall (a projection of 512
		// tokens): each task takes a slice of the columns and all the
		// rows, so its block of B is used by every row while in cache.
		// Sharing B and splitting the rows made both workers stream all
		// of B for a few rows each: 2 workers ran at 1.4–1.6× one worker,
		// against 1.75–1.9× this way (BenchmarkMatMul, 512×N×K shapes).
		j.parts = 2 * workers
		j.splitN, j.step = true, roundUp((n+j.parts-1)/j.parts, 2*nr)
		j.parts = (n + j.step - 1) / j.step
	case batch == 1 && workers > 1 && m >= 2*mr*workers && roundUp(n, nr)*k <= maxSharedB:
		// One product split by rows: every task would pack all of B, so the
		// workers pack it once, together, before the rows are shared out.
		pbuf = g.packB(j, workers)
		j.parts = workers
		if m >= 4*mc*workers/3 {
			j.parts = 2 * workers // smaller tasks balance better
		}
		j.step = roundUp((m+j.parts-1)/j.parts, mr)
		j.parts = (m + j.step - 1) / j.step
	case batch < workers:
		j.parts = (workers + batch - 1) / batch
		if n >= m {
			j.splitN, j.step = true, roundUp((n+j.parts-1)/j.parts, nr)
			j.parts = (n + j.step - 1) / j.step
		} else {
			j.step = roundUp((m+j.parts-1)/j.parts, mr)
			j.parts = (m + j.step - 1) / j.step
		}
	}
	j.next.Store(0)
	workers = min(workers, batch*j.parts)
	g.team.run(workers, func() { g.work(j) })
	if pbuf != nil {
		g.packed.Put(pbuf)
	}
	j.a, j.b, j.c, j.pb = Strided{}, Strided{}, nil, nil
	g.jobs.Put(j)
}

// packB packs all of j's B (batch 1) into a pooled buffer with the given
// number of workers, panel by panel, and sets j.pb; the caller returns the
// buffer to g.packed.
func (g *Gemm) packB(j *job, workers int) *[]float32 {
	npad := roundUp(j.n, nr)
	buf, _ := g.packed.Get().(*[]float32)
	if buf == nil {
		buf = new([]float32)
	}
	if cap(*buf) < npad*j.k {
		*buf = make([]float32, npad*j.k)
	}
	pb := (*buf)[:npad*j.k]
	panels := npad / nr
	total := panels * ((j.k + kc - 1) / kc)
	var next atomic.Int64
	pack := func() {
		for {
			t := int(next.Add(1)) - 1
			if t >= total {
				return
			}
			pc, jr := t/panels*kc, t%panels*nr
			kcb := min(kc, j.k-pc)
			packB(pb[pc*npad+jr*kcb:], j.b, 0, pc, kcb, jr, min(nr, j.n-jr), g.level)
		}
	}
	g.team.run(workers, pack)
	j.pb, j.npad = pb, npad
	return buf
}

// work runs tasks of j until none is left.
func (g *Gemm) work(j *job) {
	w := g.bufs.Get().(*workBuf)
	total := j.batch * j.parts
	for {
		t := int(j.next.Add(1)) - 1
		if t >= total {
			break
		}
		bi, part := t/j.parts, t%j.parts
		tk := task{bi, 0, j.m, 0, j.n}
		if j.parts > 1 {
			lo := part * j.step
			if j.splitN {
				tk.j0, tk.j1 = lo, min(j.n, lo+j.step)
			} else {
				tk.i0, tk.i1 = lo, min(j.m, lo+j.step)
			}
		}
		g.block(w, tk, j)
	}
	g.bufs.Put(w)
}

// task is a block of one batch entry: rows [i0,i1) × columns [j0,j1) of C.
type task struct{ b, i0, i1, j0, j1 int }

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// block computes one task with the packed loops (BLIS order jc, pc, ic).
func (g *Gemm) block(w *workBuf, t task, j *job) {
	m, n, k, a, b := j.m, j.n, j.k, j.a, j.b
	cb := j.c[t.b*m*n : (t.b+1)*m*n]
	wide := g.level == isaAVX512
	direct := wide && j.pb == nil && b.BF16 == nil && b.ColStride == 1
	for jc := t.j0; jc < t.j1; jc += nc {
		ncb := min(nc, t.j1-jc)
		for pc := 0; pc < k; pc += kc {
			kcb := min(kc, k-pc)
			bpk := w.b
			// A row-major float32 B is read in place by the AVX-512
			// kernel (packing it would only copy it); the panels the
			// edge tiles need are packed when the first one runs.
			packed := !direct
			if j.pb != nil {
				bpk = j.pb[pc*j.npad+jc*kcb:]
			} else if !direct {
				packB(w.b, b, t.b, pc, kcb, jc, ncb, g.level)
			}
			bRow := t.b*b.BatchStride + pc*b.RowStride + jc // B's (pc, jc) when direct
			load := pc > 0
			for ic := t.i0; ic < t.i1; ic += mc {
				mcb := min(mc, t.i1-ic)
				packA(w.a, a, t.b, ic, mcb, pc, kcb, g.SIMD())
				// tile computes the mr×nr tile at (ir, jr) of the block.
				tile := func(ir, jr int) {
					if !packed {
						packB(w.b, b, t.b, pc, kcb, jc, ncb, g.level)
						packed = true
					}
					bp := bpk[jr*kcb : (jr+nr)*kcb]
					nn := min(nr, ncb-jr)
					ap := w.a[ir*kcb : (ir+mr)*kcb]
					mm := min(mr, mcb-ir)
					off := (ic+ir)*n + jc + jr
					if mm == mr && nn == nr {
						g.kernel(kcb, ap, bp, cb[off:], n, load)
						return
					}
					// Edge tile: compute the full tile aside, copy what fits.
					g.kernel(kcb, ap, bp, w.tile[:], nr, false)
					putAside(cb[off:], n, w.tile[:], nr, mm, nn, load)
				}
				// wideAside runs the AVX-512 kernel on the 12×32 tile at
				// (ir, jr) into w.wide and adds or copies its first rows×cols
				// values into C (edge tiles; B in place or packed).
				wideAside := func(ir, jr, rows, cols int) {
					ap := w.a[ir*kcb : (ir+2*mr)*kcb]
					if direct {
						kernelWideB(kcb, ap, b.Data[bRow+jr:], b.RowStride, w.wide[:], 2*nr, false)
					} else {
						kernelWide(kcb, ap, bpk[jr*kcb:(jr+2*nr)*kcb], w.wide[:], 2*nr, false)
					}
					putAside(cb[(ic+ir)*n+jc+jr:], n, w.wide[:], 2*nr, rows, cols, load)
				}
				for jr := 0; jr < ncb; jr += nr {
					if direct && jr+2*nr > ncb && len(b.Data)-(bRow+jr) >= (kcb-1)*b.RowStride+2*nr {
						// The last columns of an in-place B: B's rows go on
						// past them (e.g. Kᵀ's keys past a block's last
						// one), so the wide kernel reads 32 columns and
						// keeps the ones that exist, where four narrow
						// tiles would first pack the whole block of B.
						// Rows past mcb (a stale second A panel) are
						// computed and dropped.
						for ir := 0; ir < mcb; ir += 2 * mr {
							wideAside(ir, jr, min(2*mr, mcb-ir), ncb-jr)
						}
						break
					}
					if !wide || jr+2*nr > ncb {
						for ir := 0; ir < mcb; ir += mr {
							tile(ir, jr)
						}
						continue
					}
					// Two full panels side by side: 2mr×2nr tiles with
					// the AVX-512 kernel (consecutive panels are adjacent
					// in the packed buffers); rows left over run as
					// mr×nr tiles.
					ir := 0
					for ; ir+2*mr <= mcb; ir += 2 * mr {
						ap, cp := w.a[ir*kcb:(ir+2*mr)*kcb], cb[(ic+ir)*n+jc+jr:]
						if direct {
							kernelWideB(kcb, ap, b.Data[bRow+jr:], b.RowStride, cp, n, load)
							continue
						}
						kernelWide(kcb, ap, bpk[jr*kcb:(jr+2*nr)*kcb], cp, n, load)
					}
					if mcb-ir > mr || direct && ir < mcb {
						// Rows left over fill more than one panel: the
						// wide kernel on both (packA zero-fills the
						// partial one) costs half of four narrow tiles.
						// With B in place, fewer rows go the same way
						// (the same cost as two narrow tiles, and no
						// packing of B); a stale second panel's rows are
						// computed and dropped.
						wideAside(ir, jr, mcb-ir, 2*nr)
						ir = mcb
					}
					for ; ir < mcb; ir += mr {
						tile(ir, jr)
						tile(ir, jr+nr)
					}
					jr += nr
				}
			}
		}
	}
}

// putAside adds (load) or copies the first rows×cols values of a tile
// computed aside (row stride lds) into c (row stride ldc).
func putAside(c []float32, ldc int, tile []float32, lds, rows, cols int, load bool) {
	for i := 0; i < rows; i++ {
		dst, src := c[i*ldc:i*ldc+cols], tile[i*lds:i*lds+cols]
		if !load {
			copy(dst, src)
			continue
		}
		for j := range dst {
			dst[j] += src[j]
		}
	}
}

func (g *Gemm) kernel(k int, a, b, c []float32, ldc int, load bool) {
	if g.SIMD() {
		kernelSIMD(k, a, b, c, ldc, load)
		return
	}
	kernelGo(k, a, b, c, ldc, load)
}

// packA copies rows [i0,i0+rows) × depth [p0,p0+depth) of A[bi] into dst as
// micro-panels of mr rows: panel r holds, for each p, its mr row values.
// Rows past the end are zero. With simd, full panels of a row-major A are
// packed by AVX2 transposes up to the last multiple of 8 steps; the loops
// below do the rest.
func packA(dst []float32, a Strided, bi, i0, rows, p0, depth int, simd bool) {
	base := bi*a.BatchStride + i0*a.RowStride + p0*a.ColStride
	for r := 0; r < rows; r += mr {
		panel := dst[r*depth : (r+mr)*depth]
		mm := min(mr, rows-r)
		done := 0
		if simd && mm == mr && a.ColStride == 1 {
			done = packA6SIMD(panel, a.Data, base+r*a.RowStride, a.RowStride, depth)
		}
		for i := 0; i < mm; i++ {
			src := base + (r+i)*a.RowStride
			if a.ColStride == 1 {
				row := a.Data[src+done : src+depth]
				for p, v := range row {
					panel[(done+p)*mr+i] = v
				}
			} else {
				for p := 0; p < depth; p++ {
					panel[p*mr+i] = a.Data[src+p*a.ColStride]
				}
			}
		}
		for i := mm; i < mr; i++ {
			for p := 0; p < depth; p++ {
				panel[p*mr+i] = 0
			}
		}
	}
}

// packB copies depth [p0,p0+depth) × columns [j0,j0+cols) of B[bi] into dst
// as micro-panels of nr columns: panel c holds, for each p, its nr column
// values. Columns past the end are zero. B may be bfloat16 (b.BF16), widened
// on the way. With simd, full panels of B stored as the rows of a weight
// matrix (RowStride 1) are packed by AVX2 transposes up to the last multiple
// of 8 steps; the loops below do the rest.
func packB(dst []float32, b Strided, bi, p0, depth, j0, cols int, level isa) {
	simd, wide := level >= isaAVX2, level >= isaAVX512
	base := bi*b.BatchStride + p0*b.RowStride + j0*b.ColStride
	half := b.BF16 != nil
	for c := 0; c < cols; c += nr {
		panel := dst[c*depth : (c+nr)*depth]
		nn := min(nr, cols-c)
		switch {
		case b.ColStride == 1 && nn == nr && !half:
			for p := 0; p < depth; p++ {
				src := base + p*b.RowStride + c
				copy(panel[p*nr:p*nr+nr], b.Data[src:src+nr])
			}
		case b.RowStride == 1:
			off := base + c*b.ColStride
			done := 0
			if simd && nn == nr && half {
				done = packB16TBF16SIMD(panel, b.BF16, off, b.ColStride, depth, wide)
			} else if simd && nn == nr {
				done = packB16TSIMD(panel, b.Data, off, b.ColStride, depth, wide)
			}
			for j := 0; j < nn; j++ {
				src := off + j*b.ColStride
				if half {
					for p, h := range b.BF16[src+done : src+depth] {
						panel[(done+p)*nr+j] = bf16ToF32(h)
					}
					continue
				}
				for p, v := range b.Data[src+done : src+depth] {
					panel[(done+p)*nr+j] = v
				}
			}
			zeroCols(panel, nn, depth)
		default:
			for p := 0; p < depth; p++ {
				src := base + p*b.RowStride + c*b.ColStride
				for j := 0; j < nn; j++ {
					panel[p*nr+j] = b.elem(src + j*b.ColStride)
				}
			}
			zeroCols(panel, nn, depth)
		}
	}
}

func zeroCols(panel []float32, from, depth int) {
	if from == nr {
		return
	}
	for p := 0; p < depth; p++ {
		clear(panel[p*nr+from : p*nr+nr])
	}
}

// kernelGo is the portable micro-kernel: C[mr,nr] (row stride ldc) =
// (load ? C : 0) + A·B over k packed steps.
func kernelGo(k int, a, b, c []float32, ldc int, load bool) {
	var acc [mr][nr]float32
	a = a[:k*mr]
	b = b[:k*nr]
	for p := 0; p < k; p++ {
		bv := (*[nr]float32)(b[p*nr : p*nr+nr])
		av := (*[mr]float32)(a[p*mr : p*mr+mr])
		for i := 0; i < mr; i++ {
			ai := av[i]
			row := &acc[i]
			for j := 0; j < nr; j++ {
				row[j] += ai * bv[j]
			}
		}
	}
	for i := 0; i < mr; i++ {
		dst := (*[nr]float32)(c[i*ldc : i*ldc+nr])
		if load {
			for j := 0; j < nr; j++ {
				dst[j] += acc[i][j]
			}
		} else {
			*dst = acc[i]
		}
	}
}
