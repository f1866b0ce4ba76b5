//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos || aix || android || ios

package safetensors

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of fh read-only. A mapping that the file system
// refuses falls back to reading the file, so exotic mounts still work.
func mapFile(fh *os.File, size int) ([]byte, func([]byte) error, error) {
	data, err := unix.Mmap(int(fh.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return readFile(fh, size)
	}
	return data, unix.Munmap, nil
}
