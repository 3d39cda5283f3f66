package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestRopeAttentionMatVecLaunch: the cuda family (AttnFoldO=2) folds the output product
// into one launch (a threadgroup per (slice of Wo's rows, head): the
// family's 8 slices, a ticket word each; AttnFoldSlices=1 round 11's one
// a head; the weights' layout in function constant 23) where the attention alone is one
// threadgroup a head; a split cache, the fold off (AttnFoldO=1) and the
// Apple families run the attention's launches and then
// rope_attention_mat_vec_o, as do f16 weights under 16-byte loads
// (ramvNarrower) and a fold of more threadgroups than the GPU has
// multiprocessors (ramvOneWave). Repacked weights change the folded launch's
// constant and the product's instance, not the attention's.
func TestRopeAttentionMatVecLaunch(t *testing.T) {
	cuda := TuningFor("cuda")
	require.Equal(t, uint32(FoldO), cuda.AttnFoldO, "the cuda family folds")
	off, err := Override(cuda, "AttnFoldO=1")
	require.NoError(t, err)
	one, err := Override(cuda, "AttnFoldSlices=1")
	require.NoError(t, err)
	apple := TuningFor("apple9")
	d := func(ty ggml.Type, kvLen int) plan.Dispatch {
		return plan.RopeAttentionMatVecArgs{Type: ty, HeadDim: 64, NHead: 9, NKV: 3, M: 1, Ldq: 960, Ldo: 576,
			KVLen: kvLen, Pos0: kvLen - 1, Flags: plan.FlagCausal, Scale: 0.125, HeadStride: 4096 * 64, PosStride: 64,
			W: plan.Binding{Buf: 0}, Out: plan.Binding{Buf: 1}}.Dispatch()
	}
	names := func(ls []Launch) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Function)
		}
		return out
	}
	for _, kvLen := range []int{1, 20, 129, 1024} {
		q := d(ggml.Q8_0, kvLen)
		ls, err := LaunchFor(&q, &cuda, nil)
		require.NoError(t, err)
		require.Len(t, ls, 1, "%d keys", kvLen)
		l := ls[0]
		require.Equal(t, "rope_attention_mat_vec_a16", l.Function)
		require.Equal(t, [3]uint32{8, 9, 1}, l.Groups, "8 slices of 9 heads")
		nc := min(max(2, (uint32(kvLen)+31)/32), 16)
		require.Equal(t, uint32(32*16), l.Threads[0], "the chunks, and SIMD-groups for the product: 16")
		require.Equal(t, uint32(8), l.Tickets, "a word a slice")
		require.Equal(t, []Constant{{fcRopeAttentionMatVecW, 2}}, l.Constants)
		require.Equal(t, 4*(4+8*9*nc*3*64+9*576+7*576), l.Scratch, "the chunks' slots, the partial rows, the slices' att rows")
		// repacked weights: the constant says so
		require.NoError(t, ForLayouts([]Layout{{Type: ggml.Q8_0, K: 576}}, &q, ls))
		require.Equal(t, []Constant{{fcRopeAttentionMatVecW, 4}}, ls[0].Constants)
		// one slice: round 11's threadgroup a head
		ls, err = LaunchFor(&q, &one, nil)
		require.NoError(t, err)
		require.Equal(t, [3]uint32{1, 9, 1}, ls[0].Groups)
		require.Equal(t, uint32(1), ls[0].Tickets)
		require.Equal(t, 4*(4+9*nc*3*64+9*576), ls[0].Scratch, "the chunks' slots, then the partial rows")
	}
	split := d(ggml.Q8_0, 1500)
	ls, err := LaunchFor(&split, &cuda, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"rope_attention_ticket_f16", "rope_attention_mat_vec_o_q8_0"}, names(ls))
	require.NoError(t, ForLayouts([]Layout{{Type: ggml.Q8_0, K: 576}}, &split, ls))
	require.Equal(t, []string{"rope_attention_ticket_f16", "rope_attention_mat_vec_o_q8_0_rp"}, names(ls))
	// the 1B shape's 2048-wide output product takes mat_vec's launch rule,
	// its 8-bit-activation instance (Tuning.MatVecQ8K) included
	wide := plan.RopeAttentionMatVecArgs{Type: ggml.Q4_0, HeadDim: 64, NHead: 32, NKV: 8, M: 1, Ldq: 3072, Ldo: 2048,
		KVLen: 20, Pos0: 19, Flags: plan.FlagCausal, Scale: 0.125, HeadStride: 4096 * 64, PosStride: 64,
		W: plan.Binding{Buf: 0}, Out: plan.Binding{Buf: 1}}.Dispatch()
	ls, err = LaunchFor(&wide, &off, nil)
	require.NoError(t, err)
	require.Equal(t, "rope_attention_mat_vec_o_q4_0_q8x", ls[len(ls)-1].Function)
	require.NoError(t, ForLayouts([]Layout{{Type: ggml.Q4_0, K: 2048}}, &wide, ls))
	require.Equal(t, "rope_attention_mat_vec_o_q4_0_q8x_rp", ls[len(ls)-1].Function)
	noQ8 := off
	noQ8.MatVecQ8K = MatVecQ8Off
	ls, err = LaunchFor(&wide, &noQ8, nil)
	require.NoError(t, err)
	require.Equal(t, "rope_attention_mat_vec_o_q4_0", ls[len(ls)-1].Function, "8-bit activations off")
	// one wave of threadgroups where the GPU's size is known: 8 slices of
	// 9 heads fit 132 multiprocessors, of 32 heads (the 1B shape) not
	h200 := cuda
	h200.Cores = 132
	q := d(ggml.Q8_0, 20)
	ls, err = LaunchFor(&q, &h200, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"rope_attention_mat_vec_a16"}, names(ls), "72 threadgroups on 132")
	ls, err = LaunchFor(&wide, &h200, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"rope_attention_f16_a16", "rope_attention_mat_vec_o_q4_0_q8x"}, names(ls), "256 threadgroups on 132")
	short := d(ggml.F16, 20)
	ls, err = LaunchFor(&short, &cuda, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"rope_attention_f16_a16", "rope_attention_mat_vec_o_f16_a16"}, names(ls),
		"f16 weights with 16-byte rows: the product's own launch loads 16 bytes, the fold 2")
	ls, err = LaunchFor(&short, &off, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"rope_attention_f16_a16", "rope_attention_mat_vec_o_f16_a16"}, names(ls), "fold off")
	ls, err = LaunchFor(&short, &apple, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"rope_attention_f16", "rope_attention_mat_vec_o_f16"}, names(ls), "an Apple family")
	for _, l := range ls {
		require.Zero(t, l.Tickets, "the Metal host binds no ticket buffer")
	}
	// Layouts repacks the output weights the dispatch binds at slot 5
	var p plan.Plan
	wo := p.AddBuffer(plan.Buffer{Name: "wo", Kind: plan.BufWeights, Size: 576 * 612})
	x := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: 4 * 576})
	ps, _ := p.AddPass("decode")
	fused := d(ggml.Q8_0, 20)
	for i := range fused.Bind[:fused.NBind] {
		fused.Bind[i] = plan.Binding{Buf: plan.NoBuf}
	}
	fused.Bind[plan.SlotRopeAttentionMatVecW] = plan.Binding{Buf: wo}
	fused.Bind[plan.SlotRopeAttentionMatVecOut] = plan.Binding{Buf: x}
	ps.Add(fused)
	require.Equal(t, Layout{Type: ggml.Q8_0, K: 576}, Layouts(&p, &cuda)[wo])
	bf := d(ggml.BF16, 20)
	_, err = LaunchFor(&bf, &cuda, nil)
	require.ErrorContains(t, err, "not supported")
}
