#include "textflag.h"
#include "attnkeys_amd64.h"

// func keyScoresF32AVX2(q, k, s *float32, nkeys, ps, hd int, scale float32)
// s[j] = scale·(q·k[j·ps : j·ps+hd]) for j < nkeys (a multiple of 4), hd a
// multiple of 8: four keys at a time, one accumulator each, reduced
// together (a single-query attention's scores without a call per key).
TEXT ·keyScoresF32AVX2(SB), NOSPLIT, $0-52
	MOVQ         q+0(FP), SI
	MOVQ         k+8(FP), DI
	MOVQ         s+16(FP), DX
	MOVQ         nkeys+24(FP), CX
	MOVQ         ps+32(FP), R8
	SHLQ         $2, R8             // key stride in bytes
	MOVQ         hd+40(FP), R9
	SHLQ         $2, R9             // row length in bytes
	VBROADCASTSS scale+48(FP), Y15
	SHRQ         $2, CX
	JZ           ksdone

ksgroup:
	MOVQ         DI, R10
	LEAQ         (DI)(R8*1), R11
	LEAQ         (R11)(R8*1), R12
	LEAQ         (R12)(R8*1), R13
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	XORQ         AX, AX

kschunk:
	VMOVUPS      (SI)(AX*1), Y4
	VFMADD231PS  (R10)(AX*1), Y4, Y0
	VFMADD231PS  (R11)(AX*1), Y4, Y1
	VFMADD231PS  (R12)(AX*1), Y4, Y2
	VFMADD231PS  (R13)(AX*1), Y4, Y3
	ADDQ         $32, AX
	CMPQ         AX, R9
	JLT          kschunk

	SCORES4
	LEAQ         (DI)(R8*4), DI
	DECQ         CX
	JNZ          ksgroup

ksdone:
	VZEROUPPER
	RET

// func addValuesF32AVX2(o, v, p *float32, nkeys, ps, hd int)
// o[c] += p[j]·v[j·ps + c] for j < nkeys (at least 1), in order of j, and
// c < hd (a multiple of 32): 32 outputs stay in registers over all keys.
TEXT ·addValuesF32AVX2(SB), NOSPLIT, $0-48
	MOVQ         o+0(FP), DI
	MOVQ         v+8(FP), SI
	MOVQ         p+16(FP), DX
	MOVQ         nkeys+24(FP), CX
	MOVQ         ps+32(FP), R8
	SHLQ         $2, R8
	MOVQ         hd+40(FP), R9
	SHRQ         $5, R9
	JZ           avdone

avchunk:
	VMOVUPS      (DI), Y0
	VMOVUPS      32(DI), Y1
	VMOVUPS      64(DI), Y2
	VMOVUPS      96(DI), Y3
	MOVQ         SI, R10
	MOVQ         DX, R11
	MOVQ         CX, R12

avkey:
	VBROADCASTSS (R11), Y4
	VFMADD231PS  (R10), Y4, Y0
	VFMADD231PS  32(R10), Y4, Y1
	VFMADD231PS  64(R10), Y4, Y2
	VFMADD231PS  96(R10), Y4, Y3
	ADDQ         $4, R11
	ADDQ         R8, R10
	DECQ         R12
	JNZ          avkey

	VMOVUPS      Y0, (DI)
	VMOVUPS      Y1, 32(DI)
	VMOVUPS      Y2, 64(DI)
	VMOVUPS      Y3, 96(DI)
	ADDQ         $128, DI
	ADDQ         $128, SI
	DECQ         R9
	JNZ          avchunk

avdone:
	VZEROUPPER
	RET
