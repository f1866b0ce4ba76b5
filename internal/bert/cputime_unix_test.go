//go:build unix

package bert

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (all threads), which
// measures a benchmark's work on a machine shared with other jobs, where
// its wall time measures mostly its share of the cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
