#include "textflag.h"

// One row's four accumulators summed, stored at dst.
#define REDUCE(a0, a1, a2, a3, x0, x1, dst) \
	VADDPS       a1, a0, a0 \
	VADDPS       a3, a2, a2 \
	VADDPS       a2, a0, a0 \
	VEXTRACTF128 $1, a0, x1 \
	VADDPS       x1, x0, x0 \
	VHADDPS      x0, x0, x0 \
	VHADDPS      x0, x0, x0 \
	VMOVSS       x0, dst

// func dotF16RowsAVX2(w *uint16, rb int, x *float32, n, rows int, out *float32)
TEXT ·dotF16RowsAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ rb+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ n+24(FP), R9
	SHRQ $5, R9
	MOVQ rows+32(FP), R10
	MOVQ out+40(FP), R11

row:
	CMPQ   R10, $0
	JEQ    done
	MOVQ   SI, R12
	MOVQ   DI, R14
	MOVQ   R9, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

rowloop:
	VCVTPH2PS   (R12), Y8
	VCVTPH2PS   16(R12), Y9
	VCVTPH2PS   32(R12), Y10
	VCVTPH2PS   48(R12), Y11
	VFMADD231PS (R14), Y8, Y0
	VFMADD231PS 32(R14), Y9, Y1
	VFMADD231PS 64(R14), Y10, Y2
	VFMADD231PS 96(R14), Y11, Y3
	ADDQ        $64, R12
	ADDQ        $128, R14
	DECQ        CX
	JNZ         rowloop

	REDUCE(Y0, Y1, Y2, Y3, X0, X1, (R11))
	ADDQ R8, SI
	ADDQ $4, R11
	DECQ R10
	JMP  row

done:
	VZEROUPPER
	RET
