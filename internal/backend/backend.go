// Package backend picks the GoMLX backend the models run on. The pure Go
// backend is the default and always available: GoMLX's simplego with the
// library's SIMD matrix products and fused attention (internal/fastcpu); the
// plain simplego backend stays selectable. The XLA backend (PJRT plugins for
// CPU or CUDA) is compiled in with the `xla` build tag and used only when a
// plugin is already installed — nothing is ever downloaded.
package backend

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/prunekit/pruner/internal/fastcpu"
)

// Names accepted by New.
const (
	Auto     = "auto"     // XLA when compiled in and a PJRT plugin is installed, else Go
	Go       = "go"       // the pure Go backend: simplego plus internal/fastcpu kernels
	SimpleGo = "simplego" // GoMLX's plain pure Go backend
	XLA      = "xla"      // XLA through a PJRT plugin; "xla:cuda", "xla:cpu" or "xla:/path/plugin.so" pick one
)

// ErrUnavailable is wrapped when the requested backend cannot be used here;
// the message says what to install or which build tag to enable.
var ErrUnavailable = errors.New("backend unavailable")

// New returns the backend called name (see the constants; "" means Auto).
// A config suffix after ':' is passed to the backend, e.g. "go:ops_sequential".
func New(name string) (backends.Backend, error) {
	kind, config, _ := strings.Cut(name, ":")
	switch kind {
	case "", Auto:
		if XLACompiled {
			if b, err := newXLA(config); err == nil {
				return b, nil
			}
		}
		return New(Go)
	case Go:
		b, err := fastcpu.New(config)
		if err != nil {
			return nil, fmt.Errorf("%w: go backend: %w", ErrUnavailable, err)
		}
		return b, nil
	case SimpleGo:
		return newSimpleGo(config)
	case XLA, "stablehlo", "pjrt":
		return newXLA(config)
	default:
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, Check(name))
	}
}

// Check says whether name is a backend New knows, without starting it:
// whether it is available here (an XLA plugin, the CPU's features) is New's
// to say.
func Check(name string) error {
	kind, _, _ := strings.Cut(name, ":")
	switch kind {
	case "", Auto, Go, SimpleGo, XLA, "stablehlo", "pjrt":
		return nil
	}
	return fmt.Errorf("unknown backend %q (want %q, %q, %q or %q)", name, Auto, Go, SimpleGo, XLA)
}

func newSimpleGo(config string) (backends.Backend, error) {
	if config == "" {
		// simplego v0.26's parallel op scheduler races on its use counts
		// (found by our -race concurrency test: two consumers can both
		// "own" a buffer). Ops run one after another; DotGeneral still
		// uses every core.
		config = "ops_sequential"
	}
	b, err := simplego.New(config)
	if err != nil {
		return nil, fmt.Errorf("%w: simplego backend: %w", ErrUnavailable, err)
	}
	return b, nil
}

// Precisions accepted by WithPrecision.
const (
	Float32 = "float32" // float32 products (the default; every golden holds bit for bit)
	BF16    = "bf16"    // bfloat16 products, float32 accumulation (Go backend with AVX512_BF16, or XLA)
)

// WithPrecision returns the backend name that runs name's models with the
// given precision of the products, and whether the graph itself must
// multiply bfloat16 operands (backbone.ParamBF16Products). Float32 (or "")
// returns name unchanged. BF16 on the Go backend: "", Auto and Go become
// "go:bf16" (Auto then never picks XLA), "go:CONFIG" gets ",bf16" appended,
// and the backend rounds the weight products itself. BF16 on XLA keeps the
// name and builds bfloat16 products in the graph (weights and attention:
// a GPU's tensor cores). Any other backend is an error wrapping
// ErrUnavailable. Whether the CPU can run the Go form (AVX512_BF16) is
// checked by New, which returns an error wrapping ErrUnavailable and
// fastcpu.ErrNoBF16 where it cannot.
func WithPrecision(name, precision string) (backendName string, graphBF16 bool, err error) {
	switch precision {
	case "", Float32:
		return name, false, nil
	case BF16:
	default:
		return "", false, fmt.Errorf("%w: unknown precision %q (want %q or %q)", ErrUnavailable, precision, Float32, BF16)
	}
	kind, config, _ := strings.Cut(name, ":")
	switch kind {
	case "", Auto:
		return Go + ":" + BF16, false, nil
	case Go:
		if config == "" {
			return Go + ":" + BF16, false, nil
		}
		return Go + ":" + config + "," + BF16, false, nil
	case XLA, "stablehlo", "pjrt":
		return name, true, nil
	}
	return "", false, fmt.Errorf("%w: precision %q runs only on the %q and %q backends, not %q", ErrUnavailable, BF16, Go, XLA, name)
}
