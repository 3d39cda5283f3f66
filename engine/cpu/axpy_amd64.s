#include "textflag.h"

// func axpyF32AVX2(o, v *float32, n int, p float32)
// o[i] += p*v[i] for i < n; n is a multiple of 8.
TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-28
	MOVQ         o+0(FP), DI
	MOVQ         v+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS p+24(FP), Y0
	SHRQ         $3, CX
	JZ           f32done

f32loop:
	VMOVUPS     (SI), Y1
	VFMADD213PS (DI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNZ         f32loop

f32done:
	VZEROUPPER
	RET
