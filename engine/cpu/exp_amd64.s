#include "textflag.h"
#include "exp_amd64.h"

// Constants of exp32 (fastmath.go), as float32 bits: log2(e), the 1.5·2^23
// rounding constant, ln2 split in two, the Taylor coefficients 1/7!..1, the
// input clamp ln(FLT_MIN) and the exponent bias. Global: EXP8
// (exp_amd64.h) reads them here and in gelu_amd64.s.
DATA ·expc+0(SB)/4, $0x3fb8aa3b
DATA ·expc+4(SB)/4, $0x4b400000
DATA ·expc+8(SB)/4, $0x3f318000
DATA ·expc+12(SB)/4, $0xb95e8083
DATA ·expc+16(SB)/4, $0x39500d01
DATA ·expc+20(SB)/4, $0x3ab60b61
DATA ·expc+24(SB)/4, $0x3c088889
DATA ·expc+28(SB)/4, $0x3d2aaaab
DATA ·expc+32(SB)/4, $0x3e2aaaab
DATA ·expc+36(SB)/4, $0x3f000000
DATA ·expc+40(SB)/4, $0x3f800000
DATA ·expc+44(SB)/4, $0xc2aeac4f
DATA ·expc+48(SB)/4, $127
GLOBL ·expc(SB), RODATA|NOPTR, $52

// func expScaledAVX2(s *float32, n int, scale, sub float32) float32
// s[i] = exp(s[i]*scale - sub) for i < n (a multiple of 8); returns the sum.
// The arguments must not exceed 88.7 (softmax passes values <= 0).
TEXT ·expScaledAVX2(SB), NOSPLIT, $0-28
	MOVQ         s+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y14
	VBROADCASTSS sub+20(FP), Y15
	VBROADCASTSS ·expc+0(SB), Y10  // log2e
	VBROADCASTSS ·expc+4(SB), Y11  // magic
	VBROADCASTSS ·expc+8(SB), Y12  // ln2hi
	VBROADCASTSS ·expc+12(SB), Y13 // ln2lo
	VXORPS       Y9, Y9, Y9         // sum
	SHRQ         $3, CX
	JZ           expdone

exploop:
	VMOVUPS      (DI), Y0
	VMULPS       Y14, Y0, Y0
	VSUBPS       Y15, Y0, Y0
	VBROADCASTSS ·expc+44(SB), Y1
	VMAXPS       Y1, Y0, Y0         // x = max(x, ln(FLT_MIN))
	EXP8(Y0, Y1, Y3, Y4, Y10, Y11, Y12, Y13)
	VMOVUPS      Y3, (DI)
	VADDPS       Y3, Y9, Y9
	ADDQ         $32, DI
	DECQ         CX
	JNZ          exploop

expdone:
	VEXTRACTF128 $1, Y9, X1
	VADDPS       X1, X9, X9
	VHADDPS      X9, X9, X9
	VHADDPS      X9, X9, X9
	VZEROUPPER
	MOVSS        X9, ret+24(FP)
	RET
