// Package regfile opens and reads files that must be regular files: the
// checkpoint and tokenizer files a user points the library at. A FIFO, a
// device or a socket under such a name would block a plain open or read
// forever (or read without end); these functions refuse them at once.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular reports a path that is not a regular file (a FIFO, a
// device, a socket or a directory).
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading only if it is a regular file, following
// symbolic links (Hugging Face caches link checkpoint files to blobs). The
// path is checked with Stat before it is opened, and opened non-blocking
// where the platform allows, so that a FIFO fails at once with
// ErrNotRegular instead of blocking until a writer appears; the opened
// descriptor is checked again, so swapping the path between the two checks
// does not help either. The returned FileInfo describes the opened file.
func Open(path string) (*os.File, os.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %s: %w", path, describeMode(st.Mode()), ErrNotRegular)
	}
	fh, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err = fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		fh.Close()
		return nil, nil, fmt.Errorf("%s: %s: %w", path, describeMode(st.Mode()), ErrNotRegular)
	}
	return fh, st, nil
}

// ReadFile reads a regular file of at most limit bytes (see Open); a
// larger file is an error, found before it is read.
func ReadFile(path string, limit int64) ([]byte, error) {
	fh, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the limit of %d", path, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: more than the limit of %d bytes", path, limit)
	}
	return data, nil
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "is a directory"
	case m&os.ModeNamedPipe != 0:
		return "is a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "is a socket"
	case m&os.ModeCharDevice != 0:
		return "is a character device"
	case m&os.ModeDevice != 0:
		return "is a device"
	case m&os.ModeIrregular != 0:
		return "is an irregular file"
	}
	return fmt.Sprintf("has mode %v", m)
}
