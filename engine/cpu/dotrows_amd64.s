#include "textflag.h"

// Multi-row Q8_0 kernels (dotrows_amd64.go): rows weight rows (rb bytes
// apart) against R activation rows (xrb bytes apart) at once, out[i·ldo+r]
// for activation row i and weight row r. Each weight block is loaded, its
// signs taken and its scale widened once for all R rows, and the R rows'
// sums are R independent FMA chains. Per activation row the arithmetic is
// dotQ8_0AVX2's, in its order (int32 lane sums, ×(dw·dx) into eight float
// lanes, the same reduction), so every result equals the single-row
// kernel's bit for bit: batched decoding equals sequential decoding.

// Q80ROW adds one activation row's block (codes at xd, its scale as a
// float at xs) into acc; Y4 holds the weight codes, Y5 their magnitudes,
// Y6 the weight scale in every lane, Y15 sixteen-bit ones.
#define Q80ROW(xd, xs, acc) \
	VMOVDQU      xd, Y7 \
	VPSIGNB      Y4, Y7, Y7 \
	VPMADDUBSW   Y7, Y5, Y8 \
	VPMADDWD     Y15, Y8, Y8 \
	VCVTDQ2PS    Y8, Y8 \
	VBROADCASTSS xs, Y9 \
	VMULPS       Y9, Y6, Y9 \
	VFMADD231PS  Y9, Y8, acc

// Q80SUM reduces acc (its low half xacc) as dotQ8_0AVX2 does and stores it.
#define Q80SUM(acc, xacc, dst) \
	VEXTRACTF128 $1, acc, X10 \
	VADDPS       X10, xacc, xacc \
	VHADDPS      xacc, xacc, xacc \
	VHADDPS      xacc, xacc, xacc \
	VMOVSS       xacc, dst

// Q80BLOCK loads the weight block at SI, and prefetches a kilobyte ahead:
// with four rows to compute a block takes long enough that the hardware
// prefetcher alone left the loads waiting (a decode step of four rows
// took about a fifth longer without it).
#define Q80BLOCK \
	PREFETCHT0   1024(SI) \
	VMOVDQU      2(SI), Y4 \
	VPSIGNB      Y4, Y4, Y5 \
	VPBROADCASTW (SI), X6 \
	VCVTPH2PS    X6, Y6

// Q80SETUP loads the arguments: R10 the weight row, R14 rb, R8 xrb, R9
// 3·xrb, R13 nb·4 (the scale rows' stride), R12 3·nb·4, AX out, R11 ldo
// bytes, BX rows, Y15 ones.
#define Q80SETUP \
	MOVQ         w+0(FP), R10 \
	MOVQ         rb+40(FP), R14 \
	MOVQ         xrb+48(FP), R8 \
	LEAQ         (R8)(R8*2), R9 \
	MOVQ         nb+24(FP), R13 \
	SHLQ         $2, R13 \
	LEAQ         (R13)(R13*2), R12 \
	MOVQ         out+56(FP), AX \
	MOVQ         ldo+64(FP), R11 \
	SHLQ         $2, R11 \
	MOVQ         rows+32(FP), BX \
	MOVL         $0x00010001, DX \
	VMOVD        DX, X15 \
	VPBROADCASTD X15, Y15

// Q80NEXT starts a weight row's blocks: SI its first, DI the first
// activation row's, DX its first scale, CX the count.
#define Q80NEXT \
	MOVQ         R10, SI \
	MOVQ         x+8(FP), DI \
	MOVQ         xs+16(FP), DX \
	MOVQ         nb+24(FP), CX

// Q80ADVANCE moves to the next block.
#define Q80ADVANCE \
	ADDQ         $34, SI \
	ADDQ         $34, DI \
	ADDQ         $4, DX \
	DECQ         CX

// Q80ROWDONE moves to the next weight row; falls through when none is left.
#define Q80ROWDONE \
	ADDQ         R14, R10 \
	ADDQ         $4, AX \
	DECQ         BX

// Two-row float kernels: one weight row (f16 or f32) against two float
// activation rows (ldx elements apart), n a multiple of 32 elements. Per
// row the arithmetic is dotF16AVX2's or dotF32AVX2's (four 8-lane FMA
// chains, then the same reduction), so each result equals theirs bit for
// bit; the weights are loaded (and widened) once for both rows.

// FXSUM reduces four accumulators as dotF16AVX2 does and stores the sum.
#define FXSUM(a0, a1, a2, a3, x0, tmp, dst) \
	VADDPS       a1, a0, a0 \
	VADDPS       a3, a2, a2 \
	VADDPS       a2, a0, a0 \
	VEXTRACTF128 $1, a0, tmp \
	VADDPS       tmp, x0, x0 \
	VHADDPS      x0, x0, x0 \
	VHADDPS      x0, x0, x0 \
	VMOVSS       x0, dst

// FXSETUP loads the arguments (n > 0, a multiple of 32: the caller
// checks) and clears both rows' accumulators.
#define FXSETUP \
	MOVQ         w+0(FP), SI \
	MOVQ         x+8(FP), DI \
	MOVQ         ldx+16(FP), R8 \
	SHLQ         $2, R8 \
	MOVQ         n+24(FP), CX \
	SHRQ         $5, CX \
	MOVQ         out+32(FP), AX \
	VXORPS       Y0, Y0, Y0 \
	VXORPS       Y1, Y1, Y1 \
	VXORPS       Y2, Y2, Y2 \
	VXORPS       Y3, Y3, Y3 \
	VXORPS       Y8, Y8, Y8 \
	VXORPS       Y9, Y9, Y9 \
	VXORPS       Y10, Y10, Y10 \
	VXORPS       Y11, Y11, Y11

// FXFMA multiplies the 32 weights in Y4-Y7 into both rows' accumulators.
#define FXFMA \
	VFMADD231PS  (DI), Y4, Y0 \
	VFMADD231PS  32(DI), Y5, Y1 \
	VFMADD231PS  64(DI), Y6, Y2 \
	VFMADD231PS  96(DI), Y7, Y3 \
	VFMADD231PS  (DI)(R8*1), Y4, Y8 \
	VFMADD231PS  32(DI)(R8*1), Y5, Y9 \
	VFMADD231PS  64(DI)(R8*1), Y6, Y10 \
	VFMADD231PS  96(DI)(R8*1), Y7, Y11 \
	ADDQ         $128, DI

// Q40M adds one prepared activation row's pair of blocks (low codes at
// lo, high codes at hi, offsets at off, scales at sc) into acc; Y4 and Y5
// hold the weight pair's low and high nibbles, Y6 its scales, Y15
// sixteen-bit ones.
#define Q40M(lo, hi, off, sc, acc) \
	VPMADDUBSW   lo, Y4, Y7 \
	VPMADDUBSW   hi, Y5, Y8 \
	VPADDW       Y8, Y7, Y7 \
	VPSUBW       off, Y7, Y7 \
	VPMADDWD     Y15, Y7, Y7 \
	VCVTDQ2PS    Y7, Y7 \
	VMULPS       sc, Y6, Y8 \
	VFMADD231PS  Y8, Y7, acc

// func dotQ8_0AVX2M4(w, x *byte, xs *float32, nb, rows, rb, xrb int, out *float32, ldo int)
TEXT ·dotQ8_0AVX2M4(SB), NOSPLIT, $0-72
	Q80SETUP

m4row:
	Q80NEXT
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

m4loop:
	Q80BLOCK
	Q80ROW(2(DI), (DX), Y0)
	Q80ROW(2(DI)(R8*1), (DX)(R13*1), Y1)
	Q80ROW(2(DI)(R8*2), (DX)(R13*2), Y2)
	Q80ROW(2(DI)(R9*1), (DX)(R12*1), Y3)
	Q80ADVANCE
	JNZ m4loop

	Q80SUM(Y0, X0, (AX))
	Q80SUM(Y1, X1, (AX)(R11*1))
	Q80SUM(Y2, X2, (AX)(R11*2))
	LEAQ   (AX)(R11*2), DX
	Q80SUM(Y3, X3, (DX)(R11*1))
	Q80ROWDONE
	JNZ m4row
	VZEROUPPER
	RET

// func dotQ8_0AVX2M3(w, x *byte, xs *float32, nb, rows, rb, xrb int, out *float32, ldo int)
TEXT ·dotQ8_0AVX2M3(SB), NOSPLIT, $0-72
	Q80SETUP

m3row:
	Q80NEXT
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2

m3loop:
	Q80BLOCK
	Q80ROW(2(DI), (DX), Y0)
	Q80ROW(2(DI)(R8*1), (DX)(R13*1), Y1)
	Q80ROW(2(DI)(R8*2), (DX)(R13*2), Y2)
	Q80ADVANCE
	JNZ m3loop

	Q80SUM(Y0, X0, (AX))
	Q80SUM(Y1, X1, (AX)(R11*1))
	Q80SUM(Y2, X2, (AX)(R11*2))
	Q80ROWDONE
	JNZ m3row
	VZEROUPPER
	RET

// func dotQ8_0AVX2M2(w, x *byte, xs *float32, nb, rows, rb, xrb int, out *float32, ldo int)
TEXT ·dotQ8_0AVX2M2(SB), NOSPLIT, $0-72
	Q80SETUP

m2row:
	Q80NEXT
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

m2loop:
	Q80BLOCK
	Q80ROW(2(DI), (DX), Y0)
	Q80ROW(2(DI)(R8*1), (DX)(R13*1), Y1)
	Q80ADVANCE
	JNZ m2loop

	Q80SUM(Y0, X0, (AX))
	Q80SUM(Y1, X1, (AX)(R11*1))
	Q80ROWDONE
	JNZ m2row
	VZEROUPPER
	RET

// func dotF16AVX2M2(w *uint16, x *float32, ldx, n int, out *float32)
TEXT ·dotF16AVX2M2(SB), NOSPLIT, $0-40
	FXSETUP

f16m2loop:
	VCVTPH2PS (SI), Y4
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 48(SI), Y7
	FXFMA
	ADDQ      $64, SI
	DECQ      CX
	JNZ       f16m2loop

	FXSUM(Y0, Y1, Y2, Y3, X0, X1, (AX))
	FXSUM(Y8, Y9, Y10, Y11, X8, X12, 4(AX))
	VZEROUPPER
	RET

// func dotF32AVX2M2(w, x *float32, ldx, n int, out *float32)
TEXT ·dotF32AVX2M2(SB), NOSPLIT, $0-40
	FXSETUP

f32m2loop:
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	FXFMA
	ADDQ    $128, SI
	DECQ    CX
	JNZ     f32m2loop

	FXSUM(Y0, Y1, Y2, Y3, X0, X1, (AX))
	FXSUM(Y8, Y9, Y10, Y11, X8, X12, 4(AX))
	VZEROUPPER
	RET

// func dotQ4_0AVX2M4(w, xp *byte, np, rows, rb, xpr int, out *float32, ldo int)
// Q4_0 weight rows against four activation rows prepared by prepQ4_0
// (xpr bytes apart, 128 bytes a pair of blocks: codes 0-15 of blocks A
// and B, codes 16-31 of both, the int16 offset 8·(x0+x1) per byte pair,
// the scales [dA×4 | dB×4]), np pairs of blocks. Per row the arithmetic
// is dotQ4_0AVX2's (whose activation registers the preparation holds),
// so each result equals it bit for bit; the nibbles, the weight scales
// and the activations' preparation are done once, not once per row.
TEXT ·dotQ4_0AVX2M4(SB), NOSPLIT, $0-64
	MOVQ         w+0(FP), R10
	MOVQ         rb+32(FP), R14
	MOVQ         xpr+40(FP), R8
	LEAQ         (R8)(R8*2), R9
	MOVQ         out+48(FP), AX
	MOVQ         ldo+56(FP), R11
	SHLQ         $2, R11
	MOVQ         rows+24(FP), BX
	MOVL         $0x00010001, DX
	VMOVD        DX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x0F0F0F0F, DX
	VMOVD        DX, X14
	VPBROADCASTD X14, Y14

q4m4row:
	MOVQ   R10, SI
	MOVQ   xp+8(FP), DI
	MOVQ   np+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

q4m4loop:
	PREFETCHT0   1024(SI)
	VMOVDQU      2(SI), X4
	VINSERTI128  $1, 20(SI), Y4, Y4
	VPSRLW       $4, Y4, Y5
	VPAND        Y14, Y4, Y4
	VPAND        Y14, Y5, Y5
	VPBROADCASTW (SI), X6
	VPBROADCASTW 18(SI), X7
	VPBLENDD     $0x0C, X7, X6, X6
	VCVTPH2PS    X6, Y6
	Q40M(0(DI), 32(DI), 64(DI), 96(DI), Y0)
	Q40M(0(DI)(R8*1), 32(DI)(R8*1), 64(DI)(R8*1), 96(DI)(R8*1), Y1)
	Q40M(0(DI)(R8*2), 32(DI)(R8*2), 64(DI)(R8*2), 96(DI)(R8*2), Y2)
	Q40M(0(DI)(R9*1), 32(DI)(R9*1), 64(DI)(R9*1), 96(DI)(R9*1), Y3)
	ADDQ         $36, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          q4m4loop

	Q80SUM(Y0, X0, (AX))
	Q80SUM(Y1, X1, (AX)(R11*1))
	Q80SUM(Y2, X2, (AX)(R11*2))
	LEAQ   (AX)(R11*2), DX
	Q80SUM(Y3, X3, (DX)(R11*1))
	ADDQ   R14, R10
	ADDQ   $4, AX
	DECQ   BX
	JNZ    q4m4row
	VZEROUPPER
	RET
