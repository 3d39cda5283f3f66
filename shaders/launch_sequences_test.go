package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestAttentionPagedAligned16Launch: AttentionPaged takes
// attention_paged_f16_a16 (16-byte K and q row loads) only under the
// host's Align16 promise with the q and K rows kept 16-byte aligned by the
// bindings' offsets, their patches, the strides and the head size, split or
// not; every other case keeps the element-aligned instance.
func TestAttentionPagedAligned16Launch(t *testing.T) {
	cuda := TuningFor("cuda")
	split := cuda
	split.AttnPagedChunk = Default.AttnPagedChunk
	ap := func(edit func(a *plan.AttentionPagedArgs)) plan.Dispatch {
		// the server's batch plan: SmolLM2's 9 heads of 64, blocks of 16,
		// tables of 8,192 keys
		a := plan.AttentionPagedArgs{Type: ggml.F16, HeadDim: 64, NHead: 9, NKV: 3, M: 16, Ldq: 960, Ldo: 576,
			Scale: 0.125, HeadStride: 16 * 64, PosStride: 64, BlockSize: 16, BlockStride: 3 * 16 * 64, NBlocks: 8192,
			TableStride: 512, Q: plan.Binding{Off: 64}, K: plan.Binding{Off: 128}}
		if edit != nil {
			edit(&a)
		}
		return a.Dispatch()
	}
	d := ap(nil)
	for _, tu := range []Tuning{cuda, split} {
		lns, err := LaunchFor(&d, &tu, nil)
		require.NoError(t, err)
		require.Equal(t, "attention_paged_f16_a16", lns[0].Function, "chunk %d", tu.AttnPagedChunk)
	}
	require.Greater(t, func() uint32 { l, _ := LaunchFor(&d, &split, nil); return l[0].Groups[0] }(), uint32(1), "split")
	lns, err := LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, "attention_paged_f16", lns[0].Function, "no promise")
	patched := func(slot int, mul int64) plan.Dispatch {
		d := ap(nil)
		d.Patch[0] = plan.Patch{Target: plan.PatchOffset0 + plan.PatchTarget(slot), Var: plan.VarUser0, Mul: mul}
		d.NPatch = 1
		return d
	}
	ok := patched(plan.SlotAttentionPagedQ, 960*4)
	lns, err = LaunchFor(&ok, &cuda, nil)
	require.NoError(t, err)
	require.Equal(t, "attention_paged_f16_a16", lns[0].Function, "an aligned patch")
	for name, d := range map[string]plan.Dispatch{
		"q offset 8":     ap(func(a *plan.AttentionPagedArgs) { a.Q.Off = 8 }),
		"k offset 2":     ap(func(a *plan.AttentionPagedArgs) { a.K.Off = 2 }),
		"q patch":        patched(plan.SlotAttentionPagedQ, 4),
		"k patch":        patched(plan.SlotAttentionPagedK, 2),
		"q row stride":   ap(func(a *plan.AttentionPagedArgs) { a.Ldq = 961 }),
		"pos stride 66":  ap(func(a *plan.AttentionPagedArgs) { a.PosStride, a.HeadStride, a.BlockStride = 66, 16*66, 3*16*66 }),
		"head stride":    ap(func(a *plan.AttentionPagedArgs) { a.HeadStride, a.BlockStride = 16*64+4, 3*(16*64+4) }),
		"block stride":   ap(func(a *plan.AttentionPagedArgs) { a.BlockStride = 3*16*64 + 2 }),
		"head size 40":   ap(func(a *plan.AttentionPagedArgs) { a.HeadDim, a.Ldq, a.Ldo, a.PosStride = 40, 600, 360, 40 }),
		"f32 cache rows": ap(func(a *plan.AttentionPagedArgs) { a.Type = ggml.F32 }),
	} {
		lns, err := LaunchFor(&d, &cuda, nil)
		require.NoError(t, err, name)
		require.NotContains(t, lns[0].Function, "_a16", name)
	}
}
