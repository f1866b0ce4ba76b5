//go:build amd64 && !purego

#include "textflag.h"

// Vector constants, 8 lanes each: Cephes-style expf (range reduction by
// ln 2 in two parts, degree-5 polynomial), clamped below at ln(FLT_MIN).
DATA expc<>+0(SB)/4, $0xc2aeac4f
DATA expc<>+4(SB)/4, $0xc2aeac4f
DATA expc<>+8(SB)/4, $0xc2aeac4f
DATA expc<>+12(SB)/4, $0xc2aeac4f
DATA expc<>+16(SB)/4, $0xc2aeac4f
DATA expc<>+20(SB)/4, $0xc2aeac4f
DATA expc<>+24(SB)/4, $0xc2aeac4f
DATA expc<>+28(SB)/4, $0xc2aeac4f
DATA expc<>+32(SB)/4, $0x3fb8aa3b
DATA expc<>+36(SB)/4, $0x3fb8aa3b
DATA expc<>+40(SB)/4, $0x3fb8aa3b
DATA expc<>+44(SB)/4, $0x3fb8aa3b
DATA expc<>+48(SB)/4, $0x3fb8aa3b
DATA expc<>+52(SB)/4, $0x3fb8aa3b
DATA expc<>+56(SB)/4, $0x3fb8aa3b
DATA expc<>+60(SB)/4, $0x3fb8aa3b
DATA expc<>+64(SB)/4, $0x3f318000
DATA expc<>+68(SB)/4, $0x3f318000
DATA expc<>+72(SB)/4, $0x3f318000
DATA expc<>+76(SB)/4, $0x3f318000
DATA expc<>+80(SB)/4, $0x3f318000
DATA expc<>+84(SB)/4, $0x3f318000
DATA expc<>+88(SB)/4, $0x3f318000
DATA expc<>+92(SB)/4, $0x3f318000
DATA expc<>+96(SB)/4, $0xb95e8083
DATA expc<>+100(SB)/4, $0xb95e8083
DATA expc<>+104(SB)/4, $0xb95e8083
DATA expc<>+108(SB)/4, $0xb95e8083
DATA expc<>+112(SB)/4, $0xb95e8083
DATA expc<>+116(SB)/4, $0xb95e8083
DATA expc<>+120(SB)/4, $0xb95e8083
DATA expc<>+124(SB)/4, $0xb95e8083
DATA expc<>+128(SB)/4, $0x39506967
DATA expc<>+132(SB)/4, $0x39506967
DATA expc<>+136(SB)/4, $0x39506967
DATA expc<>+140(SB)/4, $0x39506967
DATA expc<>+144(SB)/4, $0x39506967
DATA expc<>+148(SB)/4, $0x39506967
DATA expc<>+152(SB)/4, $0x39506967
DATA expc<>+156(SB)/4, $0x39506967
DATA expc<>+160(SB)/4, $0x3ab743ce
DATA expc<>+164(SB)/4, $0x3ab743ce
DATA expc<>+168(SB)/4, $0x3ab743ce
DATA expc<>+172(SB)/4, $0x3ab743ce
DATA expc<>+176(SB)/4, $0x3ab743ce
DATA expc<>+180(SB)/4, $0x3ab743ce
DATA expc<>+184(SB)/4, $0x3ab743ce
DATA expc<>+188(SB)/4, $0x3ab743ce
DATA expc<>+192(SB)/4, $0x3c088908
DATA expc<>+196(SB)/4, $0x3c088908
DATA expc<>+200(SB)/4, $0x3c088908
DATA expc<>+204(SB)/4, $0x3c088908
DATA expc<>+208(SB)/4, $0x3c088908
DATA expc<>+212(SB)/4, $0x3c088908
DATA expc<>+216(SB)/4, $0x3c088908
DATA expc<>+220(SB)/4, $0x3c088908
DATA expc<>+224(SB)/4, $0x3d2aa9c1
DATA expc<>+228(SB)/4, $0x3d2aa9c1
DATA expc<>+232(SB)/4, $0x3d2aa9c1
DATA expc<>+236(SB)/4, $0x3d2aa9c1
DATA expc<>+240(SB)/4, $0x3d2aa9c1
DATA expc<>+244(SB)/4, $0x3d2aa9c1
DATA expc<>+248(SB)/4, $0x3d2aa9c1
DATA expc<>+252(SB)/4, $0x3d2aa9c1
DATA expc<>+256(SB)/4, $0x3e2aaaaa
DATA expc<>+260(SB)/4, $0x3e2aaaaa
DATA expc<>+264(SB)/4, $0x3e2aaaaa
DATA expc<>+268(SB)/4, $0x3e2aaaaa
DATA expc<>+272(SB)/4, $0x3e2aaaaa
DATA expc<>+276(SB)/4, $0x3e2aaaaa
DATA expc<>+280(SB)/4, $0x3e2aaaaa
DATA expc<>+284(SB)/4, $0x3e2aaaaa
DATA expc<>+288(SB)/4, $0x3f000000
DATA expc<>+292(SB)/4, $0x3f000000
DATA expc<>+296(SB)/4, $0x3f000000
DATA expc<>+300(SB)/4, $0x3f000000
DATA expc<>+304(SB)/4, $0x3f000000
DATA expc<>+308(SB)/4, $0x3f000000
DATA expc<>+312(SB)/4, $0x3f000000
DATA expc<>+316(SB)/4, $0x3f000000
DATA expc<>+320(SB)/4, $0x3f800000
DATA expc<>+324(SB)/4, $0x3f800000
DATA expc<>+328(SB)/4, $0x3f800000
DATA expc<>+332(SB)/4, $0x3f800000
DATA expc<>+336(SB)/4, $0x3f800000
DATA expc<>+340(SB)/4, $0x3f800000
DATA expc<>+344(SB)/4, $0x3f800000
DATA expc<>+348(SB)/4, $0x3f800000
DATA expc<>+352(SB)/4, $0xff800000
DATA expc<>+356(SB)/4, $0xff800000
DATA expc<>+360(SB)/4, $0xff800000
DATA expc<>+364(SB)/4, $0xff800000
DATA expc<>+368(SB)/4, $0xff800000
DATA expc<>+372(SB)/4, $0xff800000
DATA expc<>+376(SB)/4, $0xff800000
DATA expc<>+380(SB)/4, $0xff800000
DATA expc<>+384(SB)/4, $127
DATA expc<>+388(SB)/4, $127
DATA expc<>+392(SB)/4, $127
DATA expc<>+396(SB)/4, $127
DATA expc<>+400(SB)/4, $127
DATA expc<>+404(SB)/4, $127
DATA expc<>+408(SB)/4, $127
DATA expc<>+412(SB)/4, $127
DATA expc<>+416(SB)/4, $0x42b00000
DATA expc<>+420(SB)/4, $0x42b00000
DATA expc<>+424(SB)/4, $0x42b00000
DATA expc<>+428(SB)/4, $0x42b00000
DATA expc<>+432(SB)/4, $0x42b00000
DATA expc<>+436(SB)/4, $0x42b00000
DATA expc<>+440(SB)/4, $0x42b00000
DATA expc<>+444(SB)/4, $0x42b00000
GLOBL expc<>(SB), RODATA|NOPTR, $448

// EXPF sets R = exp(X) lane by lane, X clamped below at LO: Cephes-style
// range reduction by ln 2 in two parts (C1, C2) and a degree-5 polynomial
// (P0…P5). X, T and S are clobbered. The operands are registers or memory
// of one width (Y for AVX2, Z for AVX-512, so both compute the same value
// per lane); ROUND is that width's round-to-nearest (VROUNDPS or
// VRNDSCALEPS).
#define EXPF(X, T, R, S, LO, L2E, C1, C2, P0, P1, P2, P3, P4, P5, ONE, BIAS, ROUND) \
	VMAXPS LO, X, X; \
	VMULPS L2E, X, T; \
	ROUND $0, T, T; \
	VFNMADD231PS C1, T, X; \
	VFNMADD231PS C2, T, X; \
	VMULPS X, X, S; \
	VMOVAPS P0, R; \
	VFMADD213PS P1, X, R; \
	VFMADD213PS P2, X, R; \
	VFMADD213PS P3, X, R; \
	VFMADD213PS P4, X, R; \
	VFMADD213PS P5, X, R; \
	VFMADD213PS X, S, R; \
	VADDPS ONE, R, R; \
	VCVTPS2DQ T, T; \
	VPADDD BIAS, T, T; \
	VPSLLD $23, T, T; \
	VMULPS T, R, R

// func expSubSumAVX2(x *float32, n int, mx, scale float32) float32
//
// x[i] = exp(x[i]·scale - mx) for i < n (n a multiple of 8, one rounding
// for the product and difference; x[i]·scale <= mx); returns the sum of
// the new values.
TEXT ·expSubSumAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS mx+16(FP), Y15
	VBROADCASTSS scale+20(FP), Y10
	VXORPS Y14, Y14, Y14
	VMOVUPS expc<>+32(SB), Y11
	VMOVUPS expc<>+128(SB), Y8
	VMOVUPS expc<>+160(SB), Y7
	VMOVUPS expc<>+192(SB), Y6
	VMOVUPS expc<>+224(SB), Y5
	VMOVUPS expc<>+256(SB), Y4
	VMOVUPS expc<>+288(SB), Y3
	VMOVUPS expc<>+320(SB), Y2
	TESTQ CX, CX
	JZ   expdone

exploop:
	VMOVUPS (DI), Y0
	VFMSUB213PS Y15, Y10, Y0
	EXPF(Y0, Y1, Y12, Y13, expc<>+0(SB), Y11, expc<>+64(SB), expc<>+96(SB), Y8, Y7, Y6, Y5, Y4, Y3, Y2, expc<>+384(SB), VROUNDPS)
	VMOVUPS Y12, (DI)
	VADDPS Y12, Y14, Y14
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  exploop

expdone:
	VEXTRACTF128 $1, Y14, X0
	VADDPS X14, X0, X0
	VPERMILPS $0x4E, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VADDPS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func scaleMaxAVX2(x *float32, n int, scale float32) float32
//
// x[i] *= scale for i < n (n a multiple of 8); returns the maximum (-Inf
// when n is 0).
TEXT ·scaleMaxAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y15
	VMOVUPS expc<>+352(SB), Y14
	TESTQ CX, CX
	JZ   maxdone

maxloop:
	VMULPS (DI), Y15, Y0
	VMOVUPS Y0, (DI)
	VMAXPS Y0, Y14, Y14
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  maxloop

maxdone:
	VEXTRACTF128 $1, Y14, X0
	VMAXPS X14, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func mulAVX2(x *float32, n int, f float32)
//
// x[i] *= f for i < n (n a multiple of 8).
TEXT ·mulAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS f+16(FP), Y15
	TESTQ CX, CX
	JZ   muldone

mulloop:
	VMULPS (DI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  mulloop

muldone:
	VZEROUPPER
	RET

// func logisticAVX2(dst, src *float32, n int)
//
// dst[i] = 1/(1+exp(-src[i])) for i < n (n a multiple of 8).
TEXT ·logisticAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPS expc<>+32(SB), Y11
	VMOVUPS expc<>+128(SB), Y8
	VMOVUPS expc<>+160(SB), Y7
	VMOVUPS expc<>+192(SB), Y6
	VMOVUPS expc<>+224(SB), Y5
	VMOVUPS expc<>+256(SB), Y4
	VMOVUPS expc<>+288(SB), Y3
	VMOVUPS expc<>+320(SB), Y2
	VXORPS Y15, Y15, Y15
	TESTQ CX, CX
	JZ   logdone

logloop:
	VMOVUPS (SI), Y0
	VSUBPS Y0, Y15, Y0
	VMINPS expc<>+416(SB), Y0, Y0
	EXPF(Y0, Y1, Y12, Y13, expc<>+0(SB), Y11, expc<>+64(SB), expc<>+96(SB), Y8, Y7, Y6, Y5, Y4, Y3, Y2, expc<>+384(SB), VROUNDPS)
	VADDPS Y2, Y12, Y12
	VDIVPS Y12, Y2, Y12
	VMOVUPS Y12, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  logloop

logdone:
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) float32
//
// The maximum of x[i] for i < n (n a multiple of 8; -Inf when n is 0).
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VMOVUPS expc<>+352(SB), Y14
	TESTQ CX, CX
	JZ   rmaxdone

rmaxloop:
	VMAXPS (DI), Y14, Y14
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  rmaxloop

rmaxdone:
	VEXTRACTF128 $1, Y14, X0
	VMAXPS X14, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// func expSubSumAVX512(x *float32, n int, mx, scale float32) float32
//
// expSubSumAVX2 with 16 lanes (n a multiple of 16); the same constants
// and operations lane by lane, so each x[i] gets the same value.
TEXT ·expSubSumAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS mx+16(FP), Z15
	VBROADCASTSS scale+20(FP), Z10
	VPXORD Z14, Z14, Z14
	VBROADCASTSS expc<>+0(SB), Z9
	VBROADCASTSS expc<>+32(SB), Z11
	VBROADCASTSS expc<>+64(SB), Z16
	VBROADCASTSS expc<>+96(SB), Z17
	VBROADCASTSS expc<>+128(SB), Z8
	VBROADCASTSS expc<>+160(SB), Z7
	VBROADCASTSS expc<>+192(SB), Z6
	VBROADCASTSS expc<>+224(SB), Z5
	VBROADCASTSS expc<>+256(SB), Z4
	VBROADCASTSS expc<>+288(SB), Z3
	VBROADCASTSS expc<>+320(SB), Z2
	VPBROADCASTD expc<>+384(SB), Z18
	TESTQ CX, CX
	JZ   exp16done

exp16loop:
	VMOVUPS (DI), Z0
	VFMSUB213PS Z15, Z10, Z0
	EXPF(Z0, Z1, Z12, Z13, Z9, Z11, Z16, Z17, Z8, Z7, Z6, Z5, Z4, Z3, Z2, Z18, VRNDSCALEPS)
	VMOVUPS Z12, (DI)
	VADDPS Z12, Z14, Z14
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ  exp16loop

exp16done:
	VEXTRACTF32X8 $1, Z14, Y0
	VADDPS Y14, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VADDPS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func maxAVX512(x *float32, n int) float32
//
// maxAVX2 with 16 lanes (n a multiple of 16).
TEXT ·maxAVX512(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS expc<>+352(SB), Z14
	TESTQ CX, CX
	JZ   max16done

max16loop:
	VMAXPS (DI), Z14, Z14
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ  max16loop

max16done:
	VEXTRACTF32X8 $1, Z14, Y0
	VMAXPS Y14, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET
