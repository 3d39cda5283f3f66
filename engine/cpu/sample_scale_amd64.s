#include "textflag.h"

DATA sscc<>+0(SB)/4, $0xff800000 // -Inf
DATA sscc<>+4(SB)/4, $0x7f800000 // +Inf
GLOBL sscc<>(SB), RODATA|NOPTR, $8

// func sampleScaleAVX2(l, src *float32, n int, temp float32, ext *[2]float32)
// l[i] = src[i]/temp with NaN as −Inf for i < n (a multiple of 8), eight
// lanes at a time; ext[0] becomes the largest of itself and every l[i],
// ext[1] the least of itself and every finite-below l[i] (−Inf left out).
// temp is finite and positive (the caller's), so no lane is NaN after the
// division, and VMAXPS/VMINPS are max/min up to the sign of a zero.
TEXT ·sampleScaleAVX2(SB), NOSPLIT, $0-40
	MOVQ         l+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS temp+24(FP), Y15
	MOVQ         ext+32(FP), R8
	VBROADCASTSS 0(R8), Y14            // running max
	VBROADCASTSS 4(R8), Y13            // running min
	VBROADCASTSS sscc<>+0(SB), Y12     // −Inf
	VBROADCASTSS sscc<>+4(SB), Y11     // +Inf
	SHRQ         $3, CX
	JZ           ssdone

ssloop:
	VMOVUPS   (SI), Y0
	VCMPPS    $3, Y0, Y0, Y1           // unordered: the NaN lanes
	VBLENDVPS Y1, Y12, Y0, Y0          // NaN → −Inf
	VDIVPS    Y15, Y0, Y0              // v / temp (IEEE, as Go's)
	VMOVUPS   Y0, (DI)
	VMAXPS    Y14, Y0, Y14
	VCMPPS    $0, Y12, Y0, Y1          // v == −Inf
	VBLENDVPS Y1, Y11, Y0, Y2          // −Inf → +Inf: left out of the min
	VMINPS    Y13, Y2, Y13
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       ssloop

ssdone:
	VEXTRACTF128 $1, Y14, X0
	VMAXPS       X0, X14, X14
	VPERMILPS    $0x4e, X14, X0
	VMAXPS       X0, X14, X14
	VPERMILPS    $0xb1, X14, X0
	VMAXPS       X0, X14, X14
	VMOVSS       X14, 0(R8)
	VEXTRACTF128 $1, Y13, X0
	VMINPS       X0, X13, X13
	VPERMILPS    $0x4e, X13, X0
	VMINPS       X0, X13, X13
	VPERMILPS    $0xb1, X13, X0
	VMINPS       X0, X13, X13
	VMOVSS       X13, 4(R8)
	VZEROUPPER
	RET
