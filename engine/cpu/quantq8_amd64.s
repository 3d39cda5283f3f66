#include "textflag.h"

// q8perm undoes the lane interleave of VPACKSSDW then VPACKSSWB.
DATA q8perm<>+0(SB)/4, $0
DATA q8perm<>+4(SB)/4, $4
DATA q8perm<>+8(SB)/4, $1
DATA q8perm<>+12(SB)/4, $5
DATA q8perm<>+16(SB)/4, $2
DATA q8perm<>+20(SB)/4, $6
DATA q8perm<>+24(SB)/4, $3
DATA q8perm<>+28(SB)/4, $7
GLOBL q8perm<>(SB), RODATA|NOPTR, $32

// func q8BlockAVX2(x *float32, q *byte) (d float32, ok bool)
// ggml's quantize_row_q8_0_ref on one block of 32, as written in Go
// (engine/ggml quantQ8_0): amax = max |x| (as the largest of the values'
// bits without the sign, exact for finite values), d = amax/127, id = 1/d
// (0 when d is 0), q = round half away from zero of x·id, taken as
// truncation t then t±1 where the exact remainder x·id - t reaches ±0.5.
// Returns ok = false without writing when amax is not finite or d is
// subnormal: there the Go code's conversions are what define the bytes.
TEXT ·q8BlockAVX2(SB), NOSPLIT, $0-21
	MOVQ x+0(FP), SI
	MOVQ q+8(FP), DI
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3

	// amax bits
	MOVL         $0x7fffffff, AX
	VMOVD        AX, X4
	VPBROADCASTD X4, Y4
	VPAND        Y4, Y0, Y5
	VPAND        Y4, Y1, Y6
	VPAND        Y4, Y2, Y7
	VPAND        Y4, Y3, Y8
	VPMAXUD      Y6, Y5, Y5
	VPMAXUD      Y8, Y7, Y7
	VPMAXUD      Y7, Y5, Y5
	VEXTRACTI128 $1, Y5, X6
	VPMAXUD      X6, X5, X5
	VPSHUFD      $0x4e, X5, X6
	VPMAXUD      X6, X5, X5
	VPSHUFD      $0xb1, X5, X6
	VPMAXUD      X6, X5, X5
	VMOVD        X5, AX
	CMPL         AX, $0x7f800000
	JAE          slow

	// d = amax/127; id = 1/d, or 0
	MOVL   $0x42fe0000, BX // 127.0
	VMOVD  BX, X9
	VDIVSS X9, X5, X10
	VMOVD  X10, BX
	VXORPS X11, X11, X11
	TESTL  BX, BX
	JZ     scaled
	CMPL   BX, $0x00800000 // smallest normal
	JB     slow
	MOVL   $0x3f800000, CX // 1.0
	VMOVD  CX, X11
	VDIVSS X10, X11, X11

scaled:
	VBROADCASTSS X11, Y11
	MOVL         $0x3f000000, CX // 0.5
	VMOVD        CX, X12
	VBROADCASTSS X12, Y12
	MOVL         $0xbf000000, CX // -0.5
	VMOVD        CX, X13
	VBROADCASTSS X13, Y13
	MOVL         $0x3f800000, CX // 1.0
	VMOVD        CX, X14
	VBROADCASTSS X14, Y14

#define ROUND(Y) \
	VMULPS   Y11, Y, Y          \
	VROUNDPS $3, Y, Y15         \
	VSUBPS   Y15, Y, Y          \
	VCMPPS   $0x1d, Y12, Y, Y4  \
	VCMPPS   $0x12, Y13, Y, Y  \
	VANDPS   Y14, Y4, Y4        \
	VANDPS   Y14, Y, Y          \
	VADDPS   Y4, Y15, Y15       \
	VSUBPS   Y, Y15, Y15        \
	VCVTTPS2DQ Y15, Y

	ROUND(Y0)
	ROUND(Y1)
	ROUND(Y2)
	ROUND(Y3)

	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VMOVDQU   q8perm<>(SB), Y1
	VPERMD    Y0, Y1, Y0
	VMOVDQU   Y0, 0(DI)
	VZEROUPPER
	VMOVSS    X10, d+16(FP)
	MOVB      $1, ok+20(FP)
	RET

slow:
	VZEROUPPER
	MOVL $0, d+16(FP)
	MOVB $0, ok+20(FP)
	RET
