#include "textflag.h"

// func qgemmAVX2(panel, act *byte, nb int, out *float32)
// The quantized GEMM tile (layouts in matmul_qgemm.go) for CPUs without
// VNNI, for codes of at most 5 bits (Q4_0, Q5_0): VPMADDUBSW's int16 pair
// sums (≤ 2·31·128) cannot saturate there. The 8×16 tile runs as two
// halves of 4 activation rows. Per block and code group, the two weight
// registers (rows 0-7, 8-15) are reused by the 4 rows' broadcast
// activation dwords; VPMADDWD by ones widens to int32 into 8 accumulators
// (Y0-Y7, started at −offset·Σx). The block sums are scaled by
// scale_w·d_x and added into out, which holds the float tile (16 ymm
// registers are too few to keep it).
// AROW(o, acc0, acc1): one activation row's code bytes o..o+3 (broadcast)
// times the code group's rows 0-7 (Y8) and 8-15 (Y9), widened to int32
// into acc0, acc1.
#define AROW(o, acc0, acc1) \
	VPBROADCASTD o(DI), Y10 \
	VPMADDUBSW   Y10, Y8, Y11 \
	VPMADDUBSW   Y10, Y9, Y12 \
	VPMADDWD     Y15, Y11, Y11 \
	VPMADDWD     Y15, Y12, Y12 \
	VPADDD       Y11, acc0, acc0 \
	VPADDD       Y12, acc1, acc1

// AGROUP(g): code group g (bytes 4g..4g+3) for the half's 4 rows.
#define AGROUP(g) \
	VMOVDQU 64*g(SI), Y8 \
	VMOVDQU 64*g+32(SI), Y9 \
	AROW(4*g, Y0, Y1) \
	AROW(4*g+40, Y2, Y3) \
	AROW(4*g+80, Y4, Y5) \
	AROW(4*g+120, Y6, Y7)

// AOUT(acc, ys, off): out[off] += float(acc)·ys.
#define AOUT(acc, ys, off) \
	VCVTDQ2PS   acc, acc \
	VMOVUPS     off(AX), Y13 \
	VFMADD231PS ys, acc, Y13 \
	VMOVUPS     Y13, off(AX)

// ASCALE(o, acc0, acc1, off): the row's scales scale_w·d_x (d_x at o(DI))
// applied to its two accumulators, into the tile's row at off(AX).
#define ASCALE(o, acc0, acc1, off) \
	VBROADCASTSS o(DI), Y10 \
	VMULPS       Y10, Y8, Y11 \
	VMULPS       Y10, Y9, Y12 \
	AOUT(acc0, Y11, off) \
	AOUT(acc1, Y12, off+32)

TEXT ·qgemmAVX2(SB), NOSPLIT, $0-32
	MOVQ         out+24(FP), AX
	VXORPS       Y0, Y0, Y0
	VMOVUPS      Y0, 0(AX)
	VMOVUPS      Y0, 32(AX)
	VMOVUPS      Y0, 64(AX)
	VMOVUPS      Y0, 96(AX)
	VMOVUPS      Y0, 128(AX)
	VMOVUPS      Y0, 160(AX)
	VMOVUPS      Y0, 192(AX)
	VMOVUPS      Y0, 224(AX)
	VMOVUPS      Y0, 256(AX)
	VMOVUPS      Y0, 288(AX)
	VMOVUPS      Y0, 320(AX)
	VMOVUPS      Y0, 352(AX)
	VMOVUPS      Y0, 384(AX)
	VMOVUPS      Y0, 416(AX)
	VMOVUPS      Y0, 448(AX)
	VMOVUPS      Y0, 480(AX)
	MOVL         $0x00010001, BX
	VMOVD        BX, X15
	VPBROADCASTD X15, Y15
	XORQ         R9, R9 // half: 0 rows 0-3, 160 rows 4-7

qgahalf:
	MOVQ panel+0(FP), SI
	MOVQ act+8(FP), DI
	ADDQ R9, DI
	MOVQ nb+16(FP), CX
	MOVQ out+24(FP), AX
	TESTQ R9, R9
	JZ   qgablock
	ADDQ $256, AX // rows 4-7 of the tile

qgablock:
	VPBROADCASTD 36(DI), Y0
	VMOVDQA      Y0, Y1
	VPBROADCASTD 76(DI), Y2
	VMOVDQA      Y2, Y3
	VPBROADCASTD 116(DI), Y4
	VMOVDQA      Y4, Y5
	VPBROADCASTD 156(DI), Y6
	VMOVDQA      Y6, Y7
	AGROUP(0)
	AGROUP(1)
	AGROUP(2)
	AGROUP(3)
	AGROUP(4)
	AGROUP(5)
	AGROUP(6)
	AGROUP(7)
	VMOVUPS      512(SI), Y8
	VMOVUPS      544(SI), Y9
	ASCALE(32, Y0, Y1, 0)
	ASCALE(72, Y2, Y3, 64)
	ASCALE(112, Y4, Y5, 128)
	ASCALE(152, Y6, Y7, 192)
	ADDQ         $576, SI
	ADDQ         $320, DI
	DECQ         CX
	JNZ          qgablock
	ADDQ         $160, R9
	CMPQ         R9, $320
	JLT          qgahalf
	VZEROUPPER
	RET
