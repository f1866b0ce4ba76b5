package safetensors

import "math"

// DType is a safetensors element type, spelled as in the file header.
type DType string

// The element types this package knows. Only the floating-point types F32,
// F16 and BF16 can be converted by Float32 and BFloat16; the others can be
// read with Raw and written with Write.
const (
	BOOL   DType = "BOOL"
	U8     DType = "U8"
	I8     DType = "I8"
	F8E5M2 DType = "F8_E5M2"
	F8E4M3 DType = "F8_E4M3"
	I16    DType = "I16"
	U16    DType = "U16"
	F16    DType = "F16"
	BF16   DType = "BF16"
	I32    DType = "I32"
	U32    DType = "U32"
	F32    DType = "F32"
	F64    DType = "F64"
	I64    DType = "I64"
	U64    DType = "U64"
)

// Size returns the number of bytes of one element, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case BOOL, U8, I8, F8E5M2, F8E4M3:
		return 1
	case I16, U16, F16, BF16:
		return 2
	case I32, U32, F32:
		return 4
	case F64, I64, U64:
		return 8
	}
	return 0
}

// Valid reports whether d is a dtype this package knows.
func (d DType) Valid() bool { return d.Size() != 0 }

// String returns the dtype as spelled in safetensors headers.
func (d DType) String() string { return string(d) }

// BF16ToF32 widens a bfloat16 bit pattern to float32. It is exact: bfloat16 is
// the top half of a float32.
func BF16ToF32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// F32ToBF16 rounds f to the nearest bfloat16, ties to even, as PyTorch does
// when casting to torch.bfloat16. Values beyond the bfloat16 range round to
// infinity. A NaN stays a NaN with its sign and top payload bits: the quiet
// bit is forced on because plain truncation could turn a NaN whose payload
// lives in the low 16 bits into an infinity.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x0040
	}
	// Adding 0x7fff plus the lowest kept bit rounds half-way cases to even;
	// a carry out of the mantissa correctly bumps the exponent (up to Inf).
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// F16ToF32 widens an IEEE 754 binary16 bit pattern to float32. Every half
// value, subnormals included, is exactly representable; infinities keep their
// sign and NaNs keep their sign and payload.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal half: shift the mantissa up until its leading one
		// becomes the implicit bit, lowering the exponent to match.
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
