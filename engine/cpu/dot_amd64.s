#include "textflag.h"

// AVX2/FMA kernels. Callers guarantee lengths (see dot_amd64.go).
// The quantized kernels compute rows consecutive weight rows (rb bytes
// apart, nb > 0 blocks each) against one activation row, writing out[r]:
// one call per row run keeps the call, setup and reduction cost off the
// per-row path, which matters for short rows (k = 576 is 18 blocks).

// func dotF32AVX2(a, b *float32, n int) float32
// n is a multiple of 32.
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ   f32done

f32loop:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         f32loop

f32done:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func dotQ8_0AVX2(w, x *byte, nb, rows, rb int, out *float32)
// Signed bytes times signed bytes: VPMADDUBSW wants one unsigned operand,
// so multiply |w| by x·sign(w).
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ rb+32(FP), R14
	XORQ R13, R13
	MOVL $0x00010001, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

q80row:
	MOVQ R10, SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0

q80loop:
	VMOVDQU      2(SI), Y1
	VMOVDQU      2(DI), Y2
	VPSIGNB      Y1, Y1, Y3
	VPSIGNB      Y1, Y2, Y4
	VPMADDUBSW   Y4, Y3, Y5
	VPMADDWD     Y15, Y5, Y5
	VCVTDQ2PS    Y5, Y5
	MOVWLZX      (SI), AX
	MOVWLZX      (DI), BX
	VMOVD        AX, X6
	VMOVD        BX, X7
	VCVTPH2PS    X6, X6
	VCVTPH2PS    X7, X7
	VMULSS       X7, X6, X6
	VBROADCASTSS X6, Y6
	VFMADD231PS  Y6, Y5, Y0
	ADDQ         $34, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q80loop

q80done:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVQ         out+40(FP), AX
	MOVSS        X0, (AX)(R13*4)
	ADDQ         R14, R10
	INCQ         R13
	CMPQ         R13, rows+24(FP)
	JLT          q80row
	VZEROUPPER
	RET

// func dotQ4_0AVX2(w, x *byte, np, rows2, rb int, out *float32)
// Two Q4_0 rows at a time (rows2 pairs of rows, rb bytes apart; out gets
// 2·rows2 results), two blocks A, B per iteration (np pairs of blocks).
// A pair's nibbles sit in one register, A in the low lane and B in the
// high lane (low nibbles, then high nibbles in a second register), against
// the activations rearranged the same way, so the int32 sums come out as
// [A×4 | B×4] for one scale vector and one FMA. Both rows share the
// activation loads, scales and the -8 offset: unsigned nibbles go straight
// into VPMADDUBSW and 8·(x0+x1) per byte pair is subtracted in int16
// (|sum| ≤ 11684), which equals Σ(q-8)·x exactly.
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ rb+32(FP), R14
	XORQ R13, R13
	MOVL $0x00010001, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x08080808, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13

q40row:
	MOVQ R10, SI
	LEAQ (R10)(R14*1), R11
	MOVQ x+8(FP), DI
	MOVQ np+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y10, Y10, Y10

#define Q40_ROW(ptr, acc) \
	VMOVDQU      2(ptr), X6 \
	VINSERTI128  $1, 20(ptr), Y6, Y6 \
	VPSRLW       $4, Y6, Y7 \
	VPAND        Y14, Y6, Y6 \
	VPAND        Y14, Y7, Y7 \
	VPMADDUBSW   Y1, Y6, Y6 \
	VPMADDUBSW   Y2, Y7, Y7 \
	VPADDW       Y7, Y6, Y6 \
	VPSUBW       Y3, Y6, Y6 \
	VPMADDWD     Y15, Y6, Y6 \
	VCVTDQ2PS    Y6, Y6 \
	VPBROADCASTW (ptr), X7 \
	VPBROADCASTW 18(ptr), X8 \
	VPBLENDD     $0x0C, X8, X7, X7 \
	VCVTPH2PS    X7, Y7 \
	VMULPS       Y5, Y7, Y7 \
	VFMADD231PS  Y7, Y6, acc

q40loop:
	VMOVDQU      2(DI), X1
	VINSERTI128  $1, 36(DI), Y1, Y1
	VMOVDQU      18(DI), X2
	VINSERTI128  $1, 52(DI), Y2, Y2
	VPMADDUBSW   Y1, Y13, Y3
	VPMADDUBSW   Y2, Y13, Y4
	VPADDW       Y4, Y3, Y3
	VPBROADCASTW (DI), X5
	VPBROADCASTW 34(DI), X6
	VPBLENDD     $0x0C, X6, X5, X5
	VCVTPH2PS    X5, Y5
	Q40_ROW(SI, Y0)
	Q40_ROW(R11, Y10)
	ADDQ         $36, SI
	ADDQ         $36, R11
	ADDQ         $68, DI
	DECQ         CX
	JNZ          q40loop

	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VEXTRACTF128 $1, Y10, X1
	VADDPS       X1, X10, X10
	VHADDPS      X10, X10, X10
	VHADDPS      X10, X10, X10
	MOVQ         out+40(FP), AX
	MOVSS        X0, (AX)(R13*8)
	MOVSS        X10, 4(AX)(R13*8)
	LEAQ         (R10)(R14*2), R10
	INCQ         R13
	CMPQ         R13, rows2+24(FP)
	JLT          q40row
	VZEROUPPER
	RET

// func dotQ5_0AVX2(w, x *byte, np, rows2, rb int, out *float32)
// Q5_0 as dotQ4_0AVX2: each block's 32 high bits are spread to bit 4 of
// their bytes (VPSHUFB picks qh's byte i/8 for byte i, a bit mask and
// VPCMPEQB test bit i%8) and the offset is 16 instead of 8 (int16 partial
// sums stay within ±23876).
TEXT ·dotQ5_0AVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ rb+32(FP), R14
	XORQ R13, R13
	MOVL $0x00010001, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x10101010, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13

q50row:
	MOVQ R10, SI
	LEAQ (R10)(R14*1), R11
	MOVQ x+8(FP), DI
	MOVQ np+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y10, Y10, Y10

#define Q50_ROW(ptr, acc) \
	VMOVDQU      6(ptr), X6 \
	VINSERTI128  $1, 28(ptr), Y6, Y6 \
	VPSRLW       $4, Y6, Y7 \
	VPAND        Y14, Y6, Y6 \
	VPAND        Y14, Y7, Y7 \
	VPBROADCASTD 2(ptr), X8 \
	VPBROADCASTD 24(ptr), X9 \
	VINSERTI128  $1, X9, Y8, Y8 \
	VPSHUFB      q5ShufLo<>(SB), Y8, Y9 \
	VPSHUFB      q5ShufHi<>(SB), Y8, Y8 \
	VPAND        q5Bits<>(SB), Y9, Y9 \
	VPAND        q5Bits<>(SB), Y8, Y8 \
	VPCMPEQB     q5Bits<>(SB), Y9, Y9 \
	VPCMPEQB     q5Bits<>(SB), Y8, Y8 \
	VPAND        Y13, Y9, Y9 \
	VPAND        Y13, Y8, Y8 \
	VPOR         Y9, Y6, Y6 \
	VPOR         Y8, Y7, Y7 \
	VPMADDUBSW   Y1, Y6, Y6 \
	VPMADDUBSW   Y2, Y7, Y7 \
	VPADDW       Y7, Y6, Y6 \
	VPSUBW       Y3, Y6, Y6 \
	VPMADDWD     Y15, Y6, Y6 \
	VCVTDQ2PS    Y6, Y6 \
	VPBROADCASTW (ptr), X7 \
	VPBROADCASTW 22(ptr), X8 \
	VPBLENDD     $0x0C, X8, X7, X7 \
	VCVTPH2PS    X7, Y7 \
	VMULPS       Y5, Y7, Y7 \
	VFMADD231PS  Y7, Y6, acc

q50loop:
	VMOVDQU      2(DI), X1
	VINSERTI128  $1, 36(DI), Y1, Y1
	VMOVDQU      18(DI), X2
	VINSERTI128  $1, 52(DI), Y2, Y2
	VPMADDUBSW   Y1, Y13, Y3
	VPMADDUBSW   Y2, Y13, Y4
	VPADDW       Y4, Y3, Y3
	VPBROADCASTW (DI), X5
	VPBROADCASTW 34(DI), X6
	VPBLENDD     $0x0C, X6, X5, X5
	VCVTPH2PS    X5, Y5
	Q50_ROW(SI, Y0)
	Q50_ROW(R11, Y10)
	ADDQ         $44, SI
	ADDQ         $44, R11
	ADDQ         $68, DI
	DECQ         CX
	JNZ          q50loop

	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VEXTRACTF128 $1, Y10, X1
	VADDPS       X1, X10, X10
	VHADDPS      X10, X10, X10
	VHADDPS      X10, X10, X10
	MOVQ         out+40(FP), AX
	MOVSS        X0, (AX)(R13*8)
	MOVSS        X10, 4(AX)(R13*8)
	LEAQ         (R10)(R14*2), R10
	INCQ         R13
	CMPQ         R13, rows2+24(FP)
	JLT          q50row
	VZEROUPPER
	RET

// func dotQ4KAVX2(w, x *byte, nb, rows, rb int, out *float32)
// Q4_K against Q8_K, everything in registers: the 6-bit scales and mins
// are unpacked from the 12 packed bytes with 32-bit integer ops (four
// bytes at a time), the mins are applied through Q8_K's 16-element sums,
// and each 32-element sub-block's scale is broadcast with VPSHUFB.
TEXT ·dotQ4KAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ rb+32(FP), R14
	XORQ R13, R13
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14

q4krow:
	MOVQ R10, SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y5, Y5, Y5

q4kloop:
	// Bytes 4..15 as w0, w1, w2. scales[0:4] = w0&63, mins[0:4] = w1&63,
	// scales[4:8] = w2&15 | (w0>>6)<<4, mins[4:8] = w2>>4 | (w1>>6)<<4.
	MOVL 4(SI), AX
	MOVL 8(SI), BX
	MOVL 12(SI), DX
	MOVL AX, R8
	SHRL $6, R8
	ANDL $0x03030303, R8
	SHLL $4, R8
	MOVL DX, R9
	ANDL $0x0F0F0F0F, R9
	ORL  R9, R8
	ANDL $0x3F3F3F3F, AX
	SHLQ $32, R8
	ORQ  AX, R8
	MOVL BX, R9
	SHRL $6, R9
	ANDL $0x03030303, R9
	SHLL $4, R9
	SHRL $4, DX
	ANDL $0x0F0F0F0F, DX
	ORL  DX, R9
	ANDL $0x3F3F3F3F, BX
	SHLQ $32, R9
	ORQ  BX, R9

	VMOVQ       R8, X1
	VPMOVZXBW   X1, X1
	VINSERTI128 $1, X1, Y1, Y1
	VMOVQ       R9, X2
	VPMOVZXBW   X2, X2
	VMOVDQU     260(DI), X3
	VPHADDW     276(DI), X3, X3
	VPMADDWD    X2, X3, X3
	VPXOR       Y10, Y10, Y10
	VPXOR       Y11, Y11, Y11

#define Q4K_STEP(qoff, yoff, m0, m1) \
	VMOVDQU    qoff(SI), Y6 \
	VPSRLW     $4, Y6, Y7 \
	VPAND      Y14, Y6, Y6 \
	VPAND      Y14, Y7, Y7 \
	VPMADDUBSW yoff(DI), Y6, Y6 \
	VPMADDUBSW (yoff+32)(DI), Y7, Y7 \
	VPSHUFB    q4kShuf<>+m0(SB), Y1, Y8 \
	VPSHUFB    q4kShuf<>+m1(SB), Y1, Y9 \
	VPMADDWD   Y8, Y6, Y6 \
	VPMADDWD   Y9, Y7, Y7 \
	VPADDD     Y6, Y10, Y10 \
	VPADDD     Y7, Y11, Y11

	Q4K_STEP(16, 4, 0, 32)
	Q4K_STEP(48, 68, 64, 96)
	Q4K_STEP(80, 132, 128, 160)
	Q4K_STEP(112, 196, 192, 224)

	VPADDD       Y11, Y10, Y10
	VCVTDQ2PS    Y10, Y10
	VPBROADCASTW (SI), X12
	VCVTPH2PS    X12, Y12
	VBROADCASTSS (DI), Y13
	VMULPS       Y13, Y12, Y12
	VFMADD231PS  Y12, Y10, Y0
	VPBROADCASTW 2(SI), X12
	VCVTPH2PS    X12, X12
	VMULPS       X13, X12, X12
	VCVTDQ2PS    X3, X3
	VFMADD231PS  X12, X3, X5
	ADDQ         $144, SI
	ADDQ         $292, DI
	DECQ         CX
	JNZ          q4kloop

q4kdone:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VSUBPS       X5, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVQ         out+40(FP), AX
	MOVSS        X0, (AX)(R13*4)
	ADDQ         R14, R10
	INCQ         R13
	CMPQ         R13, rows+24(FP)
	JLT          q4krow
	VZEROUPPER
	RET

// func dotQ5KAVX2(w, x *byte, nb, rows, rb int, out *float32)
// Q5_K against Q8_K: as dotQ4KAVX2, with each sub-block's fifth bit
// (bit s of qh[l] for sub-block s) shifted into bit 4 of the codes.
TEXT ·dotQ5KAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ rb+32(FP), R14
	XORQ R13, R13
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x10101010, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

q5krow:
	MOVQ R10, SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y5, Y5, Y5

q5kloop:
	// Bytes 4..15 as w0, w1, w2. scales[0:4] = w0&63, mins[0:4] = w1&63,
	// scales[4:8] = w2&15 | (w0>>6)<<4, mins[4:8] = w2>>4 | (w1>>6)<<4.
	MOVL 4(SI), AX
	MOVL 8(SI), BX
	MOVL 12(SI), DX
	MOVL AX, R8
	SHRL $6, R8
	ANDL $0x03030303, R8
	SHLL $4, R8
	MOVL DX, R9
	ANDL $0x0F0F0F0F, R9
	ORL  R9, R8
	ANDL $0x3F3F3F3F, AX
	SHLQ $32, R8
	ORQ  AX, R8
	MOVL BX, R9
	SHRL $6, R9
	ANDL $0x03030303, R9
	SHLL $4, R9
	SHRL $4, DX
	ANDL $0x0F0F0F0F, DX
	ORL  DX, R9
	ANDL $0x3F3F3F3F, BX
	SHLQ $32, R9
	ORQ  BX, R9

	VMOVQ       R8, X1
	VPMOVZXBW   X1, X1
	VINSERTI128 $1, X1, Y1, Y1
	VMOVQ       R9, X2
	VPMOVZXBW   X2, X2
	VMOVDQU     260(DI), X3
	VPHADDW     276(DI), X3, X3
	VPMADDWD    X2, X3, X3
	VPXOR       Y10, Y10, Y10
	VPXOR       Y11, Y11, Y11

#define Q5K_STEP(qoff, yoff, m0, m1, sh0, n0, sh1, n1) \
	VMOVDQU    qoff(SI), Y6 \
	VPSRLW     $4, Y6, Y7 \
	VPAND      Y14, Y6, Y6 \
	VPAND      Y14, Y7, Y7 \
	sh0        $n0, Y4, Y8 \
	sh1        $n1, Y4, Y9 \
	VPAND      Y15, Y8, Y8 \
	VPAND      Y15, Y9, Y9 \
	VPOR       Y8, Y6, Y6 \
	VPOR       Y9, Y7, Y7 \
	VPMADDUBSW yoff(DI), Y6, Y6 \
	VPMADDUBSW (yoff+32)(DI), Y7, Y7 \
	VPSHUFB    q4kShuf<>+m0(SB), Y1, Y8 \
	VPSHUFB    q4kShuf<>+m1(SB), Y1, Y9 \
	VPMADDWD   Y8, Y6, Y6 \
	VPMADDWD   Y9, Y7, Y7 \
	VPADDD     Y6, Y10, Y10 \
	VPADDD     Y7, Y11, Y11

	VMOVDQU 16(SI), Y4
	Q5K_STEP(48, 4, 0, 32, VPSLLW, 4, VPSLLW, 3)
	Q5K_STEP(80, 68, 64, 96, VPSLLW, 2, VPSLLW, 1)
	Q5K_STEP(112, 132, 128, 160, VPSRLW, 0, VPSRLW, 1)
	Q5K_STEP(144, 196, 192, 224, VPSRLW, 2, VPSRLW, 3)

	VPADDD       Y11, Y10, Y10
	VCVTDQ2PS    Y10, Y10
	VPBROADCASTW (SI), X12
	VCVTPH2PS    X12, Y12
	VBROADCASTSS (DI), Y13
	VMULPS       Y13, Y12, Y12
	VFMADD231PS  Y12, Y10, Y0
	VPBROADCASTW 2(SI), X12
	VCVTPH2PS    X12, X12
	VMULPS       X13, X12, X12
	VCVTDQ2PS    X3, X3
	VFMADD231PS  X12, X3, X5
	ADDQ         $176, SI
	ADDQ         $292, DI
	DECQ         CX
	JNZ          q5kloop

q5kdone:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VSUBPS       X5, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVQ         out+40(FP), AX
	MOVSS        X0, (AX)(R13*4)
	ADDQ         R14, R10
	INCQ         R13
	CMPQ         R13, rows+24(FP)
	JLT          q5krow
	VZEROUPPER
	RET

// func dotQ6KAVX2(w, x *byte, nb, rows, rb int, out *float32)
// Q6_K against Q8_K. Codes are rebuilt unsigned (0..63) so VPMADDUBSW can
// take them as its unsigned operand; the -32 offset is applied once per
// block as 32·Σ scale·bsum from Q8_K's 16-element sums (exact in int32).
TEXT ·dotQ6KAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R10
	MOVQ rb+32(FP), R14
	XORQ R13, R13
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x30303030, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

q6krow:
	MOVQ R10, SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0

q6kloop:
	VPMOVSXBW 192(SI), Y1
	VPMADDWD  260(DI), Y1, Y2
	VPSLLD    $5, Y2, Y2
	VPXOR     Y10, Y10, Y10
	VPXOR     Y11, Y11, Y11

#define Q6K_QUARTER(qlreg, qhreg, yoff, mask, acc) \
	VPOR       qhreg, qlreg, Y6 \
	VPMADDUBSW yoff(DI), Y6, Y6 \
	VPSHUFB    q6kShuf<>+mask(SB), Y3, Y7 \
	VPMADDWD   Y7, Y6, Y6 \
	VPADDD     Y6, acc, acc

#define Q6K_HALF(qloff, qhoff, yoff, perm) \
	VPERMQ  $perm, Y1, Y3 \
	VMOVDQU qloff(SI), Y4 \
	VMOVDQU (qloff+32)(SI), Y5 \
	VMOVDQU qhoff(SI), Y9 \
	VPAND   Y14, Y4, Y12 \
	VPSLLW  $4, Y9, Y13 \
	VPAND   Y15, Y13, Y13 \
	Q6K_QUARTER(Y12, Y13, yoff, 0, Y10) \
	VPAND   Y14, Y5, Y12 \
	VPSLLW  $2, Y9, Y13 \
	VPAND   Y15, Y13, Y13 \
	Q6K_QUARTER(Y12, Y13, (yoff+32), 32, Y11) \
	VPSRLW  $4, Y4, Y12 \
	VPAND   Y14, Y12, Y12 \
	VPAND   Y15, Y9, Y13 \
	Q6K_QUARTER(Y12, Y13, (yoff+64), 64, Y10) \
	VPSRLW  $4, Y5, Y12 \
	VPAND   Y14, Y12, Y12 \
	VPSRLW  $2, Y9, Y13 \
	VPAND   Y15, Y13, Y13 \
	Q6K_QUARTER(Y12, Y13, (yoff+96), 96, Y11)

	Q6K_HALF(0, 128, 4, 0x44)
	Q6K_HALF(64, 160, 132, 0xEE)

	VPADDD       Y11, Y10, Y10
	VPSUBD       Y2, Y10, Y10
	VCVTDQ2PS    Y10, Y10
	VPBROADCASTW 208(SI), X12
	VCVTPH2PS    X12, Y12
	VBROADCASTSS (DI), Y13
	VMULPS       Y13, Y12, Y12
	VFMADD231PS  Y12, Y10, Y0
	ADDQ         $210, SI
	ADDQ         $292, DI
	DECQ         CX
	JNZ          q6kloop

q6kdone:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVQ         out+40(FP), AX
	MOVSS        X0, (AX)(R13*4)
	ADDQ         R14, R10
	INCQ         R13
	CMPQ         R13, rows+24(FP)
	JLT          q6krow
	VZEROUPPER
	RET

// q4kShuf: mask i (32 bytes) broadcasts int16 word i to every word.
DATA q4kShuf<>+0(SB)/8, $0x0100010001000100
DATA q4kShuf<>+8(SB)/8, $0x0100010001000100
DATA q4kShuf<>+16(SB)/8, $0x0100010001000100
DATA q4kShuf<>+24(SB)/8, $0x0100010001000100
DATA q4kShuf<>+32(SB)/8, $0x0302030203020302
DATA q4kShuf<>+40(SB)/8, $0x0302030203020302
DATA q4kShuf<>+48(SB)/8, $0x0302030203020302
DATA q4kShuf<>+56(SB)/8, $0x0302030203020302
DATA q4kShuf<>+64(SB)/8, $0x0504050405040504
DATA q4kShuf<>+72(SB)/8, $0x0504050405040504
DATA q4kShuf<>+80(SB)/8, $0x0504050405040504
DATA q4kShuf<>+88(SB)/8, $0x0504050405040504
DATA q4kShuf<>+96(SB)/8, $0x0706070607060706
DATA q4kShuf<>+104(SB)/8, $0x0706070607060706
DATA q4kShuf<>+112(SB)/8, $0x0706070607060706
DATA q4kShuf<>+120(SB)/8, $0x0706070607060706
DATA q4kShuf<>+128(SB)/8, $0x0908090809080908
DATA q4kShuf<>+136(SB)/8, $0x0908090809080908
DATA q4kShuf<>+144(SB)/8, $0x0908090809080908
DATA q4kShuf<>+152(SB)/8, $0x0908090809080908
DATA q4kShuf<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kShuf<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kShuf<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kShuf<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q4kShuf<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kShuf<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kShuf<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kShuf<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q4kShuf<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kShuf<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kShuf<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q4kShuf<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q4kShuf<>(SB), RODATA|NOPTR, $256

// q6kShuf: mask p broadcasts word 2p to the low lane and 2p+1 to the high lane.
DATA q6kShuf<>+0(SB)/8, $0x0100010001000100
DATA q6kShuf<>+8(SB)/8, $0x0100010001000100
DATA q6kShuf<>+16(SB)/8, $0x0302030203020302
DATA q6kShuf<>+24(SB)/8, $0x0302030203020302
DATA q6kShuf<>+32(SB)/8, $0x0504050405040504
DATA q6kShuf<>+40(SB)/8, $0x0504050405040504
DATA q6kShuf<>+48(SB)/8, $0x0706070607060706
DATA q6kShuf<>+56(SB)/8, $0x0706070607060706
DATA q6kShuf<>+64(SB)/8, $0x0908090809080908
DATA q6kShuf<>+72(SB)/8, $0x0908090809080908
DATA q6kShuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6kShuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA q6kShuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6kShuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA q6kShuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA q6kShuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL q6kShuf<>(SB), RODATA|NOPTR, $128

// q5ShufLo/Hi send qh byte i/8 (Lo) or 2+i/8 (Hi) to byte i of each lane;
// q5Bits then selects bit i%8.
DATA q5ShufLo<>+0(SB)/8, $0x0000000000000000
DATA q5ShufLo<>+8(SB)/8, $0x0101010101010101
DATA q5ShufLo<>+16(SB)/8, $0x0000000000000000
DATA q5ShufLo<>+24(SB)/8, $0x0101010101010101
GLOBL q5ShufLo<>(SB), RODATA|NOPTR, $32
DATA q5ShufHi<>+0(SB)/8, $0x0202020202020202
DATA q5ShufHi<>+8(SB)/8, $0x0303030303030303
DATA q5ShufHi<>+16(SB)/8, $0x0202020202020202
DATA q5ShufHi<>+24(SB)/8, $0x0303030303030303
GLOBL q5ShufHi<>(SB), RODATA|NOPTR, $32
DATA q5Bits<>+0(SB)/8, $0x8040201008040201
DATA q5Bits<>+8(SB)/8, $0x8040201008040201
DATA q5Bits<>+16(SB)/8, $0x8040201008040201
DATA q5Bits<>+24(SB)/8, $0x8040201008040201
GLOBL q5Bits<>(SB), RODATA|NOPTR, $32

// func cvtF16AVX2(src *uint16, dst *float32, n int)
// n is a multiple of 32. F16C conversion is exact for every finite half.
TEXT ·cvtF16AVX2(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	JZ   cvtdone

cvtloop:
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	VMOVUPS   Y2, 64(DI)
	VMOVUPS   Y3, 96(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	DECQ      CX
	JNZ       cvtloop

cvtdone:
	VZEROUPPER
	RET
