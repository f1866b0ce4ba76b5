//go:build linux && cgo

package syntax

/*
#include <malloc.h>
*/
import "C"

// cHeapInUse returns the bytes glibc's malloc has handed out, where
// tree-sitter keeps its trees; the leak test watches it because Go's memory
// statistics cannot see it.
func cHeapInUse() int64 {
	mi := C.mallinfo2()
	return int64(mi.uordblks)
}
