package fastcpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// teamSpin is how long a helper goroutine waits, running, for the next
// part of the work before it exits, and how long a caller waits, running,
// for its helpers before it blocks.
//
// A forward pass is a chain of parallel operations with short serial gaps
// between them. Handing each one to a fresh goroutine made the other core
// park between operations, and waking a parked core took 120 µs at the
// median and up to 2 ms on the virtual machines these benchmarks run on
// (a goroutine started on an idle core, measured): at 512 tokens the
// second core then added 25% instead of 80–90%. ONNX Runtime's thread pool
// spins between operations for the same reason.
const teamSpin = 200 * time.Microsecond

// minSpinners is the least bound on the helpers waiting at once per team
// (team.spinners): enough for the workers of two concurrent calls on a
// small machine, so that concurrent executions do not leave a crowd of
// spinning goroutines behind.
const minSpinners = 8

// team runs the parallel parts of a computation on the caller's goroutine
// and on helpers that stay running for teamSpin after each part, so that
// the next operation's part starts at once instead of waiting for a parked
// core to wake. Helpers exit when nothing comes (no goroutine outlives
// its use by more than teamSpin); a team is safe for concurrent use, and a
// dispatch that finds no waiting helper starts a new one. The zero value
// is ready to use.
type team struct {
	// spinners bounds the helpers waiting at once (at least minSpinners):
	// a machine with many cores needs one per worker of a call.
	spinners int
	mu       sync.Mutex
	ready    []*helper // helpers waiting for a part, most recent last
}

// helper is one waiting goroutine's mailbox.
type helper struct {
	part atomic.Pointer[teamPart]
}

// teamPart is one dispatch's function and its completion count.
type teamPart struct {
	fn      func()
	pending atomic.Int32
	wg      sync.WaitGroup
}

// run calls fn on the caller and on workers-1 helpers at once, and returns
// when all have returned. fn is the same function for every worker: it
// takes its share of the work from shared state (an atomic counter), so a
// helper that starts late takes less.
func (t *team) run(workers int, fn func()) {
	if workers <= 1 {
		fn()
		return
	}
	p := &teamPart{fn: fn}
	p.pending.Store(int32(workers - 1))
	p.wg.Add(workers - 1)
	for range workers - 1 {
		t.mu.Lock()
		var h *helper
		if n := len(t.ready); n > 0 {
			h = t.ready[n-1]
			t.ready = t.ready[:n-1]
		}
		t.mu.Unlock()
		if h != nil {
			h.part.Store(p)
		} else {
			go t.help(new(helper), p)
		}
	}
	fn()
	// The helpers' parts are about as long as the caller's: wait running
	// first, so that this core does not park either.
	spinUntil(func() bool { return p.pending.Load() == 0 })
	p.wg.Wait()
}

// help runs p, then waits for further parts until teamSpin passes without
// one.
func (t *team) help(h *helper, p *teamPart) {
	for {
		p.fn()
		p.pending.Add(-1)
		p.wg.Done()
		t.mu.Lock()
		if len(t.ready) >= max(t.spinners, minSpinners) {
			t.mu.Unlock()
			return
		}
		t.ready = append(t.ready, h)
		t.mu.Unlock()
		if !spinUntil(func() bool { return h.part.Load() != nil }) {
			// Leave unless a dispatch took h meanwhile: then its part is
			// on the way.
			t.mu.Lock()
			for i, r := range t.ready {
				if r == h {
					t.ready = append(t.ready[:i], t.ready[i+1:]...)
					t.mu.Unlock()
					return
				}
			}
			t.mu.Unlock()
			for h.part.Load() == nil {
				runtime.Gosched()
			}
		}
		p = h.part.Swap(nil)
	}
}

// spinUntil polls done for up to teamSpin, yielding the processor now and
// then so that other goroutines still run, and reports whether done became
// true.
func spinUntil(done func() bool) bool {
	var deadline time.Time
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i%64 == 63 {
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(teamSpin)
			} else if now.After(deadline) {
				return false
			}
			runtime.Gosched()
		}
	}
}
