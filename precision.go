package pruner

import "fmt"

// Precision is the arithmetic of a Qwen3 checkpoint's weight products (the
// embedded line model and the lexical scorer ignore it).
type Precision string

const (
	// Float32 multiplies in float32, as the PyTorch reference does: every
	// golden test holds at its float32 tolerance. The default.
	Float32 Precision = "float32"
	// BF16 multiplies bfloat16 operands with float32 accumulation. On the
	// Go backend (CPUs with AVX512_BF16's VDPBF16PS) the weight products
	// (projections, MLP, heads; not attention) are rounded: about 1.5–2.5×
	// faster on the 0.6B shape; against the reference, emissions move by up
	// to about 0.1 and keep probabilities by up to about 0.02. On XLA (a
	// GPU's tensor cores) the graph multiplies in bfloat16 everywhere,
	// attention included, as a PyTorch bfloat16 forward does: 5.5× faster
	// than float32 at 8K tokens on an H200, emissions within about 0.25,
	// keep probabilities within about 0.05 (docs/performance.md). On a CPU
	// without AVX512_BF16, or with another backend, Load fails with an
	// error wrapping ErrUnsupportedBackend: the library never falls back
	// silently.
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

// resolved reads the zero Precision as Float32.
func (p Precision) resolved() Precision {
	if p == "" {
		return Float32
	}
	return p
}
