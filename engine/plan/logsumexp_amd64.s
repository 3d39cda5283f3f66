#include "textflag.h"

// Four-lane copies of the constants of math.Exp's amd64 path
// (src/math/exp_amd64.s), 32 bytes each.
#define C4(off, v) DATA expc<>+(off+0)(SB)/8, v; DATA expc<>+(off+8)(SB)/8, v; DATA expc<>+(off+16)(SB)/8, v; DATA expc<>+(off+24)(SB)/8, v

C4(0, $1.4426950408889634073599246810018920)    // LOG2E
C4(32, $0.69314718055966295651160180568695068359375) // LN2U
C4(64, $0.28235290563031577122588448175013436025525412068e-12) // LN2L
C4(96, $0.0625)
C4(128, $2.4801587301587301587e-5)
C4(160, $1.9841269841269841270e-4)
C4(192, $1.3888888888888888889e-3)
C4(224, $8.3333333333333333333e-3)
C4(256, $4.1666666666666666667e-2)
C4(288, $1.6666666666666666667e-1)
C4(320, $0.5)
C4(352, $1.0)
C4(384, $2.0)
C4(416, $-700.0)
C4(448, $700.0)
C4(480, $1023)
GLOBL expc<>(SB), RODATA, $512

// func expSum4(s *float32, n int, m float32, sum float64) (float64, int)
TEXT ·expSum4(SB), NOSPLIT, $0-48
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), X15
	MOVSD        sum+24(FP), X14
	XORQ         AX, AX

loop:
	CMPQ      AX, CX
	JGE       done
	VMOVUPS   (SI)(AX*4), X0
	VSUBPS    X15, X0, X0
	VCVTPS2PD X0, Y0

	// every lane in [-700, 700] (not NaN), else stop before these four
	VCMPPD    $0x1D, expc<>+416(SB), Y0, Y1 // >= -700
	VCMPPD    $0x12, expc<>+448(SB), Y0, Y2 // <= 700
	VANDPD    Y2, Y1, Y1
	VMOVMSKPD Y1, DX
	CMPQ      DX, $15
	JNE       done

	// exponent k = round(x·log2e); x -= k·ln2 (two parts); x /= 16
	VMULPD       expc<>+0(SB), Y0, Y1
	VCVTPD2DQY   Y1, X2
	VCVTDQ2PD    X2, Y1
	VFNMADD231PD expc<>+32(SB), Y1, Y0
	VFNMADD231PD expc<>+64(SB), Y1, Y0
	VMULPD       expc<>+96(SB), Y0, Y0

	// Taylor series, then squared four times as (x·(x+2)), as math.Exp does
	VMOVUPD     expc<>+128(SB), Y1
	VFMADD213PD expc<>+160(SB), Y0, Y1
	VFMADD213PD expc<>+192(SB), Y0, Y1
	VFMADD213PD expc<>+224(SB), Y0, Y1
	VFMADD213PD expc<>+256(SB), Y0, Y1
	VFMADD213PD expc<>+288(SB), Y0, Y1
	VFMADD213PD expc<>+320(SB), Y0, Y1
	VFMADD213PD expc<>+352(SB), Y0, Y1
	VMULPD      Y1, Y0, Y0
	VADDPD      expc<>+384(SB), Y0, Y1
	VMULPD      Y1, Y0, Y0
	VADDPD      expc<>+384(SB), Y0, Y1
	VMULPD      Y1, Y0, Y0
	VADDPD      expc<>+384(SB), Y0, Y1
	VMULPD      Y1, Y0, Y0
	VADDPD      expc<>+384(SB), Y0, Y1
	VFMADD213PD expc<>+352(SB), Y1, Y0

	// times 2^k (k + 1023 stays in the normal range for |x| <= 700)
	VPMOVSXDQ X2, Y3
	VPADDQ    expc<>+480(SB), Y3, Y3
	VPSLLQ    $52, Y3, Y3
	VMULPD    Y3, Y0, Y0

	// added in order, one lane at a time
	VADDSD       X0, X14, X14
	VPERMILPD    $1, X0, X4
	VADDSD       X4, X14, X14
	VEXTRACTF128 $1, Y0, X5
	VADDSD       X5, X14, X14
	VPERMILPD    $1, X5, X6
	VADDSD       X6, X14, X14
	ADDQ         $4, AX
	JMP          loop

done:
	VZEROUPPER
	MOVSD X14, ret+32(FP)
	MOVQ  AX, ret1+40(FP)
	RET
