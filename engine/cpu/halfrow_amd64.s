#include "textflag.h"

// func halfRowF16C(h *uint16, x *float32, n int) int
// See halfrow_amd64.go.
TEXT ·halfRowF16C(SB), NOSPLIT, $0-32
	MOVQ h+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

loop:
	CMPQ      AX, CX
	JAE       done
	VMOVUPS   (SI)(AX*4), Y0
	VCMPPS    $3, Y0, Y0, Y1 // unordered: NaN
	VMOVMSKPS Y1, BX
	TESTL     BX, BX
	JNZ       done
	VCVTPS2PH $0, Y0, X0
	VMOVDQU   X0, (DI)(AX*2)
	ADDQ      $8, AX
	JMP       loop

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
