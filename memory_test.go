package pruner

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// peakMemory runs f and returns the peak memory it added: the process's
// peak resident set (which counts the C heap of the tree-sitter parse) where
// Linux lets it be reset, else the Go heap sampled every millisecond.
func peakMemory(t testing.TB, f func()) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	if base, ok := resetPeakRSS(); ok {
		f()
		if peak, ok := readStatusKB("VmHWM:"); ok {
			return peak - base
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapInuse)
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if v := int64(ms.HeapInuse) - base; v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak.Load()
}

// resetPeakRSS resets the kernel's peak-RSS mark (VmHWM) to the current RSS
// and returns that RSS.
func resetPeakRSS() (int64, bool) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	return readStatusKB("VmHWM:")
}

// readStatusKB reads one "Name: N kB" field of /proc/self/status, in bytes.
func readStatusKB(field string) (int64, bool) {
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
