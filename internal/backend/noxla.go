//go:build !xla

package backend

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
)

// XLACompiled reports whether this binary was built with the `xla` tag.
const XLACompiled = false

func newXLA(string) (backends.Backend, error) {
	return nil, fmt.Errorf("%w: the xla backend is not compiled into this binary: build with `-tags xla` "+
		"(needs cgo and an installed PJRT plugin), or use the %q backend", ErrUnavailable, Go)
}
