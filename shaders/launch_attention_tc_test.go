package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// With Tuning.AttnMMA and the native modules loaded (the CUDA host with
// the sm_80 module sets both it and MatMulMMA), unsplit attention over
// rows of one sequence with head sizes that are multiples of 8 up to 128
// and no probs launches the tensor-core kernels: 32 rows (two warps) per
// block, the 64- or 128-dim variant by head size. Without a native module
// (MatMulMMA unset: the executor, HARK_CUDA_NATIVE=0) the same launches
// name the MSL twins, attention_mma16_*, with their dynamic threadgroup
// memory. Probs, other head sizes, beams and decode keep the MSL kernels;
// without the knob nothing changes.
func TestLaunchAttentionTensorCores(t *testing.T) {
	tc := TuningFor("cuda")
	tc.AttnMMA, tc.MatMulMMA = 1, MatMulMMARows
	twin := tc
	twin.MatMulMMA = 0
	base := plan.AttentionArgs{Type: ggml.F32, Probs: plan.None, HeadDim: 64, NHead: 6, NKV: 6, M: 1500, Ldq: 384, Ldo: 384, KVLen: 1500, HeadStride: 64, PosStride: 384}
	for _, c := range []struct {
		name       string
		f          func(a *plan.AttentionArgs)
		want, twin string
		rows       uint32
		smem       uint32 // the twin's
	}{
		{"encoder", func(*plan.AttentionArgs) {}, "attention_mma_tc_f32", "attention_mma16_f32", 32, 13440},
		{"prefill f16 GQA", func(a *plan.AttentionArgs) {
			a.Type, a.NKV, a.M, a.KVLen, a.Pos0, a.Flags = ggml.F16, 2, 100, 140, 40, plan.FlagCausal
		}, "attention_mma_tc_f16", "attention_mma16_f16", 32, 13440},
		{"128-dim heads", func(a *plan.AttentionArgs) { a.HeadDim, a.Ldq, a.Ldo, a.M = 128, 768, 768, 100 }, "attention_mma_tc_hd128_f32", "attention_mma16_hd128_f32", 32, 21632},
		{"8-dim heads", func(a *plan.AttentionArgs) { a.HeadDim, a.Ldq, a.Ldo, a.M = 8, 48, 48, 64 }, "attention_mma_tc_f32", "attention_mma16_f32", 32, 13440},
		{"probs", func(a *plan.AttentionArgs) { a.Probs, a.Ldp = plan.Binding{}, 1500 }, "attention_mma_f32", "attention_mma_f32", 16, 0},
		{"head 72", func(a *plan.AttentionArgs) { a.HeadDim, a.Ldq, a.Ldo = 72, 432, 432 }, "attention_mma_tc_hd128_f32", "attention_mma16_hd128_f32", 32, 21632},
		{"head 68", func(a *plan.AttentionArgs) { a.HeadDim, a.Ldq, a.Ldo = 68, 408, 408 }, "attention_f32", "attention_f32", 0, 0},
		{"head 136", func(a *plan.AttentionArgs) { a.HeadDim, a.Ldq, a.Ldo = 136, 816, 816 }, "attention_f32", "attention_f32", 0, 0},
		{"beams", func(a *plan.AttentionArgs) { a.M, a.Flags = 5, plan.FlagPerSeqRows }, "attention_ticket_f32_a16", "attention_ticket_f32_a16", 0, 0},
	} {
		a := base
		c.f(&a)
		d := a.Dispatch()
		for _, r := range []struct {
			tun  Tuning
			want string
			smem uint32
		}{{tc, c.want, 0}, {twin, c.twin, c.smem}} {
			ls, err := LaunchFor(&d, &r.tun, nil)
			require.NoError(t, err, c.name)
			require.Equal(t, r.want, ls[0].Function, c.name)
			if c.rows != 0 {
				require.Equal(t, [3]uint32{1, uint32(a.NHead), (uint32(a.M) + c.rows - 1) / c.rows}, ls[0].Groups, c.name)
				require.Equal(t, 64, int(ls[0].Threads[0]), c.name) // two SIMD-groups either way
				require.Equal(t, r.smem, ls[0].Threadgroup, c.name)
			}
		}
		off := TuningFor("cuda")
		ls, err := LaunchFor(&d, &off, nil)
		require.NoError(t, err, c.name)
		require.NotContains(t, ls[0].Function, "_tc", c.name)
		require.NotContains(t, ls[0].Function, "mma16", c.name)
	}
}
