#include "textflag.h"

// func maxScaledAVX2(s *float32, n int, scale float32) float32
// The largest of scale·s[i] for i < n (a multiple of 8, at least 8), by
// the portable maxScaled's rule: start from scale·s[0] and take a value
// only when it compares greater (NaNs are skipped unless s[0] is one).
TEXT ·maxScaledAVX2(SB), NOSPLIT, $0-28
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y15
	VBROADCASTSS (SI), Y0
	VMULPS       Y15, Y0, Y0        // acc = scale·s[0] in every lane
	SHRQ         $3, CX

maxloop:
	VMULPS       (SI), Y15, Y1
	VMAXPS       Y0, Y1, Y0         // acc = v > acc ? v : acc
	ADDQ         $32, SI
	DECQ         CX
	JNZ          maxloop

	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X0, X1, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X0, X1, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X0, X1, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func scaleAVX2(s *float32, n int, c float32)
// s[i] *= c for i < n (a multiple of 8).
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS c+16(FP), Y15
	SHRQ         $3, CX
	JZ           scaledone

scaleloop:
	VMULPS       (SI), Y15, Y0
	VMOVUPS      Y0, (SI)
	ADDQ         $32, SI
	DECQ         CX
	JNZ          scaleloop

scaledone:
	VZEROUPPER
	RET
