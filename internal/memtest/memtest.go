// Package memtest measures the memory a piece of work takes, for the
// library's memory tests and benchmarks: the Go heap it allocates and keeps
// (runtime.MemStats, portable) and the peak resident set of the process
// (Linux, which also counts the C heap of tree-sitter parses).
package memtest

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// HeapUse runs f and returns the bytes it allocated and the peak Go heap in
// use above the level before it, sampled every millisecond. The collector
// runs at GOGC=5 meanwhile, so that the sampled heap is close to the live
// heap rather than to the collector's pacing.
func HeapUse(f func()) (total, peak uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var maxInuse uint64
	wg.Go(func() {
		var ms runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			maxInuse = max(maxInuse, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	f()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	close(stop)
	wg.Wait()
	maxInuse = max(maxInuse, after.HeapInuse, before.HeapInuse)
	return after.TotalAlloc - before.TotalAlloc, maxInuse - before.HeapInuse
}

// Peak runs f and returns the peak memory it added: the process's peak
// resident set where Linux lets its mark be reset (/proc/self/clear_refs),
// else the Go heap in use sampled every millisecond at the default GOGC.
// Garbage not yet collected counts, as it does for a user's process.
func Peak(f func()) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	if base, ok := resetPeakRSS(); ok {
		f()
		if peak, ok := statusBytes("VmHWM:"); ok {
			return peak - base
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapInuse)
	var peak int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, int64(ms.HeapInuse)-base)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	return peak
}

// RSS returns the resident set size of this process (false where
// /proc/self/status is not available).
func RSS() (int64, bool) { return statusBytes("VmRSS:") }

// SettledRSS collects garbage and returns freed pages before reading RSS,
// so that what remains is what the process still holds.
func SettledRSS() (int64, bool) {
	runtime.GC()
	debug.FreeOSMemory()
	return RSS()
}

// resetPeakRSS resets the kernel's peak-RSS mark (VmHWM) to the current RSS
// and returns that RSS.
func resetPeakRSS() (int64, bool) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	return statusBytes("VmHWM:")
}

// statusBytes reads one "Name: N kB" field of /proc/self/status, in bytes.
func statusBytes(field string) (int64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10, true
			}
		}
	}
	return 0, false
}
