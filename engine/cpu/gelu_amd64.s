#include "textflag.h"
#include "exp_amd64.h"

// GELU's erf coefficients (elementwise.go's geluErf, Abramowitz & Stegun
// 7.1.26) as float32 bits: 1/√2, |x| mask, p, a5..a1, 0.5. The
// exponential's constants are exp_amd64.s's ·expc.
DATA geluc<>+0(SB)/4, $0x3f3504f3  // 1/√2
DATA geluc<>+4(SB)/4, $0x7fffffff  // |x|
DATA geluc<>+8(SB)/4, $0x3ea7ba05  // p = 0.3275911
DATA geluc<>+12(SB)/4, $0x3f87dc22 // a5 = 1.061405429
DATA geluc<>+16(SB)/4, $0xbfba00e3 // a4 = -1.453152027
DATA geluc<>+20(SB)/4, $0x3fb5f0e3 // a3 = 1.421413741
DATA geluc<>+24(SB)/4, $0xbe91a98e // a2 = -0.284496736
DATA geluc<>+28(SB)/4, $0x3e827906 // a1 = 0.254829592
DATA geluc<>+32(SB)/4, $0x3f000000 // 0.5
GLOBL geluc<>(SB), RODATA|NOPTR, $36

// func geluErfAVX2(o, a *float32, n int)
// o[i] = geluErf(a[i]) for i < n (a multiple of 8), eight at a time: the
// same formula as the portable loop, with fused multiply-adds.
TEXT ·geluErfAVX2(SB), NOSPLIT, $0-24
	MOVQ         o+0(FP), DI
	MOVQ         a+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS geluc<>+0(SB), Y15  // 1/√2
	VBROADCASTSS geluc<>+4(SB), Y14  // |x| mask
	VBROADCASTSS geluc<>+8(SB), Y13  // p
	VBROADCASTSS ·expc+40(SB), Y12   // 1
	VBROADCASTSS ·expc+44(SB), Y11   // ln(FLT_MIN)
	VBROADCASTSS ·expc+0(SB), Y10    // log2e
	VBROADCASTSS ·expc+4(SB), Y9     // magic
	VBROADCASTSS ·expc+8(SB), Y8     // ln2hi
	VBROADCASTSS ·expc+12(SB), Y7    // ln2lo
	SHRQ         $3, CX
	JZ           geludone

geluloop:
	VMOVUPS      (SI), Y0           // x
	VMULPS       Y15, Y0, Y1        // z = x/√2
	VANDPS       Y14, Y1, Y2        // az = |z|
	VMOVAPS      Y12, Y3
	VFMADD231PS  Y13, Y2, Y3        // 1 + p·az
	VDIVPS       Y3, Y12, Y3        // t = 1/(1 + p·az)
	VBROADCASTSS geluc<>+12(SB), Y4 // a5
	VBROADCASTSS geluc<>+16(SB), Y5
	VFMADD213PS  Y5, Y3, Y4         // ·t + a4
	VBROADCASTSS geluc<>+20(SB), Y5
	VFMADD213PS  Y5, Y3, Y4         // ·t + a3
	VBROADCASTSS geluc<>+24(SB), Y5
	VFMADD213PS  Y5, Y3, Y4         // ·t + a2
	VBROADCASTSS geluc<>+28(SB), Y5
	VFMADD213PS  Y5, Y3, Y4         // ·t + a1
	VMULPS       Y3, Y4, Y4         // poly = (…)·t
	VXORPS       Y5, Y5, Y5
	VFNMADD231PS Y2, Y2, Y5         // w = -az²
	VMAXPS       Y11, Y5, Y5        // w = max(w, ln(FLT_MIN))

	EXP8(Y5, Y1, Y6, Y2, Y10, Y9, Y8, Y7) // e = exp(w)

	VMULPS       Y6, Y4, Y4         // c = poly·e = 1 - erf(|z|)
	VADDPS       Y12, Y12, Y5
	VSUBPS       Y4, Y5, Y5         // 2 - c = 1 + erf(|z|)
	VBLENDVPS    Y0, Y4, Y5, Y6     // x < 0: c (= 1 + erf(z)); else 2 - c
	VBROADCASTSS geluc<>+32(SB), Y1
	VMULPS       Y1, Y0, Y0         // x/2
	VMULPS       Y6, Y0, Y0
	VMOVUPS      Y0, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          geluloop

geludone:
	VZEROUPPER
	RET
