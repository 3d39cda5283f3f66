#include "textflag.h"

// func scanGEAVX2(x *float32, n int, thr float32) (off int, mask uint32)
// 32 floats per iteration (n a multiple of 32): four compares (LE_OQ of
// thr against memory, so NaN never matches), tested together; the block
// that matches gets its 32-bit mask.
TEXT ·scanGEAVX2(SB), NOSPLIT, $0-36
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS thr+16(FP), Y0
	XORQ         AX, AX
	XORL         DX, DX

loop:
	CMPQ      AX, CX
	JAE       done
	VCMPPS    $0x12, (SI)(AX*4), Y0, Y1
	VCMPPS    $0x12, 32(SI)(AX*4), Y0, Y2
	VCMPPS    $0x12, 64(SI)(AX*4), Y0, Y3
	VCMPPS    $0x12, 96(SI)(AX*4), Y0, Y4
	VORPS     Y1, Y2, Y5
	VORPS     Y3, Y4, Y6
	VORPS     Y5, Y6, Y5
	VPTEST    Y5, Y5
	JNZ       found
	ADDQ      $32, AX
	JMP       loop

found:
	VMOVMSKPS Y1, DX
	VMOVMSKPS Y2, R8
	VMOVMSKPS Y3, R9
	VMOVMSKPS Y4, R10
	SHLL      $8, R8
	SHLL      $16, R9
	SHLL      $24, R10
	ORL       R8, DX
	ORL       R9, DX
	ORL       R10, DX

done:
	VZEROUPPER
	MOVQ AX, off+24(FP)
	MOVL DX, mask+32(FP)
	RET
