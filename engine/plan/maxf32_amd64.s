#include "textflag.h"

// func maxF32x32(s *float32, n int) (m float32, nan bool)
TEXT ·maxF32x32(SB), NOSPLIT, $0-21
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0xff800000, AX // −Inf
	MOVL         AX, X0
	VBROADCASTSS X0, Y0
	VMOVAPS      Y0, Y1
	VMOVAPS      Y0, Y2
	VMOVAPS      Y0, Y3
	VXORPS       Y4, Y4, Y4      // NaN lanes seen
	XORQ         AX, AX

loop:
	CMPQ    AX, CX
	JGE     done
	VMOVUPS (SI)(AX*4), Y5
	VMOVUPS 32(SI)(AX*4), Y6
	VMOVUPS 64(SI)(AX*4), Y7
	VMOVUPS 96(SI)(AX*4), Y8
	VMAXPS  Y5, Y0, Y0
	VMAXPS  Y6, Y1, Y1
	VMAXPS  Y7, Y2, Y2
	VMAXPS  Y8, Y3, Y3
	VCMPPS  $3, Y6, Y5, Y9  // unordered: either is NaN
	VCMPPS  $3, Y8, Y7, Y10
	VORPS   Y9, Y4, Y4
	VORPS   Y10, Y4, Y4
	ADDQ    $32, AX
	JMP     loop

done:
	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, m+16(FP)
	VPTEST       Y4, Y4
	SETNE        nan+20(FP)
	VZEROUPPER
	RET
