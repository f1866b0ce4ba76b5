//go:build amd64 && !purego

#include "textflag.h"

// The AVX2+FMA twins of kernels_amd64.s for CPUs without AVX-512: 8 lanes,
// n a multiple of 8 (the Go wrappers do the rest of a row), constants read
// from memory as 8-lane vectors (16 Y registers do not hold them all), and
// 2^n built in the exponent bits (VSCALEFPS is AVX-512).

// lo: -88, exp's lower clamp
DATA kc2<>+0(SB)/4, $0xc2b00000
DATA kc2<>+4(SB)/4, $0xc2b00000
DATA kc2<>+8(SB)/4, $0xc2b00000
DATA kc2<>+12(SB)/4, $0xc2b00000
DATA kc2<>+16(SB)/4, $0xc2b00000
DATA kc2<>+20(SB)/4, $0xc2b00000
DATA kc2<>+24(SB)/4, $0xc2b00000
DATA kc2<>+28(SB)/4, $0xc2b00000
// log2e: log2(e)
DATA kc2<>+32(SB)/4, $0x3fb8aa3b
DATA kc2<>+36(SB)/4, $0x3fb8aa3b
DATA kc2<>+40(SB)/4, $0x3fb8aa3b
DATA kc2<>+44(SB)/4, $0x3fb8aa3b
DATA kc2<>+48(SB)/4, $0x3fb8aa3b
DATA kc2<>+52(SB)/4, $0x3fb8aa3b
DATA kc2<>+56(SB)/4, $0x3fb8aa3b
DATA kc2<>+60(SB)/4, $0x3fb8aa3b
// ln2hi: ln 2, high part
DATA kc2<>+64(SB)/4, $0x3f318000
DATA kc2<>+68(SB)/4, $0x3f318000
DATA kc2<>+72(SB)/4, $0x3f318000
DATA kc2<>+76(SB)/4, $0x3f318000
DATA kc2<>+80(SB)/4, $0x3f318000
DATA kc2<>+84(SB)/4, $0x3f318000
DATA kc2<>+88(SB)/4, $0x3f318000
DATA kc2<>+92(SB)/4, $0x3f318000
// ln2lo: ln 2, low part
DATA kc2<>+96(SB)/4, $0xb95e8083
DATA kc2<>+100(SB)/4, $0xb95e8083
DATA kc2<>+104(SB)/4, $0xb95e8083
DATA kc2<>+108(SB)/4, $0xb95e8083
DATA kc2<>+112(SB)/4, $0xb95e8083
DATA kc2<>+116(SB)/4, $0xb95e8083
DATA kc2<>+120(SB)/4, $0xb95e8083
DATA kc2<>+124(SB)/4, $0xb95e8083
// c6: exp c6
DATA kc2<>+128(SB)/4, $0x3ab43e12
DATA kc2<>+132(SB)/4, $0x3ab43e12
DATA kc2<>+136(SB)/4, $0x3ab43e12
DATA kc2<>+140(SB)/4, $0x3ab43e12
DATA kc2<>+144(SB)/4, $0x3ab43e12
DATA kc2<>+148(SB)/4, $0x3ab43e12
DATA kc2<>+152(SB)/4, $0x3ab43e12
DATA kc2<>+156(SB)/4, $0x3ab43e12
// c5: exp c5
DATA kc2<>+160(SB)/4, $0x3c091dca
DATA kc2<>+164(SB)/4, $0x3c091dca
DATA kc2<>+168(SB)/4, $0x3c091dca
DATA kc2<>+172(SB)/4, $0x3c091dca
DATA kc2<>+176(SB)/4, $0x3c091dca
DATA kc2<>+180(SB)/4, $0x3c091dca
DATA kc2<>+184(SB)/4, $0x3c091dca
DATA kc2<>+188(SB)/4, $0x3c091dca
// c4: exp c4
DATA kc2<>+192(SB)/4, $0x3d2aadac
DATA kc2<>+196(SB)/4, $0x3d2aadac
DATA kc2<>+200(SB)/4, $0x3d2aadac
DATA kc2<>+204(SB)/4, $0x3d2aadac
DATA kc2<>+208(SB)/4, $0x3d2aadac
DATA kc2<>+212(SB)/4, $0x3d2aadac
DATA kc2<>+216(SB)/4, $0x3d2aadac
DATA kc2<>+220(SB)/4, $0x3d2aadac
// c3: exp c3
DATA kc2<>+224(SB)/4, $0x3e2aaa47
DATA kc2<>+228(SB)/4, $0x3e2aaa47
DATA kc2<>+232(SB)/4, $0x3e2aaa47
DATA kc2<>+236(SB)/4, $0x3e2aaa47
DATA kc2<>+240(SB)/4, $0x3e2aaa47
DATA kc2<>+244(SB)/4, $0x3e2aaa47
DATA kc2<>+248(SB)/4, $0x3e2aaa47
DATA kc2<>+252(SB)/4, $0x3e2aaa47
// c2: exp c2
DATA kc2<>+256(SB)/4, $0x3efffffc
DATA kc2<>+260(SB)/4, $0x3efffffc
DATA kc2<>+264(SB)/4, $0x3efffffc
DATA kc2<>+268(SB)/4, $0x3efffffc
DATA kc2<>+272(SB)/4, $0x3efffffc
DATA kc2<>+276(SB)/4, $0x3efffffc
DATA kc2<>+280(SB)/4, $0x3efffffc
DATA kc2<>+284(SB)/4, $0x3efffffc
// one: 1
DATA kc2<>+288(SB)/4, $0x3f800000
DATA kc2<>+292(SB)/4, $0x3f800000
DATA kc2<>+296(SB)/4, $0x3f800000
DATA kc2<>+300(SB)/4, $0x3f800000
DATA kc2<>+304(SB)/4, $0x3f800000
DATA kc2<>+308(SB)/4, $0x3f800000
DATA kc2<>+312(SB)/4, $0x3f800000
DATA kc2<>+316(SB)/4, $0x3f800000
// bias: the float32 exponent bias
DATA kc2<>+320(SB)/4, $127
DATA kc2<>+324(SB)/4, $127
DATA kc2<>+328(SB)/4, $127
DATA kc2<>+332(SB)/4, $127
DATA kc2<>+336(SB)/4, $127
DATA kc2<>+340(SB)/4, $127
DATA kc2<>+344(SB)/4, $127
DATA kc2<>+348(SB)/4, $127
// abs: abs mask
DATA kc2<>+352(SB)/4, $0x7fffffff
DATA kc2<>+356(SB)/4, $0x7fffffff
DATA kc2<>+360(SB)/4, $0x7fffffff
DATA kc2<>+364(SB)/4, $0x7fffffff
DATA kc2<>+368(SB)/4, $0x7fffffff
DATA kc2<>+372(SB)/4, $0x7fffffff
DATA kc2<>+376(SB)/4, $0x7fffffff
DATA kc2<>+380(SB)/4, $0x7fffffff
// p: erf p/√2
DATA kc2<>+384(SB)/4, $0x3e6d3388
DATA kc2<>+388(SB)/4, $0x3e6d3388
DATA kc2<>+392(SB)/4, $0x3e6d3388
DATA kc2<>+396(SB)/4, $0x3e6d3388
DATA kc2<>+400(SB)/4, $0x3e6d3388
DATA kc2<>+404(SB)/4, $0x3e6d3388
DATA kc2<>+408(SB)/4, $0x3e6d3388
DATA kc2<>+412(SB)/4, $0x3e6d3388
// a5: erf a5
DATA kc2<>+416(SB)/4, $0x3f87dc22
DATA kc2<>+420(SB)/4, $0x3f87dc22
DATA kc2<>+424(SB)/4, $0x3f87dc22
DATA kc2<>+428(SB)/4, $0x3f87dc22
DATA kc2<>+432(SB)/4, $0x3f87dc22
DATA kc2<>+436(SB)/4, $0x3f87dc22
DATA kc2<>+440(SB)/4, $0x3f87dc22
DATA kc2<>+444(SB)/4, $0x3f87dc22
// a4: erf a4
DATA kc2<>+448(SB)/4, $0xbfba00e3
DATA kc2<>+452(SB)/4, $0xbfba00e3
DATA kc2<>+456(SB)/4, $0xbfba00e3
DATA kc2<>+460(SB)/4, $0xbfba00e3
DATA kc2<>+464(SB)/4, $0xbfba00e3
DATA kc2<>+468(SB)/4, $0xbfba00e3
DATA kc2<>+472(SB)/4, $0xbfba00e3
DATA kc2<>+476(SB)/4, $0xbfba00e3
// a3: erf a3
DATA kc2<>+480(SB)/4, $0x3fb5f0e3
DATA kc2<>+484(SB)/4, $0x3fb5f0e3
DATA kc2<>+488(SB)/4, $0x3fb5f0e3
DATA kc2<>+492(SB)/4, $0x3fb5f0e3
DATA kc2<>+496(SB)/4, $0x3fb5f0e3
DATA kc2<>+500(SB)/4, $0x3fb5f0e3
DATA kc2<>+504(SB)/4, $0x3fb5f0e3
DATA kc2<>+508(SB)/4, $0x3fb5f0e3
// a2: erf a2
DATA kc2<>+512(SB)/4, $0xbe91a98e
DATA kc2<>+516(SB)/4, $0xbe91a98e
DATA kc2<>+520(SB)/4, $0xbe91a98e
DATA kc2<>+524(SB)/4, $0xbe91a98e
DATA kc2<>+528(SB)/4, $0xbe91a98e
DATA kc2<>+532(SB)/4, $0xbe91a98e
DATA kc2<>+536(SB)/4, $0xbe91a98e
DATA kc2<>+540(SB)/4, $0xbe91a98e
// a1: erf a1
DATA kc2<>+544(SB)/4, $0x3e827906
DATA kc2<>+548(SB)/4, $0x3e827906
DATA kc2<>+552(SB)/4, $0x3e827906
DATA kc2<>+556(SB)/4, $0x3e827906
DATA kc2<>+560(SB)/4, $0x3e827906
DATA kc2<>+564(SB)/4, $0x3e827906
DATA kc2<>+568(SB)/4, $0x3e827906
DATA kc2<>+572(SB)/4, $0x3e827906
// half: 0.5
DATA kc2<>+576(SB)/4, $0x3f000000
DATA kc2<>+580(SB)/4, $0x3f000000
DATA kc2<>+584(SB)/4, $0x3f000000
DATA kc2<>+588(SB)/4, $0x3f000000
DATA kc2<>+592(SB)/4, $0x3f000000
DATA kc2<>+596(SB)/4, $0x3f000000
DATA kc2<>+600(SB)/4, $0x3f000000
DATA kc2<>+604(SB)/4, $0x3f000000
// sign: sign mask
DATA kc2<>+608(SB)/4, $0x80000000
DATA kc2<>+612(SB)/4, $0x80000000
DATA kc2<>+616(SB)/4, $0x80000000
DATA kc2<>+620(SB)/4, $0x80000000
DATA kc2<>+624(SB)/4, $0x80000000
DATA kc2<>+628(SB)/4, $0x80000000
DATA kc2<>+632(SB)/4, $0x80000000
DATA kc2<>+636(SB)/4, $0x80000000
// mhalf: -0.5
DATA kc2<>+640(SB)/4, $0xbf000000
DATA kc2<>+644(SB)/4, $0xbf000000
DATA kc2<>+648(SB)/4, $0xbf000000
DATA kc2<>+652(SB)/4, $0xbf000000
DATA kc2<>+656(SB)/4, $0xbf000000
DATA kc2<>+660(SB)/4, $0xbf000000
DATA kc2<>+664(SB)/4, $0xbf000000
DATA kc2<>+668(SB)/4, $0xbf000000
// ninf: -Inf
DATA kc2<>+672(SB)/4, $0xff800000
DATA kc2<>+676(SB)/4, $0xff800000
DATA kc2<>+680(SB)/4, $0xff800000
DATA kc2<>+684(SB)/4, $0xff800000
DATA kc2<>+688(SB)/4, $0xff800000
DATA kc2<>+692(SB)/4, $0xff800000
DATA kc2<>+696(SB)/4, $0xff800000
DATA kc2<>+700(SB)/4, $0xff800000
GLOBL kc2<>(SB), RODATA|NOPTR, $704

// EXP2 sets R = exp(X) in 8 lanes for X <= 0 (X and T clobbered), as EXP
// in kernels_amd64.s; at the -88 clamp n is -127 and 2^n is built as 0.
#define EXP2(X, T, R) \
	VMAXPS kc2<>+0(SB), X, X; \
	VMULPS kc2<>+32(SB), X, T; \
	VROUNDPS $0, T, T; \
	VFNMADD231PS kc2<>+64(SB), T, X; \
	VFNMADD231PS kc2<>+96(SB), T, X; \
	VMOVUPS kc2<>+128(SB), R; \
	VFMADD213PS kc2<>+160(SB), X, R; \
	VFMADD213PS kc2<>+192(SB), X, R; \
	VFMADD213PS kc2<>+224(SB), X, R; \
	VFMADD213PS kc2<>+256(SB), X, R; \
	VMULPS X, R, R; \
	VFMADD213PS X, X, R; \
	VADDPS kc2<>+288(SB), R, R; \
	VCVTPS2DQ T, T; \
	VPADDD kc2<>+320(SB), T, T; \
	VPSLLD $23, T, T; \
	VMULPS T, R, R

// GELU8 sets Y0 = GELU(Y0), as GELU16 (clobbers Y1-Y9).
#define GELU8 \
	VANDPS kc2<>+352(SB), Y0, Y1; \
	VMOVUPS kc2<>+288(SB), Y2; \
	VFMADD231PS kc2<>+384(SB), Y1, Y2; \
	VRCPPS Y2, Y3; \
	VMOVUPS kc2<>+288(SB), Y4; \
	VFNMADD231PS Y3, Y2, Y4; \
	VFMADD231PS Y4, Y3, Y3; \
	VMOVUPS kc2<>+416(SB), Y5; \
	VFMADD213PS kc2<>+448(SB), Y3, Y5; \
	VFMADD213PS kc2<>+480(SB), Y3, Y5; \
	VFMADD213PS kc2<>+512(SB), Y3, Y5; \
	VFMADD213PS kc2<>+544(SB), Y3, Y5; \
	VMULPS Y3, Y5, Y5; \
	VMULPS Y0, Y0, Y6; \
	VMULPS kc2<>+640(SB), Y6, Y6; \
	EXP2(Y6, Y7, Y8); \
	VMULPS Y8, Y5, Y5; \
	VMULPS kc2<>+576(SB), Y5, Y5; \
	VMOVUPS kc2<>+576(SB), Y9; \
	VSUBPS Y5, Y9, Y5; \
	VANDPS kc2<>+608(SB), Y0, Y9; \
	VXORPS Y9, Y5, Y5; \
	VADDPS kc2<>+576(SB), Y5, Y5; \
	VMULPS Y5, Y0, Y0

// HSUM8 sets X0 to the sum of Y9's lanes (clobbers Y0, Y1).
#define HSUM8 \
	VEXTRACTF128 $1, Y9, X0; \
	VADDPS X9, X0, X0; \
	VPERMILPS $0x4E, X0, X1; \
	VADDPS X1, X0, X0; \
	VPERMILPS $0xB1, X0, X1; \
	VADDPS X1, X0, X0

// func maxAVX2(x *float32, n int) float32
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), DX
	VMOVUPS kc2<>+672(SB), Y8
	SHRQ $3, DX
	JZ   mx2done

mx2loop:
	VMAXPS (SI), Y8, Y8
	ADDQ $32, SI
	DECQ DX
	JNZ  mx2loop

mx2done:
	VEXTRACTF128 $1, Y8, X0
	VMAXPS X8, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// func expSubSumAVX2(x *float32, n int, mx float32) float32
//
// x[i] = exp(x[i] − mx); returns the sum of the new values.
TEXT ·expSubSumAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), DX
	VBROADCASTSS mx+16(FP), Y15
	VXORPS Y9, Y9, Y9
	SHRQ $3, DX
	JZ   es2done

es2loop:
	VMOVUPS (SI), Y1
	VSUBPS Y15, Y1, Y1
	EXP2(Y1, Y2, Y3)
	VMOVUPS Y3, (SI)
	VADDPS Y3, Y9, Y9
	ADDQ $32, SI
	DECQ DX
	JNZ  es2loop

es2done:
	HSUM8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func geluBiasAVX2(x, b *float32, n int)
TEXT ·geluBiasAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ n+16(FP), DX
	SHRQ $3, DX
	JZ   ge2done

ge2loop:
	VMOVUPS (DI), Y0
	VADDPS (SI), Y0, Y0
	GELU8
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	DECQ DX
	JNZ  ge2loop

ge2done:
	VZEROUPPER
	RET

// func addSumAVX2(x, y, b *float32, n int) float32
TEXT ·addSumAVX2(SB), NOSPLIT, $0-36
	MOVQ x+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ n+24(FP), DX
	VXORPS Y9, Y9, Y9
	SHRQ $3, DX
	JZ   as2done

as2loop:
	VMOVUPS (SI), Y1
	VADDPS (BX), Y1, Y1
	VADDPS (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	VADDPS Y1, Y9, Y9
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, BX
	DECQ DX
	JNZ  as2loop

as2done:
	HSUM8
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// func sqDevAVX2(x *float32, n int, mean float32) float32
TEXT ·sqDevAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), DX
	VBROADCASTSS mean+16(FP), Y15
	VXORPS Y9, Y9, Y9
	SHRQ $3, DX
	JZ   sq2done

sq2loop:
	VMOVUPS (SI), Y1
	VSUBPS Y15, Y1, Y1
	VFMADD231PS Y1, Y1, Y9
	ADDQ $32, SI
	DECQ DX
	JNZ  sq2loop

sq2done:
	HSUM8
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func normAVX2(x, gain, b *float32, n int, mean, rstd float32)
TEXT ·normAVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), DI
	MOVQ gain+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ n+24(FP), DX
	VBROADCASTSS mean+32(FP), Y14
	VBROADCASTSS rstd+36(FP), Y15
	SHRQ $3, DX
	JZ   no2done

no2loop:
	VMOVUPS (DI), Y1
	VSUBPS Y14, Y1, Y1
	VMULPS Y15, Y1, Y1
	VMULPS (SI), Y1, Y1
	VADDPS (BX), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, BX
	DECQ DX
	JNZ  no2loop

no2done:
	VZEROUPPER
	RET

// func addScaleAVX2(dst, a, b *float32, n int, s float32)
TEXT ·addScaleAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ n+24(FP), DX
	VBROADCASTSS s+32(FP), Y15
	SHRQ $3, DX
	JZ   ad2done

ad2loop:
	VMOVUPS (SI), Y1
	VADDPS (BX), Y1, Y1
	VMULPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, BX
	DECQ DX
	JNZ  ad2loop

ad2done:
	VZEROUPPER
	RET

// func scaleAVX2(x *float32, n int, s float32)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), DX
	VBROADCASTSS s+16(FP), Y15
	SHRQ $3, DX
	JZ   sc2done

sc2loop:
	VMULPS (DI), Y15, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	DECQ DX
	JNZ  sc2loop

sc2done:
	VZEROUPPER
	RET
