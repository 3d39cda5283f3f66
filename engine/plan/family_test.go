package plan

import (
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// A kernel's decoder accepts only its own kernel: reading one kernel's
// dispatch with another's layout is the bug the families replace.
func TestDecodeChecksTheKernel(t *testing.T) {
	rms := RMSNormArgs{X: F32At(1, 0), W: None, Out: F32At(2, 0), Dim: 8, Rows: 2, Ldx: 8, Ldo: 8, Eps: 1e-5}.Dispatch()
	require.PanicsWithValue(t,
		"plan: DecodeLayerNorm of a rms_norm dispatch (kernel 2): decode a kernel with its own decoder, or a member of a layout family with the family's",
		func() { DecodeLayerNorm(&rms) })
	mm := MatMulArgs{N: 4, K: 8, M: 3}.Dispatch()
	require.Panics(t, func() { DecodeMatVec(&mm) })
	require.NotPanics(t, func() { DecodeMatMul(&mm) })

	add := AddArgs{N: 4, M: 1}.Dispatch()
	require.PanicsWithValue(t,
		"plan: DecodeProduct of a add dispatch (kernel 10), which is not a member of the Product layout family",
		func() { DecodeProduct(&add) })
	require.Panics(t, func() { DecodeNorm(&mm) })
	mv := MatVecArgs{N: 4, K: 8, M: 1}.Dispatch()
	require.Panics(t, func() { DecodeGated(&mv) }, "MatVec is a Product, not a Gated one")
}

// Every member of a family decodes, through the family, to the values its
// own record holds in the family's fields.
func TestFamiliesDecodeTheirMembers(t *testing.T) {
	w, x, out, bias, res, up, g := F32At(1, 16), F32At(2, 32), F32At(3, 48), F32At(4, 64), F32At(5, 80), F32At(6, 96), F32At(7, 112)
	mv := MatVecArgs{Type: ggml.Q8_0, W: w, X: x, Out: out, Bias: bias, Res: res, N: 11, K: 12, M: 13, Ldx: 14, Ldo: 15, Ldr: 16}
	want := ProductArgs{Type: mv.Type, W: w, X: x, Out: out, Bias: bias, Res: res, N: 11, K: 12, M: 13, Ldx: 14, Ldo: 15, Ldr: 16}
	products := map[Kernel]Dispatch{
		MatVec:        mv.Dispatch(),
		MatMul:        MatMulArgs(mv).Dispatch(),
		RMSNormMatVec: RMSNormMatVecArgs{Type: ggml.Q8_0, W: w, X: x, Out: out, Bias: bias, Res: res, G: g, N: 11, K: 12, M: 13, Ldx: 14, Ldo: 15, Ldr: 16, Eps: 1e-6}.Dispatch(),
		LayerNormMatVec: LayerNormMatVecArgs{Type: ggml.Q8_0, W: w, X: x, Out: out, Bias: bias, Res: res, G: g, B: up, N: 11, K: 12, M: 13, Ldx: 14, Ldo: 15, Ldr: 16,
			Flags: FlagGELUOut, Eps: 1e-5}.Dispatch(),
	}
	gated := SiLUMulMatVecArgs{Type: ggml.Q8_0, W: w, Gate: x, Out: out, Bias: bias, Res: res, Up: up, N: 11, K: 12, M: 13, Ldg: 14, Ldo: 15, Ldr: 16, Ldu: 17}
	products[SiLUMulMatVec] = gated.Dispatch()
	products[GELUMulMatVec] = GELUMulMatVecArgs(gated).Dispatch()
	for k, d := range products {
		require.Equal(t, want, DecodeProduct(&d), "%s", k)
		require.True(t, k.In(FamilyProduct), "%s", k)
	}
	for _, k := range []Kernel{SiLUMulMatVec, GELUMulMatVec} {
		d := products[k]
		require.Equal(t, GatedArgs(gated), DecodeGated(&d), "%s", k)
	}

	rms := RMSNormArgs{X: x, W: w, Out: out, Dim: 8, Rows: 3, Ldx: 9, Ldo: 10, Eps: 1e-5, Inner: 2}.Dispatch()
	ln := LayerNormArgs{X: x, W: w, B: bias, Out: out, Dim: 8, Rows: 3, Ldx: 9, Ldo: 10, Eps: 1e-5}.Dispatch()
	wantNorm := NormArgs{X: x, W: w, Dim: 8, Rows: 3, Ldx: 9, Ldo: 10, Eps: 1e-5}
	require.Equal(t, wantNorm, DecodeNorm(&rms))
	require.Equal(t, wantNorm, DecodeNorm(&ln))

	for _, d := range []Dispatch{
		AddArgs{N: 5, M: 6, Lda: 7}.Dispatch(), CopyArgs{Type: ggml.F16, N: 5, M: 6}.Dispatch(),
		GELUMulArgs{N: 5, M: 6, Ldg: 9}.Dispatch(), ArgmaxArgs{N: 5, M: 6, Ldx: 5}.Dispatch(),
	} {
		require.Equal(t, RowsArgs{N: 5, M: 6}, DecodeRows(&d), "%s", d.Kernel)
	}

	// The family's patch targets are its members' own.
	require.Equal(t, PatchMatVecM, PatchProductM)
	require.Equal(t, PatchGELUMulMatVecM, PatchProductM)
	require.Equal(t, PatchLayerNormMatVecM, PatchProductM)
	require.Equal(t, PatchLayerNormRows, PatchNormRows)
	require.Equal(t, PatchRMSNormRows, PatchNormRows)

	var members []Kernel
	for _, k := range Kernels() {
		if k.In(FamilyProduct) || k.In(FamilyGated) || k.In(FamilyNorm) {
			members = append(members, k)
		}
	}
	require.ElementsMatch(t, []Kernel{RMSNorm, LayerNorm, MatVec, MatMul, RMSNormMatVec, LayerNormMatVec, SiLUMulMatVec, GELUMulMatVec}, members)
	require.False(t, Kernel(999).In(FamilyProduct))
	require.Equal(t, "Gated", FamilyGated.String())
}

// GELU's mode is the generated Activation enum; the contract rejects
// other values.
func TestActivationMode(t *testing.T) {
	d := GELUArgs{X: F32At(1, 0), Out: F32At(1, 0), N: 4, M: 1, Ldx: 4, Ldo: 4, Mode: ActGELUTanh}.Dispatch()
	require.Equal(t, uint32(1), d.P[4])
	require.NoError(t, d.Check())
	require.Equal(t, ActGELUTanh, DecodeGELU(&d).Mode)
	d.P[4] = 2
	require.EqualError(t, d.Check(), "gelu: unknown GELU mode 2")
	require.True(t, ActGELUErf.Valid())
	require.False(t, Activation(2).Valid())
}

// Rope's and RopeKV's mode is the generated RopeMode enum (ggml's mode
// numbers on the wire); the contract rejects other values.
func TestRopeMode(t *testing.T) {
	d := RopeArgs{X: F32At(1, 0), HeadDim: 4, NHead: 1, M: 1, Ldx: 4, Mode: RopeNeoX}.Dispatch()
	require.Equal(t, uint32(2), d.P[5])
	require.NoError(t, d.Check())
	require.Equal(t, RopeNeoX, DecodeRope(&d).Mode)
	d.P[5] = 1
	require.EqualError(t, d.Check(), "rope: unknown rope mode 1")
	kv := RopeKVArgs{Mode: RopeNormal}.Dispatch()
	require.Equal(t, RopeNormal, DecodeRopeKV(&kv).Mode)
	require.True(t, RopeNormal.Valid())
	require.False(t, RopeMode(1).Valid())
}

// The two-input row-wise kernels share the Binary layout: a gated
// activation's gate and up are the family's A and B.
func TestBinaryFamily(t *testing.T) {
	g := SiLUMulArgs{Gate: F32At(1, 8), Up: F32At(2, 16), Out: F32At(3, 0), N: 4, M: 2, Ldg: 5, Ldu: 6, Ldo: 7}.Dispatch()
	require.Equal(t, BinaryArgs{A: F32At(1, 8), B: F32At(2, 16), Out: F32At(3, 0), N: 4, M: 2, Lda: 5, Ldb: 6, Ldo: 7}, DecodeBinary(&g))
	a := AddArgs{A: F32At(1, 0), B: F32At(2, 0), Out: F32At(3, 0), N: 4, M: 1, Lda: 4, Ldo: 4}.Dispatch()
	require.Equal(t, 4, DecodeBinary(&a).Lda)
	for _, k := range []Kernel{SiLUMul, GELUMul, Add} {
		require.True(t, k.In(FamilyBinary), k)
	}
	s := ScaleArgs{X: F32At(1, 0), Out: F32At(1, 0), N: 4, M: 1, Ldx: 4, Ldo: 4}.Dispatch()
	require.Panics(t, func() { DecodeBinary(&s) }, "Scale has one input")
}
