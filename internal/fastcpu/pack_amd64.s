//go:build amd64 && !purego

#include "textflag.h"

// TRANSPOSE8 transposes the 8×8 block in Y0..Y7 (row i in Yi) into Y8..Y15
// (column j in Y(8+j)); Y0..Y7 are clobbered.
#define TRANSPOSE8 \
	VUNPCKLPS Y1, Y0, Y8 \
	VUNPCKHPS Y1, Y0, Y9 \
	VUNPCKLPS Y3, Y2, Y10 \
	VUNPCKHPS Y3, Y2, Y11 \
	VUNPCKLPS Y5, Y4, Y12 \
	VUNPCKHPS Y5, Y4, Y13 \
	VUNPCKLPS Y7, Y6, Y14 \
	VUNPCKHPS Y7, Y6, Y15 \
	VSHUFPS $0x44, Y10, Y8, Y0 \
	VSHUFPS $0xEE, Y10, Y8, Y1 \
	VSHUFPS $0x44, Y11, Y9, Y2 \
	VSHUFPS $0xEE, Y11, Y9, Y3 \
	VSHUFPS $0x44, Y14, Y12, Y4 \
	VSHUFPS $0xEE, Y14, Y12, Y5 \
	VSHUFPS $0x44, Y15, Y13, Y6 \
	VSHUFPS $0xEE, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8 \
	VPERM2F128 $0x20, Y5, Y1, Y9 \
	VPERM2F128 $0x20, Y6, Y2, Y10 \
	VPERM2F128 $0x20, Y7, Y3, Y11 \
	VPERM2F128 $0x31, Y4, Y0, Y12 \
	VPERM2F128 $0x31, Y5, Y1, Y13 \
	VPERM2F128 $0x31, Y6, Y2, Y14 \
	VPERM2F128 $0x31, Y7, Y3, Y15

// STORE6 writes the first six floats of Yr (Xr its low half) at off(DI).
#define STORE6(Yr, Xr, off) \
	VMOVUPS Xr, off(DI) \
	VEXTRACTF128 $1, Yr, X0 \
	VMOVQ X0, off+16(DI)

// func packA6AVX2(panel, src *float32, ld, n8 int)
//
// Packs 8·n8 depth steps of six rows (row i at src+i·ld floats) into panel
// as groups of six floats, one group per step.
TEXT ·packA6AVX2(SB), NOSPLIT, $0-32
	MOVQ panel+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	MOVQ n8+24(FP), CX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R11 // 3·ld bytes
	TESTQ CX, CX
	JEQ  doneA

loopA:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(DX*1), Y1
	VMOVUPS (SI)(DX*2), Y2
	VMOVUPS (SI)(R11*1), Y3
	VMOVUPS (SI)(DX*4), Y4
	LEAQ    (SI)(DX*4), R12
	VMOVUPS (R12)(DX*1), Y5
	VXORPS  Y6, Y6, Y6
	VXORPS  Y7, Y7, Y7
	TRANSPOSE8
	STORE6(Y8, X8, 0)
	STORE6(Y9, X9, 24)
	STORE6(Y10, X10, 48)
	STORE6(Y11, X11, 72)
	STORE6(Y12, X12, 96)
	STORE6(Y13, X13, 120)
	STORE6(Y14, X14, 144)
	STORE6(Y15, X15, 168)
	ADDQ $32, SI
	ADDQ $192, DI
	DECQ CX
	JNZ  loopA

doneA:
	VZEROUPPER
	RET

// func packB16TAVX2(panel, src *float32, ld, n8 int)
//
// Packs 8·n8 depth steps of 16 columns stored as rows (column j at
// src+j·ld floats) into panel as groups of 16 floats, one group per step.
TEXT ·packB16TAVX2(SB), NOSPLIT, $0-32
	MOVQ panel+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	MOVQ n8+24(FP), CX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R11 // 3·ld bytes
	LEAQ (DX)(DX*4), R12 // 5·ld
	LEAQ (R11)(DX*4), R13 // 7·ld
	LEAQ (SI)(DX*8), R8   // columns 8..15
	TESTQ CX, CX
	JEQ  doneB

loopB:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(DX*1), Y1
	VMOVUPS (SI)(DX*2), Y2
	VMOVUPS (SI)(R11*1), Y3
	VMOVUPS (SI)(DX*4), Y4
	VMOVUPS (SI)(R12*1), Y5
	VMOVUPS (SI)(R11*2), Y6
	VMOVUPS (SI)(R13*1), Y7
	TRANSPOSE8
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, 64(DI)
	VMOVUPS Y10, 128(DI)
	VMOVUPS Y11, 192(DI)
	VMOVUPS Y12, 256(DI)
	VMOVUPS Y13, 320(DI)
	VMOVUPS Y14, 384(DI)
	VMOVUPS Y15, 448(DI)
	VMOVUPS (R8), Y0
	VMOVUPS (R8)(DX*1), Y1
	VMOVUPS (R8)(DX*2), Y2
	VMOVUPS (R8)(R11*1), Y3
	VMOVUPS (R8)(DX*4), Y4
	VMOVUPS (R8)(R12*1), Y5
	VMOVUPS (R8)(R11*2), Y6
	VMOVUPS (R8)(R13*1), Y7
	TRANSPOSE8
	VMOVUPS Y8, 32(DI)
	VMOVUPS Y9, 96(DI)
	VMOVUPS Y10, 160(DI)
	VMOVUPS Y11, 224(DI)
	VMOVUPS Y12, 288(DI)
	VMOVUPS Y13, 352(DI)
	VMOVUPS Y14, 416(DI)
	VMOVUPS Y15, 480(DI)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $512, DI
	DECQ CX
	JNZ  loopB

doneB:
	VZEROUPPER
	RET

// LOADBF16(addr, Yr) widens 8 bfloat16 values at addr into float32 lanes.
#define LOADBF16(addr, Yr) \
	VPMOVZXWD addr, Yr \
	VPSLLD $16, Yr, Yr

// func packB16TBF16AVX2(panel *float32, src *uint16, ld, n8 int)
//
// packB16TAVX2 for bfloat16 columns: widened to float32 on the way.
TEXT ·packB16TBF16AVX2(SB), NOSPLIT, $0-32
	MOVQ panel+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), DX
	MOVQ n8+24(FP), CX
	SHLQ $1, DX
	LEAQ (DX)(DX*2), R11 // 3·ld bytes
	LEAQ (DX)(DX*4), R12 // 5·ld
	LEAQ (R11)(DX*4), R13 // 7·ld
	LEAQ (SI)(DX*8), R8   // columns 8..15
	TESTQ CX, CX
	JEQ  doneH

loopH:
	LOADBF16((SI), Y0)
	LOADBF16((SI)(DX*1), Y1)
	LOADBF16((SI)(DX*2), Y2)
	LOADBF16((SI)(R11*1), Y3)
	LOADBF16((SI)(DX*4), Y4)
	LOADBF16((SI)(R12*1), Y5)
	LOADBF16((SI)(R11*2), Y6)
	LOADBF16((SI)(R13*1), Y7)
	TRANSPOSE8
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, 64(DI)
	VMOVUPS Y10, 128(DI)
	VMOVUPS Y11, 192(DI)
	VMOVUPS Y12, 256(DI)
	VMOVUPS Y13, 320(DI)
	VMOVUPS Y14, 384(DI)
	VMOVUPS Y15, 448(DI)
	LOADBF16((R8), Y0)
	LOADBF16((R8)(DX*1), Y1)
	LOADBF16((R8)(DX*2), Y2)
	LOADBF16((R8)(R11*1), Y3)
	LOADBF16((R8)(DX*4), Y4)
	LOADBF16((R8)(R12*1), Y5)
	LOADBF16((R8)(R11*2), Y6)
	LOADBF16((R8)(R13*1), Y7)
	TRANSPOSE8
	VMOVUPS Y8, 32(DI)
	VMOVUPS Y9, 96(DI)
	VMOVUPS Y10, 160(DI)
	VMOVUPS Y11, 224(DI)
	VMOVUPS Y12, 288(DI)
	VMOVUPS Y13, 352(DI)
	VMOVUPS Y14, 416(DI)
	VMOVUPS Y15, 480(DI)
	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $512, DI
	DECQ CX
	JNZ  loopH

doneH:
	VZEROUPPER
	RET
