#include "textflag.h"

// AVX-512 VNNI row-run kernels for the 32-element block types against
// Q8_0 activations. Four weight rows are computed at once, one row per
// 128-bit lane: lane r holds row r's 16 code bytes of the current block,
// and the activation half-blocks are broadcast to all four lanes, so the
// activation loads, the offset correction and the activation scale are
// shared by four rows. VPDPBUSD multiplies the unsigned codes by the
// signed activations straight into int32; the code offset (8 for Q4_0,
// 16 for Q5_0, 128 for Q8_0's biased codes) is taken out exactly as
// offset·Σx, computed once per block for all rows (VPDPBUSD of the
// constant offset bytes by x). Each lane's four int32 partial sums are
// scaled by its row's d_w·d_x (VPERMPS spreads the four row scales to
// their lanes) and accumulated in float.
//
// func dotQ4_0VNNI(w, x *byte, nb, rows4, rb int, out *float32)
// rows4 groups of four rows, rb bytes apart; out gets 4·rows4 results.

// VNNI_SCALE: Z9 = per-lane d_w(row r)·d_x for the four rows at
// SI, SI+rb, SI+2rb, R11 (= SI+3rb), times Z8 (converted int sums) into Z0.
#define VNNI_SCALE \
	MOVWLZX      (SI), AX \
	VMOVD        AX, X9 \
	VPINSRW      $1, (SI)(R14*1), X9, X9 \
	VPINSRW      $2, (SI)(R14*2), X9, X9 \
	VPINSRW      $3, (R11), X9, X9 \
	VCVTPH2PS    X9, X9 \
	VPBROADCASTW (DI), X10 \
	VCVTPH2PS    X10, X10 \
	VMULPS       X10, X9, X9 \
	VPERMPS      Z9, Z12, Z9 \
	VCVTDQ2PS    Z8, Z8 \
	VFMADD231PS  Z9, Z8, Z0

// VNNI_STORE: reduce Z0's four lanes to out[4·R13 : 4·R13+4].
#define VNNI_STORE \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VHADDPS       Y1, Y0, Y2 \
	VHADDPS       Y2, Y2, Y2 \
	MOVQ          out+40(FP), AX \
	MOVQ          R13, BX \
	SHLQ          $4, BX \
	ADDQ          BX, AX \
	MOVSS         X2, (AX) \
	VEXTRACTPS    $1, X2, 8(AX) \
	VEXTRACTF128  $1, Y2, X3 \
	MOVSS         X3, 4(AX) \
	VEXTRACTPS    $1, X3, 12(AX)

// VNNI_LOAD4(off, xdst, dst): row r's 16 bytes at off(row r) into lane r
// of dst (xdst is its low 128 bits).
#define VNNI_LOAD4(off, xdst, dst) \
	VMOVDQU      off(SI), xdst \
	VINSERTI32X4 $1, off(SI)(R14*1), dst, dst \
	VINSERTI32X4 $2, off(SI)(R14*2), dst, dst \
	VINSERTI32X4 $3, off(R11), dst, dst

// VNNI_SETUP(offbyte): Z14 = 0x0F bytes, Z13 = offset bytes, Z12 = lane
// index for VPERMPS.
#define VNNI_SETUP(offbyte) \
	MOVQ         w+0(FP), R10 \
	MOVQ         rb+32(FP), R14 \
	LEAQ         (R14)(R14*2), R12 \
	XORQ         R13, R13 \
	MOVL         $0x0F0F0F0F, AX \
	VPBROADCASTD AX, Z14 \
	MOVL         offbyte, AX \
	VPBROADCASTD AX, Z13 \
	VMOVDQU32    vnniLane<>(SB), Z12

// VNNI_ROWSTART: SI = row 0 of this group, R11 = row 3, DI = x, CX = nb,
// R9 = the prefetch pointer, two groups ahead (VNNI_PREFETCH).
#define VNNI_ROWSTART \
	MOVQ   R10, SI \
	LEAQ   (R10)(R12*1), R11 \
	MOVQ   x+8(FP), DI \
	MOVQ   nb+16(FP), CX \
	LEAQ   (R10)(R14*8), R9 \
	VXORPS Z0, Z0, Z0

// VNNI_PREFETCH(step): the four rows are read as four interleaved streams,
// which the hardware prefetchers follow poorly (measured: the q8_0 kernel
// streamed half the AVX2 kernel's GB/s from memory without this), so the
// group two ahead is prefetched linearly, step = 4 blocks per iteration.
#define VNNI_PREFETCH(step) \
	PREFETCHT0 (R9) \
	PREFETCHT0 64(R9) \
	ADDQ       step, R9

// VNNI_XBLOCK: broadcast the activation halves (Z1 = x[0:16], Z2 =
// x[16:32]) and Z3 = offset·Σx per 4-byte group.
#define VNNI_XBLOCK \
	VBROADCASTI32X4 2(DI), Z1 \
	VBROADCASTI32X4 18(DI), Z2 \
	VPXORD          Z3, Z3, Z3 \
	VPDPBUSD        Z1, Z13, Z3 \
	VPDPBUSD        Z2, Z13, Z3

// VNNI_DOT: Z8 = Σ code·x − offset·Σx from the codes in Z6 (x[0:16]) and
// Z7 (x[16:32]).
#define VNNI_DOT \
	VPXORD   Z8, Z8, Z8 \
	VPDPBUSD Z1, Z6, Z8 \
	VPDPBUSD Z2, Z7, Z8 \
	VPSUBD   Z3, Z8, Z8

TEXT ·dotQ4_0VNNI(SB), NOSPLIT, $0-48
	VNNI_SETUP($0x08080808)

q40vrow:
	VNNI_ROWSTART

q40vloop:
	VNNI_XBLOCK
	VNNI_LOAD4(2, X6, Z6)
	VPSRLW $4, Z6, Z7
	VPANDD Z14, Z6, Z6
	VPANDD Z14, Z7, Z7
	VNNI_DOT
	VNNI_SCALE
	VNNI_PREFETCH($72)
	ADDQ   $18, SI
	ADDQ   $18, R11
	ADDQ   $34, DI
	DECQ   CX
	JNZ    q40vloop

	VNNI_STORE
	LEAQ (R10)(R14*4), R10
	INCQ R13
	CMPQ R13, rows4+24(FP)
	JLT  q40vrow
	VZEROUPPER
	RET

// func dotQ5_0VNNI(w, x *byte, nb, rows4, rb int, out *float32)
// As dotQ4_0VNNI; the four rows' 32-bit qh words are gathered into X11 and
// rearranged (vnniQh) into two 64-bit byte masks, one bit per code byte
// (low halves of qh for the low nibbles, high halves for the high
// nibbles), which add 16 to the selected codes with a masked VPADDB.
TEXT ·dotQ5_0VNNI(SB), NOSPLIT, $0-48
	VNNI_SETUP($0x10101010)
	VMOVDQU vnniQh<>(SB), X15

q50vrow:
	VNNI_ROWSTART

q50vloop:
	VNNI_XBLOCK
	VNNI_LOAD4(6, X6, Z6)
	VPSRLW  $4, Z6, Z7
	VPANDD  Z14, Z6, Z6
	VPANDD  Z14, Z7, Z7
	VMOVD   2(SI), X11
	VPINSRD $1, 2(SI)(R14*1), X11, X11
	VPINSRD $2, 2(SI)(R14*2), X11, X11
	VPINSRD $3, 2(R11), X11, X11
	VPSHUFB X15, X11, X11
	VMOVQ   X11, AX
	KMOVQ   AX, K1
	VPEXTRQ $1, X11, AX
	KMOVQ   AX, K2
	VPADDB  Z13, Z6, K1, Z6
	VPADDB  Z13, Z7, K2, Z7
	VNNI_DOT
	VNNI_SCALE
	VNNI_PREFETCH($88)
	ADDQ    $22, SI
	ADDQ    $22, R11
	ADDQ    $34, DI
	DECQ    CX
	JNZ     q50vloop

	VNNI_STORE
	LEAQ (R10)(R14*4), R10
	INCQ R13
	CMPQ R13, rows4+24(FP)
	JLT  q50vrow
	VZEROUPPER
	RET

// func dotQ8_0VNNI(w, x *byte, nb, rows4, rb int, out *float32)
// Signed codes are biased to unsigned (XOR 0x80 adds 128) for VPDPBUSD;
// the offset is then 128·Σx.
TEXT ·dotQ8_0VNNI(SB), NOSPLIT, $0-48
	VNNI_SETUP($0x80808080)

q80vrow:
	VNNI_ROWSTART

q80vloop:
	VNNI_XBLOCK
	VNNI_LOAD4(2, X6, Z6)
	VNNI_LOAD4(18, X7, Z7)
	VPXORD       Z13, Z6, Z6
	VPXORD       Z13, Z7, Z7
	VNNI_DOT
	VNNI_SCALE
	VNNI_PREFETCH($136)
	ADDQ         $34, SI
	ADDQ         $34, R11
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q80vloop

	VNNI_STORE
	LEAQ (R10)(R14*4), R10
	INCQ R13
	CMPQ R13, rows4+24(FP)
	JLT  q80vrow
	VZEROUPPER
	RET

// vnniLane: VPERMPS index sending float r (row r's scale) to all of lane r.
DATA vnniLane<>+0(SB)/8, $0x0000000000000000
DATA vnniLane<>+8(SB)/8, $0x0000000000000000
DATA vnniLane<>+16(SB)/8, $0x0000000100000001
DATA vnniLane<>+24(SB)/8, $0x0000000100000001
DATA vnniLane<>+32(SB)/8, $0x0000000200000002
DATA vnniLane<>+40(SB)/8, $0x0000000200000002
DATA vnniLane<>+48(SB)/8, $0x0000000300000003
DATA vnniLane<>+56(SB)/8, $0x0000000300000003
GLOBL vnniLane<>(SB), RODATA|NOPTR, $64

// vnniQh: from four qh words [q0 q1 q2 q3], the low 16 bits of each
// (bytes 0,1 of each word) into the low qword, the high 16 bits into the
// high qword, row r at bits 16r.
DATA vnniQh<>+0(SB)/8, $0x0d0c090805040100
DATA vnniQh<>+8(SB)/8, $0x0f0e0b0a07060302
GLOBL vnniQh<>(SB), RODATA|NOPTR, $16
