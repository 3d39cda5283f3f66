#include "textflag.h"
#include "attnkeys_amd64.h"

// Four groups of 8 f16 values from off(R10) widened, times the key's
// probability in Y15, added to a0..a3.
#define ADD4(off0, off1, off2, off3, a0, a1, a2, a3) \
	VCVTPH2PS   off0(R10), Y8   \
	VCVTPH2PS   off1(R10), Y9   \
	VCVTPH2PS   off2(R10), Y10  \
	VCVTPH2PS   off3(R10), Y11  \
	VFMADD231PS Y8, Y15, a0     \
	VFMADD231PS Y9, Y15, a1     \
	VFMADD231PS Y10, Y15, a2    \
	VFMADD231PS Y11, Y15, a3

// func keyScoresF16AVX2(q *float32, k *uint16, spans *kvSpan, nspans int, s *float32, ps, hd int, scale float32)
// The scores of the keys of nspans spans in order, s[j] = scale·(q·key j),
// k f16, hd a multiple of 8: keyScoresF32AVX2's groups of 4 keys with each
// key widened by F16C as it is read, then a span's last 1-3 keys one at a
// time.
TEXT ·keyScoresF16AVX2(SB), NOSPLIT, $0-60
	MOVQ         q+0(FP), SI
	MOVQ         k+8(FP), DI
	MOVQ         spans+16(FP), BX
	MOVQ         nspans+24(FP), R14
	MOVQ         s+32(FP), DX
	MOVQ         ps+40(FP), R8
	SHLQ         $1, R8             // key stride in bytes
	MOVQ         hd+48(FP), R9
	SHLQ         $1, R9             // key length in bytes
	VBROADCASTSS scale+56(FP), Y15
	TESTQ        R14, R14
	JZ           hsdone

hsspan:
	MOVQ (BX), R10
	LEAQ (DI)(R10*2), R10           // the span's first key
	MOVQ 8(BX), CX                  // its keys

hsgroup:
	CMPQ   CX, $4
	JLT    hsone
	LEAQ   (R10)(R8*1), R11
	LEAQ   (R11)(R8*1), R12
	LEAQ   (R12)(R8*1), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX                   // offset in the keys; the query's is twice it

hschunk:
	VMOVUPS     (SI)(AX*2), Y4
	VCVTPH2PS   (R10)(AX*1), Y5
	VCVTPH2PS   (R11)(AX*1), Y6
	VCVTPH2PS   (R12)(AX*1), Y7
	VCVTPH2PS   (R13)(AX*1), Y8
	VFMADD231PS Y5, Y4, Y0
	VFMADD231PS Y6, Y4, Y1
	VFMADD231PS Y7, Y4, Y2
	VFMADD231PS Y8, Y4, Y3
	ADDQ        $16, AX
	CMPQ        AX, R9
	JLT         hschunk

	SCORES4
	LEAQ (R13)(R8*1), R10
	SUBQ $4, CX
	JMP  hsgroup

hsone:
	TESTQ  CX, CX
	JZ     hsnext
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX

hsonechunk:
	VCVTPH2PS   (R10)(AX*1), Y5
	VFMADD231PS (SI)(AX*2), Y5, Y0
	ADDQ        $16, AX
	CMPQ        AX, R9
	JLT         hsonechunk

	VHADDPS      Y0, Y0, Y0         // SCORES4's order: a key's score must not
	VHADDPS      Y0, Y0, Y0         // depend on where its span's groups end
	VEXTRACTF128 $1, Y0, X1
	VADDSS       X1, X0, X0
	VMULSS       X15, X0, X0
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	ADDQ         R8, R10
	DECQ         CX
	JMP          hsone

hsnext:
	ADDQ $16, BX
	DECQ R14
	JNZ  hsspan

hsdone:
	VZEROUPPER
	RET

// func addValuesF16AVX2(o *float32, v *uint16, spans *kvSpan, nspans int, p *float32, ps, hd int)
// o[c] += p[j]·(value j)[c] for the values of nspans spans (at least one)
// in order of j, v f16, c < hd (a multiple of 32): 64 outputs stay in
// registers over all values (eight independent sums, enough to hide the
// FMA's latency), then 32 for a last odd group.
TEXT ·addValuesF16AVX2(SB), NOSPLIT, $0-56
	MOVQ o+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ spans+16(FP), BX
	MOVQ nspans+24(FP), R14
	MOVQ p+32(FP), DX
	MOVQ ps+40(FP), R8
	SHLQ $1, R8
	MOVQ hd+48(FP), R9
	SHRQ $5, R9                     // groups of 32 outputs

hv64:
	CMPQ    R9, $2
	JLT     hv32
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	MOVQ    BX, R13
	MOVQ    R14, AX
	MOVQ    DX, R11

hv64span:
	MOVQ  (R13), R10
	LEAQ  (SI)(R10*2), R10
	MOVQ  8(R13), R12
	TESTQ R12, R12
	JZ    hv64next

hv64key:
	VBROADCASTSS (R11), Y15
	ADD4(0, 16, 32, 48, Y0, Y1, Y2, Y3)
	ADD4(64, 80, 96, 112, Y4, Y5, Y6, Y7)
	ADDQ         $4, R11
	ADDQ         R8, R10
	DECQ         R12
	JNZ          hv64key

hv64next:
	ADDQ $16, R13
	DECQ AX
	JNZ  hv64span

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, DI
	ADDQ    $128, SI
	SUBQ    $2, R9
	JMP     hv64

hv32:
	CMPQ    R9, $0
	JEQ     hvdone
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ    BX, R13
	MOVQ    R14, AX
	MOVQ    DX, R11

hv32span:
	MOVQ  (R13), R10
	LEAQ  (SI)(R10*2), R10
	MOVQ  8(R13), R12
	TESTQ R12, R12
	JZ    hv32next

hv32key:
	VBROADCASTSS (R11), Y15
	ADD4(0, 16, 32, 48, Y0, Y1, Y2, Y3)
	ADDQ         $4, R11
	ADDQ         R8, R10
	DECQ         R12
	JNZ          hv32key

hv32next:
	ADDQ $16, R13
	DECQ AX
	JNZ  hv32span

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)

hvdone:
	VZEROUPPER
	RET
