// EXP8 sets p to e^x in eight float32 lanes, exp32's method (fastmath.go)
// with exp_amd64.s's constants ·expc: n = round(x·log2e), r = x - n·ln2
// (ln2 in two parts), e^r by its degree-7 Taylor polynomial, times 2^n.
// x must be clamped to [ln(FLT_MIN), 88.7]; it is left holding r, and n and
// t are clobbered. log2e, magic, ln2hi and ln2lo hold those constants.
#define EXP8(x, n, p, t, log2e, magic, ln2hi, ln2lo) \
	VMULPS       log2e, x, n; \
	VADDPS       magic, n, n; \
	VSUBPS       magic, n, n; \
	VFNMADD231PS ln2hi, n, x; \
	VFNMADD231PS ln2lo, n, x; \
	VBROADCASTSS ·expc+16(SB), p; \
	VBROADCASTSS ·expc+20(SB), t; \
	VFMADD213PS  t, x, p; \
	VBROADCASTSS ·expc+24(SB), t; \
	VFMADD213PS  t, x, p; \
	VBROADCASTSS ·expc+28(SB), t; \
	VFMADD213PS  t, x, p; \
	VBROADCASTSS ·expc+32(SB), t; \
	VFMADD213PS  t, x, p; \
	VBROADCASTSS ·expc+36(SB), t; \
	VFMADD213PS  t, x, p; \
	VBROADCASTSS ·expc+40(SB), t; \
	VFMADD213PS  t, x, p; \
	VFMADD213PS  t, x, p; \
	VCVTTPS2DQ   n, n; \
	VPBROADCASTD ·expc+48(SB), t; \
	VPADDD       t, n, n; \
	VPSLLD       $23, n, n; \
	VMULPS       n, p, p
