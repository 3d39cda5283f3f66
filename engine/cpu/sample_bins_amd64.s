#include "textflag.h"

DATA sbnc<>+0(SB)/8, $0x408ff80000000000 // 1023.0
DATA sbnc<>+8(SB)/4, $0xff800000         // −Inf
DATA sbnc<>+12(SB)/4, $1024              // sampleBins: the −Inf logits' bin
GLOBL sbnc<>(SB), RODATA|NOPTR, $16

// func sampleBinsAVX2(bins *uint16, l *float32, n int, hi, scale float64)
// bins[i] = binScale{hi, scale}.bin(l[i]) for i < n (a multiple of 4),
// four lanes at a time: min(trunc((hi − float64(v))·scale), 1023), or
// 1024 for −Inf. No l[i] is NaN or above hi (the caller's), so the
// product is a non-negative number and min-then-truncate is
// truncate-then-min.
TEXT ·sampleBinsAVX2(SB), NOSPLIT, $0-40
	MOVQ         bins+0(FP), DI
	MOVQ         l+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD hi+24(FP), Y15
	VBROADCASTSD scale+32(FP), Y14
	VBROADCASTSD sbnc<>+0(SB), Y13
	VBROADCASTSS sbnc<>+8(SB), X12
	VPBROADCASTD sbnc<>+12(SB), X11
	SHRQ         $2, CX
	JZ           sbdone

sbloop:
	VMOVUPS     (SI), X0
	VCVTPS2PD   X0, Y1
	VSUBPD      Y1, Y15, Y2         // hi − v
	VMULPD      Y14, Y2, Y2         // · scale
	VMINPD      Y13, Y2, Y2         // min(·, 1023)
	VCVTTPD2DQY Y2, X2              // truncated
	VCMPPS      $0, X12, X0, X3     // v == −Inf
	VBLENDVPS   X3, X11, X2, X2     // −Inf → 1024
	VPACKUSDW   X2, X2, X2
	MOVQ        X2, (DI)
	ADDQ        $16, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         sbloop

sbdone:
	VZEROUPPER
	RET
