//go:build amd64 && !purego

#include "textflag.h"

// Scalar constants, broadcast into registers where used. The Go versions
// in kernels.go name them.
DATA kc<>+0(SB)/4, $0xc2b00000  // expLo: -88, exp's lower clamp
DATA kc<>+4(SB)/4, $0x3fb8aa3b  // log2(e)
DATA kc<>+8(SB)/4, $0x3f318000  // ln 2, high part
DATA kc<>+12(SB)/4, $0xb95e8083 // ln 2, low part
DATA kc<>+16(SB)/4, $0x3ab43e12 // exp c6
DATA kc<>+20(SB)/4, $0x3c091dca // exp c5
DATA kc<>+24(SB)/4, $0x3d2aadac // exp c4
DATA kc<>+28(SB)/4, $0x3e2aaa47 // exp c3
DATA kc<>+32(SB)/4, $0x3efffffc // exp c2
DATA kc<>+36(SB)/4, $0x3f800000 // 1
DATA kc<>+40(SB)/4, $0x7fffffff // abs mask
DATA kc<>+44(SB)/4, $0x3e6d3388 // erf p/√2
DATA kc<>+48(SB)/4, $0x3f87dc22 // erf a5
DATA kc<>+52(SB)/4, $0xbfba00e3 // erf a4
DATA kc<>+56(SB)/4, $0x3fb5f0e3 // erf a3
DATA kc<>+60(SB)/4, $0xbe91a98e // erf a2
DATA kc<>+64(SB)/4, $0x3e827906 // erf a1
DATA kc<>+68(SB)/4, $0x3f000000 // 0.5
DATA kc<>+72(SB)/4, $0x80000000 // sign mask
DATA kc<>+76(SB)/4, $0xbf000000 // -0.5
DATA kc<>+80(SB)/4, $0xff800000 // -Inf
GLOBL kc<>(SB), RODATA|NOPTR, $84

// EXPCONST loads exp's constants into Z20-Z29.
#define EXPCONST \
	VBROADCASTSS kc<>+0(SB), Z20; \
	VBROADCASTSS kc<>+4(SB), Z21; \
	VBROADCASTSS kc<>+8(SB), Z22; \
	VBROADCASTSS kc<>+12(SB), Z23; \
	VBROADCASTSS kc<>+16(SB), Z24; \
	VBROADCASTSS kc<>+20(SB), Z25; \
	VBROADCASTSS kc<>+24(SB), Z26; \
	VBROADCASTSS kc<>+28(SB), Z27; \
	VBROADCASTSS kc<>+32(SB), Z28; \
	VBROADCASTSS kc<>+36(SB), Z29

// EXP sets R = exp(X) in 16 lanes for X <= 0 (X and T clobbered): X
// clamped at -88, n = round(X·log2 e), r = X − n·ln 2 (in two parts),
// e^r by a degree-6 polynomial, scaled by 2^n with VSCALEFPS (which
// underflows gracefully).
#define EXP(X, T, R) \
	VMAXPS Z20, X, X; \
	VMULPS Z21, X, T; \
	VRNDSCALEPS $0, T, T; \
	VFNMADD231PS Z22, T, X; \
	VFNMADD231PS Z23, T, X; \
	VMOVAPS Z24, R; \
	VFMADD213PS Z25, X, R; \
	VFMADD213PS Z26, X, R; \
	VFMADD213PS Z27, X, R; \
	VFMADD213PS Z28, X, R; \
	VMULPS X, R, R; \
	VFMADD213PS X, X, R; \
	VADDPS Z29, R, R; \
	VSCALEFPS T, R, R

// TAILMASK sets K1 to the low CX bits (0 < CX < 16), clobbering AX.
#define TAILMASK \
	MOVL $1, AX; \
	SHLL CX, AX; \
	SUBL $1, AX; \
	KMOVW AX, K1

// HSUM sets X0 to the sum of Z9's lanes (clobbers Z0, Z1).
#define HSUM \
	VEXTRACTF64X4 $1, Z9, Y0; \
	VADDPS Y9, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VPERMILPS $0x4E, X0, X1; \
	VADDPS X1, X0, X0; \
	VPERMILPS $0xB1, X0, X1; \
	VADDPS X1, X0, X0

// func expMaxSumAVX512(x *float32, n int) float32
//
// x[i] = exp(x[i] − max(x)) for i < n (n > 0); returns the sum of the new
// values: a softmax row before its division.
TEXT ·expMaxSumAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	EXPCONST
	VBROADCASTSS kc<>+80(SB), Z30
	VMOVAPS Z30, Z8
	MOVQ DI, SI
	MOVQ CX, DX
	ANDQ $15, CX
	JZ   nomask
	TAILMASK

nomask:
	SHRQ $4, DX
	MOVQ DX, BX
	JZ   maxtail

maxloop:
	VMAXPS (SI), Z8, Z8
	ADDQ $64, SI
	DECQ DX
	JNZ  maxloop

maxtail:
	TESTQ CX, CX
	JZ    maxreduce
	VMOVAPS Z30, Z0
	VMOVUPS (SI), K1, Z0
	VMAXPS Z0, Z8, Z8

maxreduce:
	VEXTRACTF64X4 $1, Z8, Y0
	VMAXPS Y8, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	VBROADCASTSS X0, Z31
	VXORPS Z9, Z9, Z9
	MOVQ DI, SI
	MOVQ BX, DX
	TESTQ DX, DX
	JZ   exptail

exploop:
	VMOVUPS (SI), Z1
	VSUBPS Z31, Z1, Z1
	EXP(Z1, Z2, Z3)
	VMOVUPS Z3, (SI)
	VADDPS Z3, Z9, Z9
	ADDQ $64, SI
	DECQ DX
	JNZ  exploop

exptail:
	TESTQ CX, CX
	JZ    expdone
	VMOVUPS.Z (SI), K1, Z1
	VSUBPS Z31, Z1, Z1
	EXP(Z1, Z2, Z3)
	VMOVUPS Z3, K1, (SI)
	VADDPS Z3, Z9, K1, Z9

expdone:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// GELU16 sets Z0 = GELU(Z0) (constants as geluBiasAVX512 loads them;
// clobbers Z1-Z9).
#define GELU16 \
	VPANDD Z10, Z0, Z1; \
	VMOVAPS Z29, Z2; \
	VFMADD231PS Z11, Z1, Z2; \
	VRCP14PS Z2, Z3; \
	VMOVAPS Z29, Z4; \
	VFNMADD231PS Z3, Z2, Z4; \
	VFMADD231PS Z4, Z3, Z3; \
	VMOVAPS Z12, Z5; \
	VFMADD213PS Z13, Z3, Z5; \
	VFMADD213PS Z14, Z3, Z5; \
	VFMADD213PS Z15, Z3, Z5; \
	VFMADD213PS Z16, Z3, Z5; \
	VMULPS Z3, Z5, Z5; \
	VMULPS Z0, Z0, Z6; \
	VMULPS Z19, Z6, Z6; \
	EXP(Z6, Z7, Z8); \
	VMULPS Z8, Z5, Z5; \
	VMULPS Z17, Z5, Z5; \
	VSUBPS Z5, Z17, Z5; \
	VPANDD Z18, Z0, Z9; \
	VPXORD Z9, Z5, Z5; \
	VADDPS Z17, Z5, Z5; \
	VMULPS Z5, Z0, Z0

// func geluBiasAVX512(x, b *float32, n int)
//
// x[i] = GELU(x[i] + b[i]) for i < n, GELU(v) = v·Φ(v) with
// Φ(v) = ½(1 + erf(v/√2)) and erf by Abramowitz and Stegun 7.1.26
// (|error| ≤ 1.5e-7): for z = |v|/√2, 1 − erf(z) = q = t·poly(t)·e^(−z²),
// t = 1/(1 + p·z); Φ(v) = ½ + sign(v)·(½ − ½q).
TEXT ·geluBiasAVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ n+16(FP), DX
	EXPCONST
	VBROADCASTSS kc<>+40(SB), Z10
	VBROADCASTSS kc<>+44(SB), Z11
	VBROADCASTSS kc<>+48(SB), Z12
	VBROADCASTSS kc<>+52(SB), Z13
	VBROADCASTSS kc<>+56(SB), Z14
	VBROADCASTSS kc<>+60(SB), Z15
	VBROADCASTSS kc<>+64(SB), Z16
	VBROADCASTSS kc<>+68(SB), Z17
	VBROADCASTSS kc<>+72(SB), Z18
	VBROADCASTSS kc<>+76(SB), Z19
	MOVQ DX, CX
	ANDQ $15, CX
	SHRQ $4, DX
	JZ   gelutail

geluloop:
	VMOVUPS (DI), Z0
	VADDPS (SI), Z0, Z0
	GELU16
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	DECQ DX
	JNZ  geluloop

gelutail:
	TESTQ CX, CX
	JZ    geludone
	TAILMASK
	VMOVUPS.Z (DI), K1, Z0
	VMOVUPS.Z (SI), K1, Z1
	VADDPS Z1, Z0, Z0
	GELU16
	VMOVUPS Z0, K1, (DI)

geludone:
	VZEROUPPER
	RET

// func addSumAVX512(x, y, b *float32, n int) float32
//
// x[i] = (y[i] + b[i]) + x[i] for i < n; returns the sum of the new x.
TEXT ·addSumAVX512(SB), NOSPLIT, $0-36
	MOVQ x+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ n+24(FP), DX
	VXORPS Z9, Z9, Z9
	MOVQ DX, CX
	ANDQ $15, CX
	SHRQ $4, DX
	JZ   addtail

addloop:
	VMOVUPS (SI), Z1
	VADDPS (BX), Z1, Z1
	VADDPS (DI), Z1, Z1
	VMOVUPS Z1, (DI)
	VADDPS Z1, Z9, Z9
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, BX
	DECQ DX
	JNZ  addloop

addtail:
	TESTQ CX, CX
	JZ    adddone
	TAILMASK
	VMOVUPS.Z (SI), K1, Z1
	VMOVUPS.Z (BX), K1, Z2
	VMOVUPS.Z (DI), K1, Z3
	VADDPS Z2, Z1, Z1
	VADDPS Z3, Z1, Z1
	VMOVUPS Z1, K1, (DI)
	VADDPS Z1, Z9, Z9

adddone:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// func sqDevAVX512(x *float32, n int, mean float32) float32
//
// Returns the sum of (x[i] − mean)² for i < n.
TEXT ·sqDevAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), DX
	VBROADCASTSS mean+16(FP), Z31
	VXORPS Z9, Z9, Z9
	MOVQ DX, CX
	ANDQ $15, CX
	SHRQ $4, DX
	JZ   sqtail

sqloop:
	VMOVUPS (SI), Z1
	VSUBPS Z31, Z1, Z1
	VFMADD231PS Z1, Z1, Z9
	ADDQ $64, SI
	DECQ DX
	JNZ  sqloop

sqtail:
	TESTQ CX, CX
	JZ    sqdone
	TAILMASK
	VMOVUPS.Z (SI), K1, Z1
	VSUBPS.Z Z31, Z1, K1, Z1
	VFMADD231PS Z1, Z1, Z9

sqdone:
	HSUM
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func normAVX512(x, gain, b *float32, n int, mean, rstd float32)
//
// x[i] = (x[i] − mean)·rstd·gain[i] + b[i] for i < n.
TEXT ·normAVX512(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), DI
	MOVQ gain+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ n+24(FP), DX
	VBROADCASTSS mean+32(FP), Z30
	VBROADCASTSS rstd+36(FP), Z31
	MOVQ DX, CX
	ANDQ $15, CX
	SHRQ $4, DX
	JZ   normtail

normloop:
	VMOVUPS (DI), Z1
	VSUBPS Z30, Z1, Z1
	VMULPS Z31, Z1, Z1
	VMULPS (SI), Z1, Z1
	VADDPS (BX), Z1, Z1
	VMOVUPS Z1, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, BX
	DECQ DX
	JNZ  normloop

normtail:
	TESTQ CX, CX
	JZ    normdone
	TAILMASK
	VMOVUPS.Z (DI), K1, Z1
	VMOVUPS.Z (SI), K1, Z2
	VMOVUPS.Z (BX), K1, Z3
	VSUBPS Z30, Z1, Z1
	VMULPS Z31, Z1, Z1
	VMULPS Z2, Z1, Z1
	VADDPS Z3, Z1, Z1
	VMOVUPS Z1, K1, (DI)

normdone:
	VZEROUPPER
	RET

// func addScaleAVX512(dst, a, b *float32, n int, s float32)
//
// dst[i] = (a[i] + b[i])·s for i < n.
TEXT ·addScaleAVX512(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ n+24(FP), DX
	VBROADCASTSS s+32(FP), Z31
	MOVQ DX, CX
	ANDQ $15, CX
	SHRQ $4, DX
	JZ   astail

asloop:
	VMOVUPS (SI), Z1
	VADDPS (BX), Z1, Z1
	VMULPS Z31, Z1, Z1
	VMOVUPS Z1, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, BX
	DECQ DX
	JNZ  asloop

astail:
	TESTQ CX, CX
	JZ    asdone
	TAILMASK
	VMOVUPS.Z (SI), K1, Z1
	VMOVUPS.Z (BX), K1, Z2
	VADDPS Z2, Z1, Z1
	VMULPS Z31, Z1, Z1
	VMOVUPS Z1, K1, (DI)

asdone:
	VZEROUPPER
	RET

// func scaleAVX512(x *float32, n int, s float32)
//
// x[i] *= s for i < n.
TEXT ·scaleAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), DX
	VBROADCASTSS s+16(FP), Z31
	MOVQ DX, CX
	ANDQ $15, CX
	SHRQ $4, DX
	JZ   sctail

scloop:
	VMULPS (DI), Z31, Z1
	VMOVUPS Z1, (DI)
	ADDQ $64, DI
	DECQ DX
	JNZ  scloop

sctail:
	TESTQ CX, CX
	JZ    scdone
	TAILMASK
	VMOVUPS.Z (DI), K1, Z1
	VMULPS Z31, Z1, Z1
	VMOVUPS Z1, K1, (DI)

scdone:
	VZEROUPPER
	RET
