package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/engine/plan/internal/kgen"
	"github.com/stretchr/testify/require"
)

// TestGeneratedFilesUpToDate fails when kernels_gen.go, shaders/kargs.h or
// the README's kernel table differ from what internal/kgen/decl.go says:
// run `go generate ./engine/plan`.
func TestGeneratedFilesUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	outs, err := kgen.Outputs(root)
	require.NoError(t, err)
	require.Len(t, outs, 3)
	for name, want := range outs {
		got, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		require.True(t, string(got) == string(want), "%s is stale: run go generate ./engine/plan", name)
	}
}

// TestRecordsRoundTrip encodes every kernel's record with distinct values
// in every field and decodes them back.
func TestRecordsRoundTrip(t *testing.T) {
	a := RMSNormArgs{X: F32At(1, 2), W: None, Out: F32At(3, 4), Dim: 5, Rows: 6, Ldx: 7, Ldo: 8, Eps: 1e-6, Inner: 9}
	d := a.Dispatch()
	require.Equal(t, RMSNorm, d.Kernel)
	require.Equal(t, uint8(3), d.NBind)
	require.Equal(t, [3]uint32{6, 1, 1}, d.Grid)
	require.Equal(t, uint32(9), d.P[5])
	require.Equal(t, a, DecodeRMSNorm(&d))

	s := SampleArgs{Draws: None, X: F32At(1, 0), Out: F32At(2, 0), Settings: F32At(4, 0), Counts: None, Scratch: F32At(3, 0),
		Logprobs: F32At(5, 8), N: 10, Step: 5}
	ds := s.Dispatch()
	require.Equal(t, uint8(7), ds.NBind)
	require.Equal(t, s, DecodeSample(&ds))

	c := Conv1DArgs{Cin: 2, Cout: 3, T: 10, Kw: 3, Stride: 2, Pad: 1}
	require.Equal(t, 5, c.OutRows())
	c.Stride = 0
	require.Equal(t, 0, c.OutRows())
}

func TestContractTables(t *testing.T) {
	require.True(t, Attention.Writes(SlotAttentionProbs))
	require.False(t, Attention.Writes(SlotAttentionK))
	require.True(t, Attention.Optional(SlotAttentionProbs))
	require.False(t, RMSNorm.Optional(SlotRMSNormX))
	require.True(t, RMSNorm.Optional(SlotRMSNormW))
	require.True(t, Rope.Writes(SlotRopeX))
	require.True(t, Attention.Patchable(PatchAttentionKVLen))
	require.True(t, Embed.Patchable(PatchEmbedIdsOff))
	require.True(t, Embed.Patchable(PatchEmbedTableOff))
	require.True(t, Embed.Patchable(PatchEmbedAddOff))
	require.False(t, Embed.Patchable(PatchOffset0+4))
	require.False(t, RMSNorm.Patchable(PatchParam0+0))
	info, _ := MatVec.Info()
	require.Equal(t, 3, info.MinBind)
	require.Equal(t, "Ldr", info.Params[5].Name)
}

func TestCheckAndAccesses(t *testing.T) {
	d := RMSNormArgs{X: F32At(0, 0), Out: F32At(0, 0), W: None, Dim: 8, Rows: 4, Inner: 2, Ldx: 10, Ldo: 16}.Dispatch()
	require.ErrorContains(t, d.Check(), "rms_norm: row stride (10, 16) smaller than 2 heads of 8")
	d = RMSNormArgs{X: F32At(0, 0), Out: F32At(1, 0), W: None, Dim: 8, Rows: 4, Inner: 2, Ldx: 16, Ldo: 16}.Dispatch()
	require.NoError(t, d.Check())
	acc := d.Accesses(nil)
	require.Len(t, acc, 2, "the absent weight is left out")
	require.Equal(t, Access{Slot: 0, Lo: 0, Hi: 4 * 32, Touched: 4 * 32, Read: true}, acc[0])
	require.Equal(t, Access{Slot: 2, Lo: 0, Hi: 4 * 32, Touched: 4 * 32, Write: true}, acc[1])

	e := EmbedArgs{Add: None, Table: Binding{Buf: 0}, Ids: F32At(1, 0), Out: F32At(2, 0), Dim: 4, N: 2, Ldo: 4, Flags: FlagAccumulate}.Dispatch()
	acc = e.Accesses(nil)
	require.Equal(t, ToEnd, acc[0].Hi)
	require.True(t, acc[2].Read && acc[2].Write, "accumulating embed reads its output")
}
