// Shared by the quantized GEMM's AVX-512 tile kernels (qgemm_vnni_amd64.s,
// qgemm_amx_amd64.s): the 8×16 float tile lives in Z24-Z31, a row each.

#define QTILE_ZERO \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31

// QTILE_STORE(r): the tile to 0(r)..511(r).
#define QTILE_STORE(r) \
	VMOVUPS Z24, 0(r); \
	VMOVUPS Z25, 64(r); \
	VMOVUPS Z26, 128(r); \
	VMOVUPS Z27, 192(r); \
	VMOVUPS Z28, 256(r); \
	VMOVUPS Z29, 320(r); \
	VMOVUPS Z30, 384(r); \
	VMOVUPS Z31, 448(r)
