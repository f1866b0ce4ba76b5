//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos || aix || android || ios

package regfile

import "golang.org/x/sys/unix"

// openNonBlock makes opening a FIFO return at once instead of waiting for a
// writer; it has no effect on regular files.
const openNonBlock = unix.O_NONBLOCK
