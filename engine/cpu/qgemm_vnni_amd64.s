#include "textflag.h"
#include "qgemm_tile_amd64.h"

// func qgemmVNNI(panel, act *byte, nb int, out *float32)
// One 8×16 tile of the quantized GEMM (layouts in matmul_qgemm.go). Per
// block: the panel's eight code groups are loaded once (Z0-Z7, 16 rows ×
// 4 bytes each) and each activation row's matching 4 bytes are broadcast
// from memory into VPDPBUSD (unsigned codes × signed activations), one
// int32 accumulator per activation row (Z8-Z15, started at −offset·Σx:
// eight independent chains hide VPDPBUSD's latency). The block sums are
// converted and scaled by scale_w·d_x into the float tile (Z24-Z31).
// QDOT8(zw, o): the eight activation rows' code bytes o..o+3, broadcast,
// times code group zw into the row accumulators Z8-Z15.
#define QDOT8(zw, o) \
	VPDPBUSD.BCST o+0(DI), zw, Z8 \
	VPDPBUSD.BCST o+40(DI), zw, Z9 \
	VPDPBUSD.BCST o+80(DI), zw, Z10 \
	VPDPBUSD.BCST o+120(DI), zw, Z11 \
	VPDPBUSD.BCST o+160(DI), zw, Z12 \
	VPDPBUSD.BCST o+200(DI), zw, Z13 \
	VPDPBUSD.BCST o+240(DI), zw, Z14 \
	VPDPBUSD.BCST o+280(DI), zw, Z15

// QSCALE(zi, zf, o): zf += float(zi)·scale_w·d_x, d_x at o(DI).
#define QSCALE(zi, zf, o) \
	VCVTDQ2PS   zi, zi \
	VMULPS.BCST o(DI), Z16, Z17 \
	VFMADD231PS Z17, zi, zf

TEXT ·qgemmVNNI(SB), NOSPLIT, $0-32
	MOVQ panel+0(FP), SI
	MOVQ act+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ out+24(FP), AX
	QTILE_ZERO

qgvloop:
	VMOVDQU32 0(SI), Z0
	VMOVDQU32 64(SI), Z1
	VMOVDQU32 128(SI), Z2
	VMOVDQU32 192(SI), Z3
	VMOVDQU32 256(SI), Z4
	VMOVDQU32 320(SI), Z5
	VMOVDQU32 384(SI), Z6
	VMOVDQU32 448(SI), Z7
	VMOVUPS 512(SI), Z16
	VPBROADCASTD 36(DI), Z8
	VPBROADCASTD 76(DI), Z9
	VPBROADCASTD 116(DI), Z10
	VPBROADCASTD 156(DI), Z11
	VPBROADCASTD 196(DI), Z12
	VPBROADCASTD 236(DI), Z13
	VPBROADCASTD 276(DI), Z14
	VPBROADCASTD 316(DI), Z15
	QDOT8(Z0, 0)
	QDOT8(Z1, 4)
	QDOT8(Z2, 8)
	QDOT8(Z3, 12)
	QDOT8(Z4, 16)
	QDOT8(Z5, 20)
	QDOT8(Z6, 24)
	QDOT8(Z7, 28)
	QSCALE(Z8, Z24, 32)
	QSCALE(Z9, Z25, 72)
	QSCALE(Z10, Z26, 112)
	QSCALE(Z11, Z27, 152)
	QSCALE(Z12, Z28, 192)
	QSCALE(Z13, Z29, 232)
	QSCALE(Z14, Z30, 272)
	QSCALE(Z15, Z31, 312)
	ADDQ $576, SI
	ADDQ $320, DI
	DECQ CX
	JNZ  qgvloop

	QTILE_STORE(AX)
	VZEROUPPER
	RET

// func qquantAVX512(x *float32, dst *byte, nb int, negoff int)
// Quantizes nb blocks of 32 floats into the activation layout, one block
// every 320 bytes of dst (a row's blocks within its group of 8): codes
// round(x·127/max|x|) (VCVTPS2DQ, ties to even), d = max|x|/127 and
// negoff·Σcodes. An all-zero block gets zero codes, d and sum.
TEXT ·qquantAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         dst+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVQ         negoff+24(FP), R8
	MOVL         $0x7FFFFFFF, AX
	VPBROADCASTD AX, Z15
	MOVL         $0x42FE0000, AX // 127.0
	VMOVD        AX, X14
	VXORPS       X13, X13, X13

qqloop:
	VMOVUPS       (SI), Z0
	VMOVUPS       64(SI), Z1
	VPANDD        Z15, Z0, Z2
	VPANDD        Z15, Z1, Z3
	VMAXPS        Z3, Z2, Z2
	VEXTRACTF64X4 $1, Z2, Y3
	VMAXPS        Y3, Y2, Y2
	VEXTRACTF128  $1, Y2, X3
	VMAXPS        X3, X2, X2
	VPERMILPS     $0x4E, X2, X3
	VMAXPS        X3, X2, X2
	VPERMILPS     $0xB1, X2, X3
	VMAXPS        X3, X2, X2
	VUCOMISS      X13, X2
	JEQ           qqzero
	VDIVSS        X14, X2, X4 // d = amax/127
	VDIVSS        X2, X14, X5 // id = 127/amax
	VBROADCASTSS  X5, Z5
	VMULPS        Z5, Z0, Z0
	VMULPS        Z5, Z1, Z1
	VCVTPS2DQ     Z0, Z0
	VCVTPS2DQ     Z1, Z1
	VPMOVDB       Z0, X6
	VPMOVDB       Z1, X7
	VMOVDQU       X6, (DI)
	VMOVDQU       X7, 16(DI)
	VPADDD        Z1, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDD        Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0x4E, X0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0xB1, X0, X1
	VPADDD        X1, X0, X0
	VMOVD         X0, AX
	IMULL         R8, AX
	VMOVSS        X4, 32(DI)
	MOVL          AX, 36(DI)
	JMP           qqnext

qqzero:
	VPXORD  Z6, Z6, Z6
	VMOVDQU Y6, (DI)
	MOVQ    $0, 32(DI)

qqnext:
	ADDQ $128, SI
	ADDQ $320, DI
	DECQ CX
	JNZ  qqloop
	VZEROUPPER
	RET
