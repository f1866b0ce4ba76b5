//go:build xla

package backend

import (
	"fmt"
	"path/filepath"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/xla"
)

// XLACompiled reports whether this binary was built with the `xla` tag.
const XLACompiled = true

func newXLA(config string) (backends.Backend, error) {
	// The library never downloads anything at run time: GoMLX would otherwise
	// fetch PJRT plugins from the internet when none is installed.
	xla.EnableAutoInstall(false)
	if !filepath.IsAbs(config) {
		plugins := xla.GetAvailablePlugins()
		if len(plugins) == 0 {
			return nil, fmt.Errorf("%w: xla backend: no PJRT plugin found; install one (e.g. a CUDA plugin from a JAX installation) "+
				"and point PJRT_PLUGIN_LIBRARY_PATH at its folder, or use the %q backend", ErrUnavailable, Go)
		}
	}
	b, err := xla.New(config)
	if err != nil {
		return nil, fmt.Errorf("%w: xla backend: %w", ErrUnavailable, err)
	}
	return b, nil
}
