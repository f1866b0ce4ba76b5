package pruner

import "fmt"

// Precision is the arithmetic of a Qwen3 checkpoint's weight products (the
// embedded line model and the lexical scorer ignore it).
type Precision string

const (
	// Float32 multiplies in float32, as the PyTorch reference does: every
	// golden test holds at its float32 tolerance. The default.
	Float32 Precision = "float32"
	// BF16 rounds the operands of the weight products (projections, MLP,
	// heads; not attention) to bfloat16 and adds the products in float32
	// (AVX512_BF16's VDPBF16PS), on the Go backend only. About 1.5–2.5×
	// faster on the 0.6B shape; against the reference, emissions move by up
	// to about 0.1 and keep probabilities by up to about 0.02
	// (docs/performance.md). On a CPU without AVX512_BF16, or with another
	// backend, Load fails with an error wrapping ErrUnsupportedBackend: the
	// library never falls back silently.
	BF16 Precision = "bf16"
)

// WithPrecision selects the arithmetic of the weight products (default
// Float32).
func WithPrecision(p Precision) Option {
	return func(c *config) error {
		switch p {
		case Float32, BF16:
			c.precision = p
			return nil
		}
		return fmt.Errorf("%w: precision %q (want %q or %q)", ErrOption, p, Float32, BF16)
	}
}
