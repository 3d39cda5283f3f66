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

// func axpyF16AVX2(o *float32, v *uint16, n int, p float32)
// o[i] += p*float32(v[i]) for i < n (v holds IEEE halves); n is a multiple of 8.
TEXT ·axpyF16AVX2(SB), NOSPLIT, $0-28
	MOVQ         o+0(FP), DI
	MOVQ         v+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS p+24(FP), Y0
	SHRQ         $3, CX
	JZ           f16done

f16loop:
	VCVTPH2PS   (SI), Y1
	VFMADD213PS (DI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $16, SI
	ADDQ        $32, DI
	DECQ        CX
	JNZ         f16loop

f16done:
	VZEROUPPER
	RET
