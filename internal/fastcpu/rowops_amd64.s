//go:build amd64 && !purego

#include "textflag.h"

// func sumSquaresAVX2(x *float32, n int) float32
//
// Returns the sum of x[i]² for i < n (n a multiple of 8), in eight lanes.
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	TESTQ CX, CX
	JZ   sqdone

sqloop:
	VMOVUPS (SI), Y1
	VMULPS  Y1, Y1, Y1
	VADDPS  Y1, Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  sqloop

sqdone:
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VADDPS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// func scaleGainAVX2(dst, x, w *float32, n int, s float32)
//
// dst[i] = (x[i]·s)·w[i] for i < n (n a multiple of 8), each product rounded.
TEXT ·scaleGainAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS s+32(FP), Y15
	TESTQ CX, CX
	JZ   sgdone

sgloop:
	VMULPS (SI), Y15, Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  sgloop

sgdone:
	VZEROUPPER
	RET

// func rotaryAVX2(dst, x, c, s *float32, h int)
//
// Rotate-half rotary embedding of one row of 2h values (h a multiple of 8):
// dst[j] = x[j]·c[j] − x[j+h]·s[j] and dst[j+h] = x[j+h]·c[j+h] + x[j]·s[j+h],
// each product rounded, as the unfused graph computes them.
TEXT ·rotaryAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ c+16(FP), R8
	MOVQ s+24(FP), R9
	MOVQ h+32(FP), CX
	MOVQ CX, DX
	SHLQ $2, DX // h in bytes
	TESTQ CX, CX
	JZ   rotdone

rotloop:
	VMOVUPS (SI), Y0        // x lo
	VMOVUPS (SI)(DX*1), Y1  // x hi
	VMULPS  (R8), Y0, Y2    // x lo · c lo
	VMULPS  (R9), Y1, Y3    // x hi · s lo
	VSUBPS  Y3, Y2, Y2
	VMOVUPS Y2, (DI)
	VMULPS  (R8)(DX*1), Y1, Y4 // x hi · c hi
	VMULPS  (R9)(DX*1), Y0, Y5 // x lo · s hi
	VADDPS  Y5, Y4, Y4
	VMOVUPS Y4, (DI)(DX*1)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  rotloop

rotdone:
	VZEROUPPER
	RET

// func gluAVX2(dst, gate, up *float32, n int)
//
// dst[i] = (gate[i]·dst[i])·up[i] for i < n (n a multiple of 8): dst holds the
// gate's logistic on entry.
TEXT ·gluAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ gate+8(FP), SI
	MOVQ up+16(FP), DX
	MOVQ n+24(FP), CX
	TESTQ CX, CX
	JZ   gludone

gluloop:
	VMOVUPS (DI), Y0
	VMULPS  (SI), Y0, Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  gluloop

gludone:
	VZEROUPPER
	RET
