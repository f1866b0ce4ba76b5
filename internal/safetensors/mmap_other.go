//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos || aix || android || ios)

package safetensors

import "os"

// mapFile reads the whole file where memory mapping is unavailable.
func mapFile(fh *os.File, size int) ([]byte, func([]byte) error, error) {
	return readFile(fh, size)
}

// dropPages does nothing where files are read, not mapped.
func dropPages(data []byte, begin, end int) {}
