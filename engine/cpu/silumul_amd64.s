#include "textflag.h"

// HORNER is one step of exp32's polynomial, unfused: p = (p + c)·r with c
// the float32 at ·expc+off.
#define HORNER(off) \
	VBROADCASTSS ·expc+off(SB), Y3; \
	VADDPS       Y3, Y4, Y4; \
	VMULPS       Y1, Y4, Y4

// func siluMulAVX2(o, a, b *float32, n int) int
// See silumul_amd64.go. exp32's constants are ·expc (exp_amd64.s).
TEXT ·siluMulAVX2(SB), NOSPLIT, $0-40
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX

	MOVL         $0x80000000, BX
	VMOVD        BX, X15
	VBROADCASTSS X15, Y15          // sign bit
	MOVL         $0x42ae0000, BX   // 87
	VMOVD        BX, X14
	VBROADCASTSS X14, Y14
	MOVL         $0xc2ae0000, BX   // -87
	VMOVD        BX, X13
	VBROADCASTSS X13, Y13
	VBROADCASTSS ·expc+0(SB), Y12  // log2e
	VBROADCASTSS ·expc+4(SB), Y11  // magic
	VBROADCASTSS ·expc+40(SB), Y10 // 1

loop:
	CMPQ AX, CX
	JAE  done
	VMOVUPS (SI)(AX*4), Y0      // v
	VXORPS  Y15, Y0, Y1         // x = -v
	VCMPPS  $0x1d, Y13, Y1, Y2  // x >= -87
	VCMPPS  $0x12, Y14, Y1, Y3  // x <= 87
	VANDPS  Y3, Y2, Y2
	VMOVMSKPS Y2, BX
	CMPL    BX, $0xff
	JNE     done

	// n = (x·log2e + magic) - magic
	VMULPS Y12, Y1, Y2
	VADDPS Y11, Y2, Y2
	VSUBPS Y11, Y2, Y2
	// r = x - n·ln2hi - n·ln2lo
	VBROADCASTSS ·expc+8(SB), Y3
	VMULPS       Y3, Y2, Y3
	VSUBPS       Y3, Y1, Y1
	VBROADCASTSS ·expc+12(SB), Y3
	VMULPS       Y3, Y2, Y3
	VSUBPS       Y3, Y1, Y1
	// p = ((((((1/7!·r + 1/6!)·r + 1/5!)·r + 1/4!)·r + 1/3!)·r + 1/2)·r + 1)·r + 1
	VBROADCASTSS ·expc+16(SB), Y4
	VMULPS       Y1, Y4, Y4
	HORNER(20)
	HORNER(24)
	HORNER(28)
	HORNER(32)
	HORNER(36)
	VADDPS       Y10, Y4, Y4
	VMULPS       Y1, Y4, Y4
	VADDPS       Y10, Y4, Y4
	// e = p·2^n
	VCVTTPS2DQ   Y2, Y2
	VPBROADCASTD ·expc+48(SB), Y3
	VPADDD       Y3, Y2, Y2
	VPSLLD       $23, Y2, Y2
	VMULPS       Y2, Y4, Y4
	// o = v/(1 + e)·b
	VADDPS  Y10, Y4, Y4
	VDIVPS  Y4, Y0, Y0
	VMOVUPS (DX)(AX*4), Y5
	VMULPS  Y5, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     loop

done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET
