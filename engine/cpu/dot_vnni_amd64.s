#include "textflag.h"

// AVX-512 VNNI row-run kernels for the 32-element block types against
// Q8_0 activations. Eight weight rows are computed at once, in two groups
// of four with one row per 128-bit lane: lane r holds row r's 16 code
// bytes of the current block, and the activation half-blocks are
// broadcast to all lanes, so the activation loads, the offset correction
// and the activation scale are shared by eight rows. VPDPBUSD multiplies
// the unsigned codes by the signed activations straight into int32; the
// code offset (8 for Q4_0, 16 for Q5_0, 128 for Q8_0's biased codes) is
// taken out exactly as offset·Σx, computed once per block for all rows
// (VPDPBUSD of the constant offset bytes by x). Each lane's four int32
// partial sums are scaled by its row's d_w·d_x (VPERMPS spreads the eight
// row scales to their lanes) and accumulated in float.
//
// Rows: 0 (SI), 1 (SI)(R14*1), 2 (SI)(R14*2), 3 (R11), 4 (SI)(R14*4),
// 5 (R8), 6 (R8)(R14*1), 7 (R8)(R14*2); R14 = rb.
//
// func dotQ4_0VNNI(w, x *byte, nb, rows8, rb int, out *float32)
// rows8 groups of eight rows, rb bytes apart; out gets 8·rows8 results.

// VNNI_SETUP(offbyte): Z14 = 0x0F bytes, Z13 = offset bytes, Z12/Z22 =
// lane indices for VPERMPS (rows 0-3 / 4-7).
#define VNNI_SETUP(offbyte) \
	MOVQ         w+0(FP), R10 \
	MOVQ         rb+32(FP), R14 \
	LEAQ         (R14)(R14*2), R12 \
	XORQ         R13, R13 \
	MOVL         $0x0F0F0F0F, AX \
	VPBROADCASTD AX, Z14 \
	MOVL         offbyte, AX \
	VPBROADCASTD AX, Z13 \
	VMOVDQU32    vnniLane<>(SB), Z12 \
	VMOVDQU32    vnniLane<>+64(SB), Z22

// VNNI_ROWSTART: row pointers of this group of eight, DI = x, CX = nb,
// R9 = the prefetch pointer, two groups ahead (VNNI_PREFETCH).
#define VNNI_ROWSTART \
	MOVQ   R10, SI \
	LEAQ   (R10)(R12*1), R11 \
	LEAQ   (R11)(R14*2), R8 \
	MOVQ   x+8(FP), DI \
	MOVQ   nb+16(FP), CX \
	LEAQ   (R10)(R14*8), R9 \
	LEAQ   (R9)(R14*8), R9 \
	VXORPS Z0, Z0, Z0 \
	VXORPS Z17, Z17, Z17

// VNNI_NEXT(ts): advance the row pointers and x by one block.
#define VNNI_NEXT(ts) \
	ADDQ ts, SI \
	ADDQ ts, R11 \
	ADDQ ts, R8 \
	ADDQ $34, DI

// VNNI_PREFETCH3/5: the rows are read as eight interleaved streams, which
// the hardware prefetchers follow poorly (measured: a q8_0 kernel streamed
// half the AVX2 kernel's GB/s from memory without this), so the group two
// ahead is prefetched linearly: step = 8 blocks per iteration, 3 or 5
// lines cover it.
#define VNNI_PREFETCH3(step) \
	PREFETCHT0 (R9) \
	PREFETCHT0 64(R9) \
	PREFETCHT0 128(R9) \
	ADDQ       step, R9

#define VNNI_PREFETCH5(step) \
	PREFETCHT0 (R9) \
	PREFETCHT0 64(R9) \
	PREFETCHT0 128(R9) \
	PREFETCHT0 192(R9) \
	PREFETCHT0 256(R9) \
	ADDQ       step, R9

// VNNI_XBLOCK: broadcast the activation halves (Z1 = x[0:16], Z2 =
// x[16:32]), Z3 = −offset·Σx per 4-byte group, Y10 = d_x.
#define VNNI_XBLOCK \
	VBROADCASTI32X4 2(DI), Z1 \
	VBROADCASTI32X4 18(DI), Z2 \
	VPXORD          Z3, Z3, Z3 \
	VPDPBUSD        Z1, Z13, Z3 \
	VPDPBUSD        Z2, Z13, Z3 \
	VPXORD          Z4, Z4, Z4 \
	VPSUBD          Z3, Z4, Z3 \
	VPBROADCASTW    (DI), X10 \
	VCVTPH2PS       X10, Y10

// VNNI_LOAD8(off, xa, za, xb, zb): the eight rows' 16 bytes at off into
// za (rows 0-3) and zb (rows 4-7); xa, xb are their low 128 bits.
#define VNNI_LOAD8(off, xa, za, xb, zb) \
	VMOVDQU32    off(SI), xa \
	VINSERTI32X4 $1, off(SI)(R14*1), za, za \
	VINSERTI32X4 $2, off(SI)(R14*2), za, za \
	VINSERTI32X4 $3, off(R11), za, za \
	VMOVDQU32    off(SI)(R14*4), xb \
	VINSERTI32X4 $1, off(R8), zb, zb \
	VINSERTI32X4 $2, off(R8)(R14*1), zb, zb \
	VINSERTI32X4 $3, off(R8)(R14*2), zb, zb

// VNNI_NIBBLES(lo, hi): split code bytes in lo into low (lo) and high (hi)
// nibbles.
#define VNNI_NIBBLES(lo, hi) \
	VPSRLW $4, lo, hi \
	VPANDD Z14, lo, lo \
	VPANDD Z14, hi, hi

// VNNI_DOT(lo, hi, acc): acc = −offset·Σx + Σ code·x from the codes in lo
// (against x[0:16]) and hi (x[16:32]).
#define VNNI_DOT(lo, hi, acc) \
	VMOVDQA32 Z3, acc \
	VPDPBUSD  Z1, lo, acc \
	VPDPBUSD  Z2, hi, acc

// VNNI_SCALE: the eight rows' d_w·d_x spread to their lanes (Z9 rows 0-3,
// Z21 rows 4-7), times the converted sums Z8 / Z20, into Z0 / Z17. The
// eight f16 scales are packed in two general registers: the vector ALUs
// are the bottleneck, the integer ones are idle.
#define VNNI_SCALE \
	MOVWQZX      (SI), AX \
	MOVWQZX      (SI)(R14*1), BX \
	SHLQ         $16, BX \
	ORQ          BX, AX \
	MOVWQZX      (SI)(R14*2), BX \
	SHLQ         $32, BX \
	ORQ          BX, AX \
	MOVWQZX      (R11), BX \
	SHLQ         $48, BX \
	ORQ          BX, AX \
	MOVWQZX      (SI)(R14*4), DX \
	MOVWQZX      (R8), BX \
	SHLQ         $16, BX \
	ORQ          BX, DX \
	MOVWQZX      (R8)(R14*1), BX \
	SHLQ         $32, BX \
	ORQ          BX, DX \
	MOVWQZX      (R8)(R14*2), BX \
	SHLQ         $48, BX \
	ORQ          BX, DX \
	VMOVQ        AX, X9 \
	VPINSRQ      $1, DX, X9, X9 \
	VCVTPH2PS    X9, Y9 \
	VMULPS       Y10, Y9, Y9 \
	VPERMPS      Z9, Z22, Z21 \
	VPERMPS      Z9, Z12, Z9 \
	VCVTDQ2PS    Z8, Z8 \
	VCVTDQ2PS    Z20, Z20 \
	VFMADD231PS  Z9, Z8, Z0 \
	VFMADD231PS  Z21, Z20, Z17

// VNNI_STORE4(acc, yacc, off): reduce acc's four lanes (yacc = its low 256
// bits) to four floats at off(AX).
#define VNNI_STORE4(acc, yacc, off) \
	VEXTRACTF64X4 $1, acc, Y1 \
	VHADDPS       Y1, yacc, Y2 \
	VHADDPS       Y2, Y2, Y2 \
	MOVSS         X2, off(AX) \
	VEXTRACTPS    $1, X2, off+8(AX) \
	VEXTRACTF128  $1, Y2, X3 \
	MOVSS         X3, off+4(AX) \
	VEXTRACTPS    $1, X3, off+12(AX)

// VNNI_END(label): store the group's eight results, go to the next group.
#define VNNI_END(label) \
	MOVQ        out+40(FP), AX \
	MOVQ        R13, BX \
	SHLQ        $5, BX \
	ADDQ        BX, AX \
	VNNI_STORE4(Z0, Y0, 0) \
	VMOVAPS     Z17, Z4 \
	VNNI_STORE4(Z4, Y4, 16) \
	LEAQ        (R10)(R14*8), R10 \
	INCQ        R13 \
	CMPQ        R13, rows8+24(FP) \
	JLT         label \
	VZEROUPPER \
	RET

// The packed kernels read weights interleaved at load (repack.go): per
// group of eight rows and block, the eight f16 scales (16 bytes), for Q5_0
// the four 64-bit byte masks that Q5_MASK assembles (32 bytes), then each
// 64-byte register image that VNNI_LOAD8 assembles (rows 0-3, rows 4-7;
// for Q8_0 first bytes 0-15, then 16-31, already biased by XOR 0x80). A
// block of a group is then two to four plain loads (and four mask loads)
// and one scale conversion from one stream, instead of eight scattered
// 16-byte inserts, eight scalar scale loads (and 16 scalar qh loads). The integer and float operations
// are VNNI_DOT and VNNI_SCALE's, in the same order, so the results equal
// the unpacked kernels' bit for bit.
//
// func dotQ8_0VNNIP(w, x *byte, nb, groups int, out *float32)
// groups groups of eight rows, nb blocks each, packed; out gets 8·groups.

// VNNIP_Q8CODES: a packed Q8_0 block's code images (rows 0-3 bytes 0-15 to
// Z6, 16-31 to Z7; rows 4-7 to Z18, Z19), and the block four ahead
// prefetched.
#define VNNIP_Q8CODES \
	VMOVDQU32  16(SI), Z6 \
	VMOVDQU32  80(SI), Z18 \
	VMOVDQU32  144(SI), Z7 \
	VMOVDQU32  208(SI), Z19 \
	PREFETCHT0 1088(SI) \
	PREFETCHT0 1152(SI) \
	PREFETCHT0 1216(SI) \
	PREFETCHT0 1280(SI)

// VNNIP_SETUP(offbyte): as VNNI_SETUP for the packed stream SI.
#define VNNIP_SETUP(offbyte) \
	MOVQ         w+0(FP), SI \
	MOVQ         out+32(FP), AX \
	MOVQ         groups+24(FP), R13 \
	MOVL         $0x0F0F0F0F, BX \
	VPBROADCASTD BX, Z14 \
	MOVL         offbyte, BX \
	VPBROADCASTD BX, Z13 \
	VMOVDQU32    vnniLane<>(SB), Z12 \
	VMOVDQU32    vnniLane<>+64(SB), Z22

// VNNIP_ROWSTART: x and nb for the group, accumulators cleared.
#define VNNIP_ROWSTART \
	MOVQ   x+8(FP), DI \
	MOVQ   nb+16(FP), CX \
	VXORPS Z0, Z0, Z0 \
	VXORPS Z17, Z17, Z17

// VNNIP_SCALE: VNNI_SCALE with the eight scales read from the block.
#define VNNIP_SCALE \
	VCVTPH2PS   (SI), Y9 \
	VMULPS      Y10, Y9, Y9 \
	VPERMPS     Z9, Z22, Z21 \
	VPERMPS     Z9, Z12, Z9 \
	VCVTDQ2PS   Z8, Z8 \
	VCVTDQ2PS   Z20, Z20 \
	VFMADD231PS Z9, Z8, Z0 \
	VFMADD231PS Z21, Z20, Z17

// VNNIP_NIBBLES(off): the 4-bit codes of rows 0-3 at off(SI) and rows 4-7
// at off+64(SI), split into Z6/Z7 and Z18/Z19.
#define VNNIP_NIBBLES(off) \
	VMOVDQU32 off(SI), Z6 \
	VMOVDQU32 off+64(SI), Z18 \
	VNNI_NIBBLES(Z6, Z7) \
	VNNI_NIBBLES(Z18, Z19)

// VNNIP_BLOCK(ts, label): the block's dot products and scaling; advance by
// one packed block (ts bytes) and x, loop to label while blocks remain.
#define VNNIP_BLOCK(ts, label) \
	VNNI_DOT(Z6, Z7, Z8) \
	VNNI_DOT(Z18, Z19, Z20) \
	VNNIP_SCALE \
	ADDQ ts, SI \
	ADDQ $34, DI \
	DECQ CX \
	JNZ  label

// VNNIP_END(label): store the group's eight results, next group.
#define VNNIP_END(label) \
	VNNI_STORE4(Z0, Y0, 0) \
	VMOVAPS     Z17, Z4 \
	VNNI_STORE4(Z4, Y4, 16) \
	ADDQ        $32, AX \
	DECQ        R13 \
	JNZ         label \
	VZEROUPPER \
	RET

TEXT ·dotQ4_0VNNI(SB), NOSPLIT, $0-48
	VNNI_SETUP($0x08080808)

q40vrow:
	VNNI_ROWSTART

q40vloop:
	VNNI_XBLOCK
	VNNI_LOAD8(2, X6, Z6, X18, Z18)
	VNNI_NIBBLES(Z6, Z7)
	VNNI_NIBBLES(Z18, Z19)
	VNNI_DOT(Z6, Z7, Z8)
	VNNI_DOT(Z18, Z19, Z20)
	VNNI_SCALE
	VNNI_PREFETCH3($144)
	VNNI_NEXT($18)
	DECQ CX
	JNZ  q40vloop
	VNNI_END(q40vrow)

// func dotQ5_0VNNI(w, x *byte, nb, rows8, rb int, out *float32)
// As dotQ4_0VNNI; each group's 64 code bytes get a 64-bit byte mask, one
// bit per code, from the four rows' qh halves (low 16 bits for the low
// nibbles, high 16 bits for the high nibbles, row r at bits 16r), built in
// general registers; a masked VPADDB adds 16 to the selected codes.
#define Q5_MASK(a0, a1, a2, a3, k) \
	MOVWQZX a0, AX \
	MOVWQZX a1, BX \
	SHLQ    $16, BX \
	ORQ     BX, AX \
	MOVWQZX a2, BX \
	SHLQ    $32, BX \
	ORQ     BX, AX \
	MOVWQZX a3, BX \
	SHLQ    $48, BX \
	ORQ     BX, AX \
	KMOVQ   AX, k

TEXT ·dotQ5_0VNNI(SB), NOSPLIT, $0-48
	VNNI_SETUP($0x10101010)

q50vrow:
	VNNI_ROWSTART

q50vloop:
	VNNI_XBLOCK
	VNNI_LOAD8(6, X6, Z6, X18, Z18)
	VNNI_NIBBLES(Z6, Z7)
	VNNI_NIBBLES(Z18, Z19)
	Q5_MASK(2(SI), 2(SI)(R14*1), 2(SI)(R14*2), 2(R11), K1)
	Q5_MASK(4(SI), 4(SI)(R14*1), 4(SI)(R14*2), 4(R11), K2)
	Q5_MASK(2(SI)(R14*4), 2(R8), 2(R8)(R14*1), 2(R8)(R14*2), K3)
	Q5_MASK(4(SI)(R14*4), 4(R8), 4(R8)(R14*1), 4(R8)(R14*2), K4)
	VPADDB Z13, Z6, K1, Z6
	VPADDB Z13, Z7, K2, Z7
	VPADDB Z13, Z18, K3, Z18
	VPADDB Z13, Z19, K4, Z19
	VNNI_DOT(Z6, Z7, Z8)
	VNNI_DOT(Z18, Z19, Z20)
	VNNI_SCALE
	VNNI_PREFETCH3($176)
	VNNI_NEXT($22)
	DECQ CX
	JNZ  q50vloop
	VNNI_END(q50vrow)

// func dotQ8_0VNNI(w, x *byte, nb, rows8, rb int, out *float32)
// Signed codes are biased to unsigned (XOR 0x80 adds 128) for VPDPBUSD;
// the offset is then 128·Σx.
TEXT ·dotQ8_0VNNI(SB), NOSPLIT, $0-48
	VNNI_SETUP($0x80808080)

q80vrow:
	VNNI_ROWSTART

q80vloop:
	VNNI_XBLOCK
	VNNI_LOAD8(2, X6, Z6, X18, Z18)
	VNNI_LOAD8(18, X7, Z7, X19, Z19)
	VPXORD Z13, Z6, Z6
	VPXORD Z13, Z7, Z7
	VPXORD Z13, Z18, Z18
	VPXORD Z13, Z19, Z19
	VNNI_DOT(Z6, Z7, Z8)
	VNNI_DOT(Z18, Z19, Z20)
	VNNI_SCALE
	VNNI_PREFETCH5($272)
	VNNI_NEXT($34)
	DECQ CX
	JNZ  q80vloop
	VNNI_END(q80vrow)

TEXT ·dotQ8_0VNNIP(SB), NOSPLIT, $0-40
	VNNIP_SETUP($0x80808080)

q80prow:
	VNNIP_ROWSTART

q80ploop:
	VNNI_XBLOCK
	VNNIP_Q8CODES
	VNNIP_BLOCK($272, q80ploop)
	VNNIP_END(q80prow)

// func dotQ4_0VNNIP(w, x *byte, nb, groups int, out *float32)
TEXT ·dotQ4_0VNNIP(SB), NOSPLIT, $0-40
	VNNIP_SETUP($0x08080808)

q40prow:
	VNNIP_ROWSTART

q40ploop:
	VNNI_XBLOCK
	VNNIP_NIBBLES(16)
	PREFETCHT0 1152(SI)
	PREFETCHT0 1216(SI)
	VNNIP_BLOCK($144, q40ploop)
	VNNIP_END(q40prow)

// func dotQ5_0VNNIP(w, x *byte, nb, groups int, out *float32)
TEXT ·dotQ5_0VNNIP(SB), NOSPLIT, $0-40
	VNNIP_SETUP($0x10101010)

q50prow:
	VNNIP_ROWSTART

q50ploop:
	VNNI_XBLOCK
	VNNIP_NIBBLES(48)
	KMOVQ      16(SI), K1
	KMOVQ      24(SI), K2
	KMOVQ      32(SI), K3
	KMOVQ      40(SI), K4
	VPADDB     Z13, Z6, K1, Z6
	VPADDB     Z13, Z7, K2, Z7
	VPADDB     Z13, Z18, K3, Z18
	VPADDB     Z13, Z19, K4, Z19
	PREFETCHT0 1408(SI)
	PREFETCHT0 1472(SI)
	PREFETCHT0 1536(SI)
	VNNIP_BLOCK($176, q50ploop)
	VNNIP_END(q50prow)

// vnniLane: VPERMPS indices sending float r (row r's scale) to all of lane
// r (rows 0-3), then float 4+r to lane r (rows 4-7).
DATA vnniLane<>+0(SB)/8, $0x0000000000000000
DATA vnniLane<>+8(SB)/8, $0x0000000000000000
DATA vnniLane<>+16(SB)/8, $0x0000000100000001
DATA vnniLane<>+24(SB)/8, $0x0000000100000001
DATA vnniLane<>+32(SB)/8, $0x0000000200000002
DATA vnniLane<>+40(SB)/8, $0x0000000200000002
DATA vnniLane<>+48(SB)/8, $0x0000000300000003
DATA vnniLane<>+56(SB)/8, $0x0000000300000003
DATA vnniLane<>+64(SB)/8, $0x0000000400000004
DATA vnniLane<>+72(SB)/8, $0x0000000400000004
DATA vnniLane<>+80(SB)/8, $0x0000000500000005
DATA vnniLane<>+88(SB)/8, $0x0000000500000005
DATA vnniLane<>+96(SB)/8, $0x0000000600000006
DATA vnniLane<>+104(SB)/8, $0x0000000600000006
DATA vnniLane<>+112(SB)/8, $0x0000000700000007
DATA vnniLane<>+120(SB)/8, $0x0000000700000007
GLOBL vnniLane<>(SB), RODATA|NOPTR, $128

// func dotQ8_0VNNIPX(w, xp *byte, nb, groups int, out *float32)
// dotQ8_0VNNIP against the activation row prepared once per product
// (prepQ8_0X: per block 64 bytes, the 32 codes, the four int32 offset terms
// that VNNI_XBLOCK computes, −128·Σx per 4-byte group of either half, and
// d_x as a float32). VNNI_XBLOCK's seven vector operations per block and
// group become four broadcast loads, and VNNI_DOT's copies of Z3 two more:
// the accumulators are loaded with the offset terms. The integer sums and
// the float operations are dotQ8_0VNNIP's, so the results equal it bit for
// bit.
TEXT ·dotQ8_0VNNIPX(SB), NOSPLIT, $0-40
	MOVQ      w+0(FP), SI
	MOVQ      out+32(FP), AX
	MOVQ      groups+24(FP), R13
	VMOVDQU32 vnniLane<>(SB), Z12
	VMOVDQU32 vnniLane<>+64(SB), Z22

q80xrow:
	MOVQ   xp+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z17, Z17, Z17

q80xloop:
	VBROADCASTI32X4 (DI), Z1
	VBROADCASTI32X4 16(DI), Z2
	VBROADCASTI32X4 32(DI), Z8
	VBROADCASTI32X4 32(DI), Z20
	VBROADCASTSS    48(DI), Y10
	VNNIP_Q8CODES
	VPDPBUSD        Z1, Z6, Z8
	VPDPBUSD        Z2, Z7, Z8
	VPDPBUSD        Z1, Z18, Z20
	VPDPBUSD        Z2, Z19, Z20
	VNNIP_SCALE
	ADDQ            $272, SI
	ADDQ            $64, DI
	DECQ            CX
	JNZ             q80xloop
	VNNIP_END(q80xrow)

// func prepQ8_0XVNNI(x, dst *byte, nb int)
// prepQ8_0X's layout, a block at a time: the 32 codes copied; VPDPBUSD of
// the codes (signed) by ones (unsigned) gives the eight sums of four
// codes, whose halves added give Σx[4j:4j+4] + Σx[16+4j:16+4j+4], times
// −128 (a shift and a negation: the same int32 bits as the Go version's
// product); d_x by VCVTPH2PS (exact), the three lanes above it zero.
TEXT ·prepQ8_0XVNNI(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         dst+8(FP), DI
	MOVQ         nb+16(FP), CX
	MOVL         $0x01010101, AX
	VPBROADCASTD AX, Y15
	VPXOR        X14, X14, X14

prepxloop:
	VMOVDQU      2(SI), Y0
	VPXOR        Y1, Y1, Y1
	VPDPBUSD     Y0, Y15, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDD       X2, X1, X1
	VPSLLD       $7, X1, X1
	VPSUBD       X1, X14, X1
	MOVWLZX      (SI), AX
	VMOVD        AX, X3
	VCVTPH2PS    X3, X3
	VMOVDQU      Y0, (DI)
	VMOVDQU      X1, 32(DI)
	VMOVDQU      X3, 48(DI)
	ADDQ         $34, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          prepxloop
	VZEROUPPER
	RET
