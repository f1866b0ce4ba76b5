//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos || aix || android || ios)

package regfile

// openNonBlock is 0 where the platform has no O_NONBLOCK for files.
const openNonBlock = 0
