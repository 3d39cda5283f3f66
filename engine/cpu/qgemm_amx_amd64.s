#include "textflag.h"
#include "qgemm_tile_amd64.h"

// AMX instructions, hand-encoded (Go's assembler has no mnemonics for
// them; bytes checked against GNU as 2.40 and the SDM's VEX forms:
// C4 E2, then W·~vvvv·L·pp, opcode, ModRM, SIB). Tile numbers are
// literal: c the int32 sums, a the activations, b the weight panel.
#define LDTILECFG_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x00
#define TILERELEASE BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
// TILEZERO tmm(n)
#define TILEZERO(n) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $(0xC0+8*n)
// TILELOADD tmm(n), (DI)(BX*1): rows of activation codes, BX bytes apart.
#define TILELOAD_ACT(n) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $(0x04+8*n); BYTE $0x1F
// TILELOADD tmm(n), (SI)(DX*1): a panel block's eight 64-byte groups.
#define TILELOAD_PANEL(n) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $(0x04+8*n); BYTE $0x16
// TILESTORED (AX)(DX*1), tmm(n)
#define TILESTORE(n) BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $(0x04+8*n); BYTE $0x10
// TDPBSUD tmm(c), tmm(a), tmm(b): c[i][r] += Σ signed a[i][4g+t] ·
// unsigned b[g][4r+t], the same products as VPDPBUSD with its operands'
// roles swapped.
#define TDPBSUD(c, a, b) BYTE $0xC4; BYTE $0xE2; BYTE $(0x02+8*(15-b)); BYTE $0x5E; BYTE $(0xC0+8*c+a)

// AMXBLOCK(c, a, b): one 32-element block's 8×16 int32 sums into tile c,
// then DI and SI step to the next block.
#define AMXBLOCK(c, a, b) \
	TILEZERO(c); \
	TILELOAD_ACT(a); \
	TILELOAD_PANEL(b); \
	TDPBSUD(c, a, b); \
	ADDQ $320, DI; \
	ADDQ $576, SI

// AROW(zi, zt, zf, ro, xo): one activation row's 16 int32 sums (ro(AX)
// in the stored tile) plus its −offset·Σx, converted and scaled by
// scale_w·d_x into zf (d_x and the correction at xo(R10)): the VNNI
// kernel's arithmetic in its order, so the tiles agree bit for bit.
#define AROW(zi, zt, zf, ro, xo) \
	VMOVDQU32   ro(AX), zi; \
	VPADDD.BCST xo+36(R10), zi, zi; \
	VCVTDQ2PS   zi, zi; \
	VMULPS.BCST xo+32(R10), Z16, zt; \
	VFMADD231PS zt, zi, zf

// ASCALE: the block whose sums are stored at AX, activations at R10 and
// panel at R11, into Z24-Z31.
#define ASCALE \
	VMOVUPS 512(R11), Z16; \
	AROW(Z0, Z8, Z24, 0, 0); \
	AROW(Z1, Z9, Z25, 64, 40); \
	AROW(Z2, Z10, Z26, 128, 80); \
	AROW(Z3, Z11, Z27, 192, 120); \
	AROW(Z4, Z12, Z28, 256, 160); \
	AROW(Z5, Z13, Z29, 320, 200); \
	AROW(Z6, Z14, Z30, 384, 240); \
	AROW(Z7, Z15, Z31, 448, 280)

// func qgemmAMX(panel, act *byte, nb, tiles int, out *float32)
// qgemmVNNI's 8×16 tile on AMX, for tiles consecutive activation groups
// against one panel (out: tiles·128 floats), so that the tile
// configuration is loaded once per run. Per block, the activations' 8
// rows × 32 codes (40 bytes apart) are tile A, the panel block's eight
// groups tile B, TDPBSUD their int32 sums. Four blocks go to tiles 0-3 (A
// and B alternate between tiles 4/5 and 6/7) before the sums are stored
// to the frame and scaled with AVX-512, so the four products overlap.
// Tiles are configured on entry and released before return: assembly is
// not preempted, so the goroutine stays on this thread in between, and a
// released tile state costs nothing to save at a context switch.
TEXT ·qgemmAMX(SB), 0, $2048-40
	MOVQ panel+0(FP), R12
	MOVQ act+8(FP), DI
	MOVQ tiles+24(FP), R9
	MOVQ out+32(FP), R8
	LEAQ ·amxTileConfig(SB), AX
	LDTILECFG_AX
	MOVQ $40, BX
	MOVQ $64, DX

amxtile:
	MOVQ   R12, SI
	MOVQ   nb+16(FP), CX
	QTILE_ZERO

amx4:
	CMPQ CX, $4
	JLT  amx1
	MOVQ DI, R10
	MOVQ SI, R11
	AMXBLOCK(0, 4, 5)
	AMXBLOCK(1, 6, 7)
	AMXBLOCK(2, 4, 5)
	AMXBLOCK(3, 6, 7)
	LEAQ 0(SP), AX
	TILESTORE(0)
	ADDQ $512, AX
	TILESTORE(1)
	ADDQ $512, AX
	TILESTORE(2)
	ADDQ $512, AX
	TILESTORE(3)
	LEAQ 0(SP), AX
	ASCALE
	ADDQ $512, AX
	ADDQ $320, R10
	ADDQ $576, R11
	ASCALE
	ADDQ $512, AX
	ADDQ $320, R10
	ADDQ $576, R11
	ASCALE
	ADDQ $512, AX
	ADDQ $320, R10
	ADDQ $576, R11
	ASCALE
	SUBQ $4, CX
	JMP  amx4

amx1:
	TESTQ CX, CX
	JEQ   amxstore
	MOVQ  DI, R10
	MOVQ  SI, R11
	AMXBLOCK(0, 4, 5)
	LEAQ  0(SP), AX
	TILESTORE(0)
	ASCALE
	DECQ  CX
	JMP   amx1

amxstore:
	// DI has stepped past this group's nb blocks onto the next group's.
	QTILE_STORE(R8)
	ADDQ    $512, R8
	DECQ    R9
	JNZ     amxtile

	TILERELEASE
	VZEROUPPER
	RET
