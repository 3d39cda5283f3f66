#include "textflag.h"

// AVX2/FMA kernels. Callers guarantee lengths (see dot_amd64.go).

// func dotF32AVX2(a, b *float32, n int) float32
// n is a multiple of 32.
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ   f32done

f32loop:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         f32loop

f32done:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func dotF16AVX2(w *uint16, x *float32, n int) float32
// n is a multiple of 32.
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ   f16done

f16loop:
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   32(SI), Y6
	VCVTPH2PS   48(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $64, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         f16loop

f16done:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func dotQ8_0AVX2(w, x *byte, nb int) float32
// Signed bytes times signed bytes: VPMADDUBSW wants one unsigned operand,
// so multiply |w| by x·sign(w).
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x00010001, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	TESTQ CX, CX
	JZ    q80done

q80loop:
	VMOVDQU      2(SI), Y1
	VMOVDQU      2(DI), Y2
	VPSIGNB      Y1, Y1, Y3
	VPSIGNB      Y1, Y2, Y4
	VPMADDUBSW   Y4, Y3, Y5
	VPMADDWD     Y15, Y5, Y5
	VCVTDQ2PS    Y5, Y5
	MOVWLZX      (SI), AX
	MOVWLZX      (DI), BX
	VMOVD        AX, X6
	VMOVD        BX, X7
	VCVTPH2PS    X6, X6
	VCVTPH2PS    X7, X7
	VMULSS       X7, X6, X6
	VBROADCASTSS X6, Y6
	VFMADD231PS  Y6, Y5, Y0
	ADDQ         $34, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q80loop

q80done:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func dotQ4_0AVX2(w, x *byte, nb int) float32
// Nibbles are widened to 32 bytes (low nibbles first), recentred by -8,
// then multiplied as in dotQ8_0AVX2.
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x00010001, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x08080808, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	TESTQ CX, CX
	JZ    q40done

q40loop:
	VMOVDQU      2(SI), X1
	VPSRLW       $4, X1, X2
	VINSERTI128  $1, X2, Y1, Y1
	VPAND        Y14, Y1, Y1
	VPSUBB       Y13, Y1, Y1
	VMOVDQU      2(DI), Y2
	VPSIGNB      Y1, Y1, Y3
	VPSIGNB      Y1, Y2, Y4
	VPMADDUBSW   Y4, Y3, Y5
	VPMADDWD     Y15, Y5, Y5
	VCVTDQ2PS    Y5, Y5
	MOVWLZX      (SI), AX
	MOVWLZX      (DI), BX
	VMOVD        AX, X6
	VMOVD        BX, X7
	VCVTPH2PS    X6, X6
	VCVTPH2PS    X7, X7
	VMULSS       X7, X6, X6
	VBROADCASTSS X6, Y6
	VFMADD231PS  Y6, Y5, Y0
	ADDQ         $18, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q40loop

q40done:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func dotQ4KAVX2(w, x *byte, nb int, sc *int16, d *float32) float32
// Returns Σ_b d[b]·Σ_sb sc[8b+sb]·Σ_l q·y over the nibble part of Q4_K
// blocks against Q8_K blocks; the caller decodes the scales and handles
// the mins with Q8_K's block sums.
TEXT ·dotQ4KAVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ sc+24(FP), R10
	MOVQ d+32(FP), R11
	VXORPS Y0, Y0, Y0
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	TESTQ CX, CX
	JZ    q4kdone

q4kloop:
	VPXOR Y8, Y8, Y8

#define Q4K_STEP(qoff, yoff, soff) \
	VMOVDQU      qoff(SI), Y1 \
	VPSRLW       $4, Y1, Y2 \
	VPAND        Y14, Y1, Y1 \
	VPAND        Y14, Y2, Y2 \
	VPMADDUBSW   yoff(DI), Y1, Y3 \
	VPMADDUBSW   (yoff+32)(DI), Y2, Y4 \
	VPBROADCASTW soff(R10), Y5 \
	VPBROADCASTW (soff+2)(R10), Y6 \
	VPMADDWD     Y5, Y3, Y3 \
	VPMADDWD     Y6, Y4, Y4 \
	VPADDD       Y3, Y8, Y8 \
	VPADDD       Y4, Y8, Y8

	Q4K_STEP(16, 4, 0)
	Q4K_STEP(48, 68, 4)
	Q4K_STEP(80, 132, 8)
	Q4K_STEP(112, 196, 12)

	VCVTDQ2PS    Y8, Y8
	VBROADCASTSS (R11), Y9
	VFMADD231PS  Y9, Y8, Y0
	ADDQ         $144, SI
	ADDQ         $292, DI
	ADDQ         $16, R10
	ADDQ         $4, R11
	DECQ         CX
	JNZ          q4kloop

q4kdone:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+40(FP)
	RET
