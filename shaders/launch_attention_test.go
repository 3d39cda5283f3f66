package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Bad dispatches of the norm, RoPE, attention, argmax and sample rules
// return errors (never a panic, never a launch the kernel would misread).
func TestLaunchRulesReject(t *testing.T) {
	bad := map[string]plan.Dispatch{
		"rms stride":        plan.RMSNormArgs{Dim: 64, Rows: 4, Ldx: 63, Ldo: 64, Inner: 1}.Dispatch(),
		"layer stride":      plan.LayerNormArgs{Dim: 64, Rows: 2, Ldx: 64, Ldo: 10}.Dispatch(),
		"rope odd dims":     plan.RopeArgs{HeadDim: 64, NHead: 2, M: 1, Ldx: 128, RopeDim: 63}.Dispatch(),
		"rope dims > head":  plan.RopeArgs{HeadDim: 64, NHead: 2, M: 1, Ldx: 128, RopeDim: 66}.Dispatch(),
		"rope mode":         plan.RopeArgs{HeadDim: 64, NHead: 2, M: 1, Ldx: 128, Mode: plan.RopeMode(1)}.Dispatch(),
		"rope head 0":       plan.RopeArgs{NHead: 2, M: 1, Ldx: 128}.Dispatch(),
		"rope stride":       plan.RopeArgs{HeadDim: 64, NHead: 2, M: 2, Ldx: 100}.Dispatch(),
		"rope_kv type":      plan.RopeKVArgs{Type: ggml.Q8_0, HeadDim: 64, NHead: 2, NKV: 1, M: 1, Ldqkv: 256}.Dispatch(),
		"rope_kv stride":    plan.RopeKVArgs{Type: ggml.F16, HeadDim: 64, NHead: 2, NKV: 1, M: 2, Ldqkv: 200}.Dispatch(),
		"rope_kv heads":     plan.RopeKVArgs{Type: ggml.F16, HeadDim: 64, NHead: 1 << 31, NKV: 1 << 31, M: 1, Ldqkv: 256}.Dispatch(),
		"attn gqa":          plan.AttentionArgs{Type: ggml.F16, Probs: plan.None, HeadDim: 64, NHead: 6, NKV: 4, M: 1, Ldq: 384, Ldo: 384, KVLen: 10}.Dispatch(),
		"attn nkv 0":        plan.AttentionArgs{Type: ggml.F16, Probs: plan.None, HeadDim: 64, NHead: 6, M: 1, Ldq: 384, Ldo: 384, KVLen: 10}.Dispatch(),
		"attn head 512":     plan.AttentionArgs{Type: ggml.F32, Probs: plan.None, HeadDim: 512, NHead: 1, NKV: 1, M: 1, Ldq: 512, Ldo: 512, KVLen: 10}.Dispatch(),
		"attn type":         plan.AttentionArgs{Type: ggml.Q4_0, Probs: plan.None, HeadDim: 64, NHead: 1, NKV: 1, M: 1, Ldq: 64, Ldo: 64, KVLen: 10}.Dispatch(),
		"attn kvLen":        plan.AttentionArgs{Type: ggml.F32, Probs: plan.None, HeadDim: 64, NHead: 1, NKV: 1, M: 1, Ldq: 64, Ldo: 64, KVLen: 1 << 23}.Dispatch(),
		"attn strides":      plan.AttentionArgs{Type: ggml.F32, Probs: plan.None, HeadDim: 64, NHead: 2, NKV: 1, M: 2, Ldq: 100, Ldo: 128, KVLen: 10}.Dispatch(),
		"argmax empty":      plan.ArgmaxArgs{M: 1}.Dispatch(),
		"argmax stride":     plan.ArgmaxArgs{N: 100, M: 2, Ldx: 99}.Dispatch(),
		"sample empty":      plan.SampleArgs{Draws: plan.None}.Dispatch(),
		"sample vocabulary": plan.SampleArgs{Draws: plan.None, N: 1 << 21}.Dispatch(),
	}
	probs := plan.AttentionArgs{Type: ggml.F32, Probs: plan.Binding{} /* bound */, HeadDim: 64, NHead: 1, NKV: 1, M: 1, Ldq: 64, Ldo: 64, KVLen: 10, HeadStride: 64, PosStride: 64, Ldp: 9}.Dispatch()
	bad["attn probs stride"] = probs
	for name, d := range bad {
		_, err := LaunchFor(&d, &Default, nil)
		require.Error(t, err, name)
	}
}

// Geometry: decode splits over the KV length (with a merge sharing the
// scratch), prefill takes the tiled kernel where a tile fits, argmax runs
// two stages, empty work launches nothing.
func TestLaunchRulesGeometry(t *testing.T) {
	decode := plan.AttentionArgs{Type: ggml.F16, Probs: plan.None, HeadDim: 64, NHead: 32, NKV: 8, M: 1, Ldq: 2048, Ldo: 2048, KVLen: 1000, Pos0: 999, Flags: plan.FlagCausal, HeadStride: 64, PosStride: 512 * 64}.Dispatch()
	ls, err := LaunchFor(&decode, &Default, nil)
	require.NoError(t, err)
	require.Len(t, ls, 2)
	require.Equal(t, "attention_f16", ls[0].Function)
	require.Equal(t, [3]uint32{4, 32, 1}, ls[0].Groups) // ceil(1000/256) chunks
	require.Equal(t, "attention_merge", ls[1].Function)
	require.Equal(t, ls[0].Scratch, ls[1].Scratch)
	require.Equal(t, uint32(4*(4+32*4*66)), ls[0].Scratch)

	withAttn := func(d plan.Dispatch, f func(a *plan.AttentionArgs)) plan.Dispatch {
		a := plan.DecodeAttention(&d)
		f(&a)
		return a.Dispatch()
	}
	// The split is capped from the GPU's size (Tuning.AttnSplitGroups): 132
	// cores × 4 threadgroups over 32 heads is at most 16 chunks, so 4096
	// keys take 16 chunks of 256 instead of 128 of 32; and at AttnMaxChunks
	// per head; a short cache, or no core count and no chunk cap, keeps
	// AttnChunk's split.
	cuda := TuningFor("cuda")
	cuda.AttnSplitGroups, cuda.AttnGroupKeys = 4, 1
	for _, c := range []struct {
		kv, cores, maxc, nc uint32
	}{{4096, 132, 0, 16}, {4096, 0, 0, 128}, {4096, 0, 64, 64}, {4096, 132, 8, 8}, {300, 132, 0, 10}, {1 << 20, 132, 0, 16}, {4096, 1, 0, 1}} {
		tu := cuda
		tu.Cores, tu.AttnMaxChunks = c.cores, c.maxc
		deep := withAttn(decode, func(a *plan.AttentionArgs) { a.KVLen, a.Pos0 = int(c.kv), int(c.kv)-1 })
		ls, err := LaunchFor(&deep, &tu, nil)
		require.NoError(t, err)
		if c.nc == 1 {
			require.Len(t, ls, 1, "kv %d cores %d", c.kv, c.cores)
		} else { // merged by the last chunk of each head (AttnTicket)
			require.Len(t, ls, 1, "kv %d cores %d", c.kv, c.cores)
			require.Equal(t, "attention_ticket_f16", ls[0].Function)
			require.Equal(t, uint32(4*(4+32*c.nc*66)), ls[0].Scratch)
			require.Equal(t, uint32(32), ls[0].Tickets, "a word a (row, head)")
			require.Equal(t, uint32(32), ls[0].Threads[0], "one SIMD-group a chunk")
		}
		require.Equal(t, [3]uint32{c.nc, 32, 1}, ls[0].Groups, "kv %d cores %d", c.kv, c.cores)
		tu.AttnTicket = 1 // the split and an attention_merge launch
		if ls, err = LaunchFor(&deep, &tu, nil); c.nc > 1 {
			require.NoError(t, err)
			require.Len(t, ls, 2, "kv %d cores %d", c.kv, c.cores)
			require.Equal(t, "attention_merge", ls[1].Function)
			require.Equal(t, uint32(4*(4+32*c.nc*66)), ls[1].Scratch)
			require.Equal(t, [3]uint32{c.nc, 32, 1}, ls[0].Groups, "kv %d cores %d", c.kv, c.cores)
		}
	}

	// Up to AttnGroupKeys cached keys (the cuda family's 1024) and without
	// probs, the split is the SIMD-groups of one threadgroup per (row,
	// head), a 32-key chunk each up to attnGroupChunks, merged there: one
	// launch, no scratch.
	group := TuningFor("cuda")
	group.Cores = 132
	for _, c := range []struct{ kv, m, sg uint32 }{{300, 1, 10}, {64, 1, 2}, {33, 2, 2}, {1000, 1, 16}, {1024, 3, 16}} {
		short := withAttn(decode, func(a *plan.AttentionArgs) { a.KVLen, a.Pos0, a.M = int(c.kv), int(c.kv)-1, int(c.m) })
		ls, err := LaunchFor(&short, &group, nil)
		require.NoError(t, err)
		require.Equal(t, []Launch{{Function: "attention_group_f16", Groups: [3]uint32{1, 32, c.m}, Threads: [3]uint32{32 * c.sg, 1, 1}}}, ls, "kv %d", c.kv)
	}
	for i, d := range []plan.Dispatch{
		withAttn(decode, func(a *plan.AttentionArgs) { a.KVLen, a.Pos0, a.Probs, a.Ldp = 300, 299, plan.Binding{Buf: 5}, 300 }),
		withAttn(decode, func(a *plan.AttentionArgs) { a.KVLen, a.Pos0 = 1025, 1024 }),
		withAttn(decode, func(a *plan.AttentionArgs) { a.KVLen, a.Pos0, a.Type = 300, 299, ggml.F32 }),
	} {
		ls, err := LaunchFor(&d, &group, nil)
		require.NoError(t, err)
		if i == 0 {
			require.Len(t, ls, 2, "probs keep the split and its merge")
			require.Contains(t, ls[0].Function, "attention_f")
			continue
		}
		// a longer cache or an f32 cache: the split merged by its last
		// chunks (AttnTicket)
		require.Len(t, ls, 1)
		require.Contains(t, ls[0].Function, "attention_ticket_f")
	}

	// Whisper's cross-attention (6 heads of 64, 1,500 f32 keys, rows 1,536
	// bytes apart) takes the ticket's 16-byte-load instance where the host
	// promises aligned buffers and the offsets and strides keep it
	// (attentionAligned); a K offset of 8 bytes, a cache stride of 386
	// floats, 40-dim heads or an f16 cache keep attention_ticket_*.
	cross := plan.AttentionArgs{Type: ggml.F32, Probs: plan.None, HeadDim: 64, NHead: 6, NKV: 6, M: 1, Ldq: 384, Ldo: 384,
		KVLen: 1500, HeadStride: 64, PosStride: 384}
	for _, c := range []struct {
		edit func(a *plan.AttentionArgs)
		want string
	}{
		{func(a *plan.AttentionArgs) {}, "attention_ticket_f32_a16"},
		{func(a *plan.AttentionArgs) { a.K.Off = 8 }, "attention_ticket_f32"},
		{func(a *plan.AttentionArgs) { a.PosStride = 386 }, "attention_ticket_f32"},
		{func(a *plan.AttentionArgs) { a.HeadDim, a.HeadStride, a.Ldq, a.Ldo = 40, 40, 240, 240 }, "attention_ticket_f32"},
		{func(a *plan.AttentionArgs) { a.Type = ggml.F16 }, "attention_ticket_f16"},
	} {
		x := cross
		c.edit(&x)
		d := x.Dispatch()
		ls, err := LaunchFor(&d, &group, nil)
		require.NoError(t, err)
		require.Equal(t, c.want, ls[0].Function, "%+v", x)
		u := group
		u.Align16 = 1 // no promise: never the aligned instance
		ls, err = LaunchFor(&d, &u, nil)
		require.NoError(t, err)
		require.NotContains(t, ls[0].Function, "_a16")
	}

	prefill := withAttn(decode, func(a *plan.AttentionArgs) { a.M = 100 })
	ls, err = LaunchFor(&prefill, &Default, nil)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, "attention_mma_f16", ls[0].Function)
	require.Equal(t, [3]uint32{1, 32, 7}, ls[0].Groups) // 16 rows per threadgroup
	require.Equal(t, uint32(64), ls[0].Threads[0])

	// f16 tiles up to 128 dims
	tiled := withAttn(prefill, func(a *plan.AttentionArgs) { a.HeadDim, a.Ldq, a.Ldo = 128, 4096, 4096 })
	ls, err = LaunchFor(&tiled, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, "attention_tiled_f16", ls[0].Function)
	require.Equal(t, [3]uint32{1, 32, 25}, ls[0].Groups)
	require.Equal(t, uint32(128), ls[0].Threads[0])

	// no f32 tile for 128 dims
	wide := withAttn(prefill, func(a *plan.AttentionArgs) { a.Type, a.HeadDim, a.Ldq, a.Ldo = ggml.F32, 128, 4096, 4096 })
	ls, err = LaunchFor(&wide, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, "attention_f32", ls[0].Function)

	am := plan.ArgmaxArgs{N: 32000, M: 3, Ldx: 32000}.Dispatch()
	ls, err = LaunchFor(&am, &Default, nil)
	require.NoError(t, err)
	require.Len(t, ls, 2)
	require.Equal(t, [3]uint32{8, 3, 1}, ls[0].Groups)
	require.Equal(t, uint32(4*(2+2*3*8)), ls[0].Scratch)

	for _, d := range []plan.Dispatch{
		plan.RMSNormArgs{Dim: 64}.Dispatch(),
		plan.RopeArgs{HeadDim: 64, NHead: 2}.Dispatch(),
		plan.AttentionArgs{Type: ggml.F32, Probs: plan.None, HeadDim: 64, NHead: 2, NKV: 2}.Dispatch(),
		plan.ArgmaxArgs{N: 10}.Dispatch(),
	} {
		ls, err := LaunchFor(&d, &Default, nil)
		require.NoError(t, err)
		require.Empty(t, ls, d.Kernel.String())
	}
}

// TestRopeAttentionAligned16Launch: RopeAttention takes the "_a16"
// instances (16-byte K row loads) only under the host's Align16 promise
// with K rows kept 16-byte aligned by the binding's offset, its patches,
// the strides and the head size, and never after a split (whose partials
// would offset the slots); every other case keeps the element-aligned one.
func TestRopeAttentionAligned16Launch(t *testing.T) {
	cuda := TuningFor("cuda")
	ra := func(kvLen int, edit func(a *plan.RopeAttentionArgs)) plan.Dispatch {
		a := plan.RopeAttentionArgs{Type: ggml.F16, HeadDim: 64, NHead: 9, NKV: 3, M: 1, Ldq: 960, Ldo: 576,
			KVLen: kvLen, Pos0: kvLen - 1, Flags: plan.FlagCausal, Scale: 0.125, HeadStride: 4096 * 64,
			PosStride: 64, SeqStride: 3 * 4096 * 64, K: plan.Binding{Off: 64}}
		if edit != nil {
			edit(&a)
		}
		return a.Dispatch()
	}
	for kvLen, want := range map[int]string{20: "rope_attention_f16_a16", 300: "rope_attention_group_f16_a16",
		1500: "rope_attention_ticket_f16"} {
		d := ra(kvLen, nil)
		lns, err := LaunchFor(&d, &cuda, nil)
		require.NoError(t, err)
		require.Equal(t, want, lns[0].Function, "%d keys", kvLen)
		lns, err = LaunchFor(&d, &Default, nil)
		require.NoError(t, err)
		require.NotContains(t, lns[0].Function, "_a16", "no promise")
	}
	patched := ra(20, nil)
	patched.Patch[0] = plan.Patch{Target: plan.PatchOffset0 + plan.SlotRopeAttentionK, Var: plan.VarUser0, Mul: 8}
	patched.NPatch = 1
	for name, d := range map[string]plan.Dispatch{
		"offset 8":       ra(20, func(a *plan.RopeAttentionArgs) { a.K.Off = 8 }),
		"offset patch":   patched,
		"pos stride 66":  ra(20, func(a *plan.RopeAttentionArgs) { a.PosStride = 66 }),
		"head stride":    ra(300, func(a *plan.RopeAttentionArgs) { a.HeadStride = 4096*64 + 1 }),
		"seq stride":     ra(300, func(a *plan.RopeAttentionArgs) { a.SeqStride = 3*4096*64 + 3 }),
		"head size 40":   ra(20, func(a *plan.RopeAttentionArgs) { a.HeadDim, a.Ldq, a.Ldo, a.PosStride = 40, 600, 360, 40 }),
		"f32 cache rows": ra(20, func(a *plan.RopeAttentionArgs) { a.Type = ggml.F32 }),
	} {
		lns, err := LaunchFor(&d, &cuda, nil)
		require.NoError(t, err, name)
		require.NotContains(t, lns[0].Function, "_a16", name)
	}
}
