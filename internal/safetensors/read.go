package safetensors

import (
	"fmt"
	"io"
	"os"
)

// readFile is the portable fallback for mapFile; the returned release
// function is nil because the garbage collector owns the buffer.
func readFile(fh *os.File, size int) ([]byte, func([]byte) error, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(fh, 0, int64(size)), data); err != nil {
		return nil, nil, fmt.Errorf("read: %w", err)
	}
	return data, nil, nil
}
