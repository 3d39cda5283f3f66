#include "textflag.h"

// HALF(off, dst): the half block at off(AX) (rows 0-7, 16 codes each)
// into panel groups dst/64 .. dst/64+3 of this half (BX).
#define HALF(off, dst) \
	VMOVDQU32     off(AX), Z0; \
	VMOVDQU32     off+64(AX), Z1; \
	VMOVDQA32     Z0, Z2; \
	VPERMT2D      Z1, Z30, Z2; \
	VMOVDQA32     Z0, Z3; \
	VPERMT2D      Z1, Z31, Z3; \
	VMOVDQU32     Y2, dst(BX); \
	VEXTRACTI32X8 $1, Z2, dst+64(BX); \
	VMOVDQU32     Y3, dst+128(BX); \
	VEXTRACTI32X8 $1, Z3, dst+192(BX)

// func packPanelQ8AVX512(grp *byte, grpStride, nb int, panel *byte)
// A packed group's block is 272 bytes (repack.go: eight f16 scales, then
// codes 0-15 of rows 0-7 in 128 bytes, then codes 16-31); a panel block
// 576 (eight 64-byte groups of the 16 rows' words, then 16 float32
// scales). The first group's rows are panel rows 0-7 (bytes 0-31 of each
// 64), the second's rows 8-15.
TEXT ·packPanelQ8AVX512(SB), NOSPLIT, $0-32
	MOVQ      grp+0(FP), SI
	MOVQ      grpStride+8(FP), R8
	MOVQ      panel+24(FP), DI
	VMOVDQU32 ·panelIdx01(SB), Z30
	VMOVDQU32 ·panelIdx23(SB), Z31
	MOVQ      $2, R10

half:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ nb+16(FP), DX

block:
	HALF(16, 0)
	HALF(144, 256)
	VCVTPH2PS (AX), Y4
	VMOVUPS   Y4, 512(BX)
	ADDQ      $272, AX
	ADDQ      $576, BX
	DECQ      DX
	JNZ       block

	ADDQ R8, SI
	ADDQ $32, DI
	DECQ R10
	JNZ  half

	VZEROUPPER
	RET
