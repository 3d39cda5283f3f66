#include "textflag.h"

// Constants of sampleExpFxAVX2, as float64 bits: the input clamp, log2(e),
// ln2 split in two (fdlibm's: k·ln2hi is exact for |k| < 2^21), 2^52, the
// sign mask, the exponent bias of 2^(k+43), then 1/13! .. 1/0!.
DATA sfxc<>+0(SB)/8, $0xc044000000000000   // -40
DATA sfxc<>+8(SB)/8, $0x3ff71547652b82fe   // log2(e)
DATA sfxc<>+16(SB)/8, $0x3fe62e42fee00000  // ln2hi
DATA sfxc<>+24(SB)/8, $0x3dea39ef35793c76  // ln2lo
DATA sfxc<>+32(SB)/8, $0x4330000000000000  // 2^52
DATA sfxc<>+40(SB)/8, $0x7fffffffffffffff  // |x| mask
DATA sfxc<>+48(SB)/8, $1066                // 1023 + 43
DATA sfxc<>+56(SB)/8, $0x3de6124613a86d09  // 1/13!
DATA sfxc<>+64(SB)/8, $0x3e21eed8eff8d898  // 1/12!
DATA sfxc<>+72(SB)/8, $0x3e5ae64567f544e4  // 1/11!
DATA sfxc<>+80(SB)/8, $0x3e927e4fb7789f5c  // 1/10!
DATA sfxc<>+88(SB)/8, $0x3ec71de3a556c734  // 1/9!
DATA sfxc<>+96(SB)/8, $0x3efa01a01a01a01a  // 1/8!
DATA sfxc<>+104(SB)/8, $0x3f2a01a01a01a01a // 1/7!
DATA sfxc<>+112(SB)/8, $0x3f56c16c16c16c17 // 1/6!
DATA sfxc<>+120(SB)/8, $0x3f81111111111111 // 1/5!
DATA sfxc<>+128(SB)/8, $0x3fa5555555555555 // 1/4!
DATA sfxc<>+136(SB)/8, $0x3fc5555555555555 // 1/3!
DATA sfxc<>+144(SB)/8, $0x3fe0000000000000 // 1/2!
DATA sfxc<>+152(SB)/8, $0x3ff0000000000000 // 1/1!
DATA sfxc<>+160(SB)/8, $0x3ff0000000000000 // 1/0!
GLOBL sfxc<>(SB), RODATA|NOPTR, $168

#define HORNER(off) VBROADCASTSD sfxc<>+off(SB), Y4; VFMADD213PD Y4, Y2, Y3

// SFXLANES computes four lanes from (SI): the integer masses in Y0 and
// the lanes left to the scalar path (all ones) in Y7; Y1-Y5 are scratch.
#define SFXLANES \
	VMOVUPS      (SI), X0; \
	VSUBPS       X15, X0, X0; \
	VCVTPS2PD    X0, Y0; \
	VMAXPD       Y14, Y0, Y0; \
	VMULPD       Y13, Y0, Y1; \
	VROUNDPD     $0, Y1, Y1; \
	VMOVAPD      Y0, Y2; \
	VFNMADD231PD Y12, Y1, Y2; \
	VFNMADD231PD Y11, Y1, Y2; \
	VBROADCASTSD sfxc<>+56(SB), Y3; \
	HORNER(64); \
	HORNER(72); \
	HORNER(80); \
	HORNER(88); \
	HORNER(96); \
	HORNER(104); \
	HORNER(112); \
	HORNER(120); \
	HORNER(128); \
	HORNER(136); \
	HORNER(144); \
	HORNER(152); \
	HORNER(160); \
	VCVTPD2DQY   Y1, X5; \
	VPMOVSXDQ    X5, Y5; \
	VPBROADCASTQ sfxc<>+48(SB), Y0; \
	VPADDQ       Y0, Y5, Y5; \
	VPSLLQ       $52, Y5, Y5; \
	VMULPD       Y5, Y3, Y3; \
	VROUNDPD     $0, Y3, Y0; \
	VSUBPD       Y0, Y3, Y7; \
	VANDPD       Y8, Y7, Y7; \
	VCMPPD       $0x1e, Y10, Y7, Y7; \
	VADDPD       Y9, Y0, Y0; \
	VPSUBQ       Y9, Y0, Y0

// SFXCONSTS loads the constants SFXLANES keeps in registers (lmax, tie
// and the table's).
#define SFXCONSTS \
	VBROADCASTSS lmax+24(FP), X15; \
	VBROADCASTSD tie+32(FP), Y10; \
	VBROADCASTSD sfxc<>+0(SB), Y14; \
	VBROADCASTSD sfxc<>+8(SB), Y13; \
	VBROADCASTSD sfxc<>+16(SB), Y12; \
	VBROADCASTSD sfxc<>+24(SB), Y11; \
	VBROADCASTSD sfxc<>+32(SB), Y9; \
	VBROADCASTSD sfxc<>+40(SB), Y8

// func sampleExpFxAVX2(ev *uint64, l *float32, n int, lmax float32, tie float64) int
// ev[i] = round(exp(l[i]−lmax)·2^43) for i < n (a multiple of 4), four
// lanes of float64 at a time: d = l−lmax in float32 (as the Go code), k =
// round(d·log2 e), r = d − k·ln2, exp(r) by its Taylor series to 1/13!
// (Horner, fused), times 2^(k+43). A lane whose product lies within tie of
// a half, rounding could go either way: it gets sampleExpFxTodo (all ones)
// for the caller's scalar path, and counts in the result.
TEXT ·sampleExpFxAVX2(SB), NOSPLIT, $0-48
	MOVQ         ev+0(FP), DI
	MOVQ         l+8(FP), SI
	MOVQ         n+16(FP), CX
	SFXCONSTS
	XORQ         BX, BX
	SHRQ         $2, CX
	JZ           sfxdone

sfxloop:
	SFXLANES
	VPOR         Y7, Y0, Y0
	VMOVDQU      Y0, (DI)
	VMOVMSKPD    Y7, AX
	POPCNTQ      AX, AX
	ADDQ         AX, BX
	ADDQ         $16, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          sfxloop

sfxdone:
	VZEROUPPER
	MOVQ         BX, ret+40(FP)
	RET

// func sampleExpFxSumAVX2(ev *uint64, l *float32, n int, lmax float32, tie float64, todo *int32, sum *uint64) int
// sampleExpFxAVX2 (the same masses into ev, the same lanes marked) that
// also sums the masses it rounded into *sum, and writes the indices of
// the lanes it left to the scalar path to todo (room for n) instead of
// leaving the caller a scan of ev for them: the no-top-k draw's pass
// (drawIndex) needs each chunk's sum, which a Go loop over ev took a
// fifth of the draw to add.
TEXT ·sampleExpFxSumAVX2(SB), NOSPLIT, $0-64
	MOVQ         ev+0(FP), DI
	MOVQ         l+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         todo+40(FP), R10
	SFXCONSTS
	VPXOR        Y6, Y6, Y6         // the sum of the rounded lanes
	XORQ         BX, BX             // lanes left to the scalar path
	XORQ         R9, R9             // the index of the block's first lane
	SHRQ         $2, CX
	JZ           ssdone

ssloop:
	SFXLANES
	VPANDN       Y0, Y7, Y5         // the rounded lanes' masses
	VPADDQ       Y5, Y6, Y6
	VPOR         Y7, Y0, Y0
	VMOVDQU      Y0, (DI)
	VMOVMSKPD    Y7, AX
	TESTQ        AX, AX
	JNZ          sstodo

ssnext:
	ADDQ         $4, R9
	ADDQ         $16, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          ssloop

ssdone:
	VEXTRACTI128 $1, Y6, X7
	VPADDQ       X7, X6, X6
	VPSHUFD      $0x4e, X6, X7
	VPADDQ       X7, X6, X6
	MOVQ         sum+48(FP), DX
	VMOVQ        X6, (DX)
	VZEROUPPER
	MOVQ         BX, ret+56(FP)
	RET

sstodo:                         // each marked lane's index to todo
	BSFQ         AX, R8
	ADDQ         R9, R8
	MOVL         R8, (R10)(BX*4)
	INCQ         BX
	LEAQ         -1(AX), R8
	ANDQ         R8, AX
	JNZ          sstodo
	JMP          ssnext
