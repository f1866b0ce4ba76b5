package safetensors

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refHalf decodes an IEEE binary16 pattern from its definition in float64,
// independently of the bit-twiddling in F16ToF32.
func refHalf(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -24)
	case 0x1f:
		if mant == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1024+mant, exp-25)
}

// refBF16 decodes a bfloat16 pattern from its definition (8-bit exponent,
// 7-bit mantissa, bias 127).
func refBF16(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>7) & 0xff
	mant := float64(h & 0x7f)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -133)
	case 0xff:
		if mant == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(128+mant, exp-134)
}

func TestF16ToF32Exhaustive(t *testing.T) {
	for h := 0; h <= 0xffff; h++ {
		got := F16ToF32(uint16(h))
		want := refHalf(uint16(h))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(got)), "h=%#04x", h)
			bits := math.Float32bits(got)
			assert.Equal(t, uint32(h&0x8000)<<16, bits&0x80000000, "NaN sign h=%#04x", h)
			assert.Equal(t, uint32(h&0x3ff), (bits>>13)&0x3ff, "NaN payload h=%#04x", h)
			continue
		}
		require.Equal(t, want, float64(got), "h=%#04x", h)
		require.Equal(t, math.Signbit(want), math.Signbit(float64(got)), "sign h=%#04x", h)
	}
	// A few hand-checked landmarks.
	assert.Equal(t, float32(1), F16ToF32(0x3c00))
	assert.Equal(t, float32(-2), F16ToF32(0xc000))
	assert.Equal(t, float32(65504), F16ToF32(0x7bff))
	assert.Equal(t, float32(math.Ldexp(1, -24)), F16ToF32(0x0001))
	assert.Equal(t, float32(math.Ldexp(1023, -24)), F16ToF32(0x03ff))
	assert.True(t, math.IsInf(float64(F16ToF32(0xfc00)), -1))
}

func TestBF16ToF32Exhaustive(t *testing.T) {
	for h := 0; h <= 0xffff; h++ {
		got := BF16ToF32(uint16(h))
		want := refBF16(uint16(h))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(got)), "h=%#04x", h)
			continue
		}
		require.Equal(t, want, float64(got), "h=%#04x", h)
		require.Equal(t, math.Signbit(want), math.Signbit(float64(got)), "sign h=%#04x", h)
		// Widening then rounding must give the same pattern back.
		require.Equal(t, uint16(h), F32ToBF16(got), "round trip h=%#04x", h)
	}
}

// refF32ToBF16 rounds by brute force: it compares the distances to the two
// bfloat16 neighbours in float64 (where they are exact) and breaks ties to the
// even mantissa. The neighbour above the largest finite value is treated as
// 2^128, which is how IEEE round-to-nearest decides overflow to infinity.
func refF32ToBF16(f float32) uint16 {
	bits := math.Float32bits(f)
	lo := uint16(bits >> 16) // truncation toward zero
	hi := lo + 1             // next magnitude away from zero
	if bits&0xffff == 0 {
		return lo
	}
	mag := func(h uint16) float64 {
		if h&0x7fff == 0x7f80 {
			return math.Ldexp(1, 128)
		}
		return math.Abs(refBF16(h))
	}
	x := math.Abs(float64(f))
	dlo, dhi := x-mag(lo), mag(hi)-x
	switch {
	case dlo < dhi:
		return lo
	case dhi < dlo:
		return hi
	case lo&1 == 0:
		return lo
	}
	return hi
}

func TestF32ToBF16BruteForce(t *testing.T) {
	specials := []uint32{
		0x00000000, 0x80000000, // ±0
		0x00000001, 0x80000001, 0x00007fff, 0x00008000, 0x00018000, 0x0000ffff, // subnormals, ties
		0x007fffff, 0x00800000, // largest subnormal, smallest normal
		0x3f800000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, // 1 and ties around it
		0x7f7f0000, 0x7f7f7fff, 0x7f7f8000, 0x7f7fffff, 0xff7f8000, // overflow boundary
		0x7f800000, 0xff800000, // ±Inf
		0x477fe000, 0xc2f6e979,
	}
	for _, b := range specials {
		f := math.Float32frombits(b)
		assert.Equal(t, refF32ToBF16(f), F32ToBF16(f), "bits=%#08x", b)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2_000_000; i++ {
		b := rng.Uint32()
		if i%4 == 0 {
			// Force exact ties, which uniform bits almost never hit.
			b = b&^0xffff | 0x8000
		}
		f := math.Float32frombits(b)
		if math.IsNaN(float64(f)) {
			continue
		}
		want := refF32ToBF16(f)
		if got := F32ToBF16(f); got != want {
			require.Equal(t, want, got, "bits=%#08x", b)
		}
	}
}

func TestF32ToBF16NaN(t *testing.T) {
	tests := []struct {
		name string
		bits uint32
	}{
		{"quiet", 0x7fc00000},
		{"negative quiet", 0xffc00000},
		{"payload in low half only", 0x7f800001},
		{"negative low payload", 0xff80ffff},
		{"high payload", 0x7fa50000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := F32ToBF16(math.Float32frombits(tt.bits))
			assert.True(t, math.IsNaN(float64(BF16ToF32(h))), "%#04x must stay NaN", h)
			assert.Equal(t, uint16(tt.bits>>16)&0x8000, h&0x8000, "sign")
			assert.Equal(t, uint16(tt.bits>>16)|0x0040, h, "payload kept, quiet bit set")
		})
	}
}

func TestDTypeSize(t *testing.T) {
	tests := []struct {
		d    DType
		size int
	}{
		{BOOL, 1}, {U8, 1}, {I8, 1}, {F8E5M2, 1}, {F8E4M3, 1},
		{I16, 2}, {U16, 2}, {F16, 2}, {BF16, 2},
		{I32, 4}, {U32, 4}, {F32, 4},
		{F64, 8}, {I64, 8}, {U64, 8},
		{"F4", 0}, {"", 0}, {"f32", 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.size, tt.d.Size(), string(tt.d))
		assert.Equal(t, tt.size != 0, tt.d.Valid(), string(tt.d))
	}
}
