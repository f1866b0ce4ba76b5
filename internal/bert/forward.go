package bert

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"github.com/prunekit/pruner/internal/fastcpu"
)

// The forward pass runs on the batch's tokens packed end to end ([T, H],
// T the sum of the sequences' lengths) rather than on a padded [B, S, H]:
// the dense layers see every real token once and no padding, and attention
// runs per sequence over its own tokens, which is what a padding mask
// computes (the masked keys' weights are exactly 0 in HF's softmax).

// workspace holds one forward pass's activations; pooled by the Model.
type workspace struct {
	x     []float32 // [T, H] the hidden states
	qkv   []float32 // [T, 3H]
	heads []float32 // [3, heads, T, d]: qkv by head, biases added, queries scaled
	ctx   []float32 // [T, H] attention output, heads side by side
	tmp   []float32 // [T, H] a projection before its residual
	inter []float32 // [T, I]
	ids   []int32   // [T]
	pos   []int32   // [T] each token's position in its sequence
	start []int     // [B+1] each sequence's first token
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// pack lays out the sequences for a forward pass.
func (ws *workspace) pack(seqs [][]int32, cfg Config) int {
	t := 0
	ws.start = append(ws.start[:0], 0)
	ws.ids, ws.pos = ws.ids[:0], ws.pos[:0]
	for _, s := range seqs {
		for p, id := range s {
			ws.ids = append(ws.ids, id)
			ws.pos = append(ws.pos, int32(p))
		}
		t += len(s)
		ws.start = append(ws.start, t)
	}
	h := cfg.Hidden
	ws.x = grow(ws.x, t*h)
	ws.qkv = grow(ws.qkv, t*3*h)
	ws.heads = grow(ws.heads, t*3*h)
	ws.ctx = grow(ws.ctx, t*h)
	ws.tmp = grow(ws.tmp, t*h)
	ws.inter = grow(ws.inter, t*cfg.Intermediate)
	return t
}

// forward computes the last hidden states of the packed sequences into
// ws.x. ctx is checked between layers.
func (m *Model) forward(ctx context.Context, ws *workspace, seqs [][]int32) error {
	cfg := m.cfg
	t := ws.pack(seqs, cfg)
	h, in := cfg.Hidden, cfg.Intermediate
	w := m.w
	eps := cfg.LayerNormEps
	m.rows(t, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			x := ws.x[r*h : (r+1)*h]
			word := w.word[int(ws.ids[r])*h:][:h]
			pos := w.position[int(ws.pos[r])*h:][:h]
			// HF's order: (word + token type) + position.
			for j := range x {
				x[j] = word[j] + w.tokType[j] + pos[j]
			}
			layerNorm(x, w.embG, w.embB, eps)
		}
	})
	for li := range w.layers {
		if err := ctx.Err(); err != nil {
			return err
		}
		l := &w.layers[li]
		m.dense(ws.qkv, ws.x, l.qkvW, t, 3*h, h)
		m.splitHeads(ws, t, l.qkvB)
		m.attention(ws, len(seqs), t)
		m.dense(ws.tmp, ws.ctx, l.outW, t, h, h)
		m.rows(t, func(r0, r1 int) {
			for r := r0; r < r1; r++ {
				x := ws.x[r*h : (r+1)*h]
				addLayerNorm(x, ws.tmp[r*h:(r+1)*h], l.outB, l.ln1G, l.ln1B, eps)
			}
		})
		m.dense(ws.inter, ws.x, l.inW, t, in, h)
		m.rows(t, func(r0, r1 int) { biasGELU(ws.inter[r0*in:r1*in], l.inB) })
		m.dense(ws.tmp, ws.inter, l.ffW, t, h, in)
		m.rows(t, func(r0, r1 int) {
			for r := r0; r < r1; r++ {
				x := ws.x[r*h : (r+1)*h]
				addLayerNorm(x, ws.tmp[r*h:(r+1)*h], l.ffB, l.ln2G, l.ln2B, eps)
			}
		})
	}
	return nil
}

// dense computes c [t, n] = a [t, k] · w [k, n] on all workers: blocks of
// rows taken in turn, each a single-threaded product reading w in place.
// fastcpu's own split of a product over the workers cuts its columns when
// it is wider than tall, and then every part packs all of a: at 256 tokens
// (one window) these products took 10-25% longer that way; at 2048 tokens
// the two are even.
func (m *Model) dense(c, a, w []float32, t, n, k int) {
	step := max(12, (t/(2*m.workers)+11)/12*12)
	m.blocks((t+step-1)/step, func(b int) {
		r0, r1 := b*step, min(t, (b+1)*step)
		m.serial.MatMul(1, r1-r0, n, k,
			fastcpu.Strided{Data: a[r0*k:], BatchStride: (r1 - r0) * k, RowStride: k, ColStride: 1},
			fastcpu.Strided{Data: w, BatchStride: k * n, RowStride: n, ColStride: 1}, c[r0*n:r1*n])
	})
}

// blocks runs fn(0), …, fn(count−1) on the workers, each taking the next
// block when it is done with one.
func (m *Model) blocks(count int, fn func(b int)) {
	var next atomic.Int64
	work := func() {
		for {
			b := int(next.Add(1)) - 1
			if b >= count {
				return
			}
			fn(b)
		}
	}
	workers := min(m.workers, count)
	var wg sync.WaitGroup
	for i := 1; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}

// rows runs fn over [0, n) split into one range per worker (inline when
// the work is small).
func (m *Model) rows(n int, fn func(r0, r1 int)) {
	workers := min(m.workers, n/4)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	for r0 := step; r0 < n; r0 += step {
		wg.Add(1)
		go func(r0 int) {
			defer wg.Done()
			fn(r0, min(n, r0+step))
		}(r0)
	}
	fn(0, min(n, step))
	wg.Wait()
}

// splitHeads lays the projections out by head (ws.heads) with their biases
// added and 1/√d folded into the queries (HF scales the scores instead:
// the same values up to rounding). One pass over the rows in order: the
// attention tasks then read each head's rows contiguously, where reading
// them from ws.qkv strode across pages for every 128 bytes.
func (m *Model) splitHeads(ws *workspace, t int, bias []float32) {
	h, heads, d := m.cfg.Hidden, m.cfg.Heads, m.cfg.HeadDim()
	scl := float32(1 / math.Sqrt(float64(d)))
	m.rows(t, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			row := ws.qkv[r*3*h : (r+1)*3*h]
			for p := 0; p < 3; p++ {
				s := float32(1)
				if p == 0 {
					s = scl
				}
				for hd := 0; hd < heads; hd++ {
					c := p*h + hd*d
					addScale(ws.heads[((p*heads+hd)*t+r)*d:][:d], row[c:c+d], bias[c:c+d], s)
				}
			}
		}
	})
}

// attnScratch is one worker's attention buffers.
type attnScratch struct {
	scores []float32 // [L, L]
	sums   []float32 // [L] the softmax rows' sums
	out    []float32 // [L, d]
}

// attention computes ws.ctx from ws.heads: for each sequence and head,
// softmax(Q·Kᵀ)·V over the sequence's own tokens (Q scaled already). The
// (sequence, head) pairs are shared out to the workers, each with a
// single-threaded Gemm, so that a head's scores stay in its core's cache.
// The softmax division is applied to the d-wide output rows instead of
// the L-wide probability rows.
func (m *Model) attention(ws *workspace, batch, t int) {
	cfg := m.cfg
	h, heads, d := cfg.Hidden, cfg.Heads, cfg.HeadDim()
	longest := 0
	for s := 0; s < batch; s++ {
		longest = max(longest, ws.start[s+1]-ws.start[s])
	}
	// A task takes g heads of one sequence in one batched product: short
	// sequences would otherwise spend more in the calls than in the
	// products. g keeps the task's scores within 256 KB (in L2) and
	// leaves a few tasks per worker.
	g := min(heads, max(1, (1<<16)/(longest*longest)), max(1, batch*heads/(4*m.workers)))
	for heads%g != 0 {
		g--
	}
	groups := heads / g
	m.blocks(batch*groups, func(task int) {
		sc, _ := m.scratch.Get().(*attnScratch)
		if sc == nil {
			sc = new(attnScratch)
		}
		defer m.scratch.Put(sc)
		s, hd := task/groups, task%groups*g
		off, n := ws.start[s], ws.start[s+1]-ws.start[s]
		sc.scores, sc.sums, sc.out = grow(sc.scores, g*n*n), grow(sc.sums, g*n), grow(sc.out, g*n*d)
		q := ws.heads[(hd*t+off)*d:]
		k := ws.heads[((heads+hd)*t+off)*d:]
		v := ws.heads[((2*heads+hd)*t+off)*d:]
		// Kᵀ as a [d, n] operand: element (i, j) is key j's i-th value.
		m.serial.MatMul(g, n, n, d,
			fastcpu.Strided{Data: q, BatchStride: t * d, RowStride: d, ColStride: 1},
			fastcpu.Strided{Data: k, BatchStride: t * d, RowStride: 1, ColStride: d}, sc.scores)
		for i := 0; i < g*n; i++ {
			sc.sums[i] = expMaxSum(sc.scores[i*n : (i+1)*n])
		}
		m.serial.MatMul(g, n, d, n,
			fastcpu.Strided{Data: sc.scores, BatchStride: n * n, RowStride: n, ColStride: 1},
			fastcpu.Strided{Data: v, BatchStride: t * d, RowStride: d, ColStride: 1}, sc.out)
		for j := 0; j < g; j++ {
			for i := 0; i < n; i++ {
				out := sc.out[(j*n+i)*d : (j*n+i+1)*d]
				scale(out, 1/sc.sums[j*n+i])
				copy(ws.ctx[(off+i)*h+(hd+j)*d:][:d], out)
			}
		}
	})
}
