package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

func TestMatrixLaunchGeometry(t *testing.T) {
	d := plan.Dispatch{Kernel: plan.MatVec, Type: ggml.Q4_K, P: [16]uint32{4097, 512, 10}}
	lns, err := LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, []Launch{{
		Function:  "mat_vec_q4_k",
		Groups:    [3]uint32{(4097 + 7) / 8, 2, 1}, // 4 rows × 2 SIMD-groups; 8 x rows per group
		Threads:   [3]uint32{64, 1, 1},
		Constants: []Constant{{fcMatVecRows, 4}, {fcMatVecBatch, 8}},
	}}, lns)

	d = plan.Dispatch{Kernel: plan.SiLUMulMatVec, Type: ggml.F16, P: [16]uint32{10, 37, 1}}
	lns, err = LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, "silu_mul_mat_vec_f16", lns[0].Function)

	d = plan.Dispatch{Kernel: plan.MatMul, Type: ggml.IQ4_NL, P: [16]uint32{65, 64, 33}}
	lns, err = LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, Launch{Function: "mat_mul_iq4_nl", Groups: [3]uint32{2, 2, 1}, Threads: [3]uint32{128, 1, 1}}, lns[0])

	// Whisper's first convolution: 80 mel channels, 3000 frames, kw 3, pad 1
	d = plan.Dispatch{Kernel: plan.Conv1D, Type: ggml.F16, P: [16]uint32{80, 384, 3000, 3, 1, 1, plan.FlagChannelMaj, 3000, 384}}
	lns, err = LaunchFor(&d, &Default, nil)
	require.NoError(t, err)
	require.Equal(t, Launch{Function: "conv1d_f16", Groups: [3]uint32{6, 94, 1}, Threads: [3]uint32{128, 1, 1}}, lns[0])

	d = plan.Dispatch{Kernel: plan.Embed, Type: ggml.Q6_K, P: [16]uint32{768, 5, 768}}
	lns, err = LaunchFor(&d, &Tuning{MaxThreads: 1024}, nil) // zero knobs: defaults
	require.NoError(t, err)
	require.Equal(t, Launch{Function: "embed_q6_k", Groups: [3]uint32{5, 1, 1}, Threads: [3]uint32{128, 1, 1}}, lns[0])
}

func TestMatrixLaunchEmpty(t *testing.T) {
	for _, d := range []plan.Dispatch{
		{Kernel: plan.MatVec, Type: ggml.F32, P: [16]uint32{0, 16, 1}},
		{Kernel: plan.MatMul, Type: ggml.Q8_0, P: [16]uint32{16, 32, 0}},
		{Kernel: plan.Embed, Type: ggml.Q8_0, P: [16]uint32{32, 0}},
	} {
		lns, err := LaunchFor(&d, &Default, nil)
		require.NoError(t, err, d.Kernel)
		require.Empty(t, lns, d.Kernel)
	}
}

func TestMatrixLaunchErrors(t *testing.T) {
	for _, tc := range []struct {
		d    plan.Dispatch
		want string
	}{
		{plan.Dispatch{Kernel: plan.MatVec, Type: ggml.Q8_1, P: [16]uint32{4, 32, 1}}, "not supported"},
		{plan.Dispatch{Kernel: plan.MatMul, Type: ggml.Type(999), P: [16]uint32{4, 32, 1}}, "not supported"},
		{plan.Dispatch{Kernel: plan.MatVec, Type: ggml.Q4_K, P: [16]uint32{4, 128, 1}}, "block size 256"},
		{plan.Dispatch{Kernel: plan.RMSNormMatVec, Type: ggml.F32, P: [16]uint32{4, 0, 1}}, "positive multiple"},
		{plan.Dispatch{Kernel: plan.Embed, Type: ggml.Q4_0, P: [16]uint32{33, 2}}, "block size 32"},
		{plan.Dispatch{Kernel: plan.Conv1D, Type: ggml.F16, P: [16]uint32{0, 4, 10, 3, 1, 1}}, "empty convolution"},
		{plan.Dispatch{Kernel: plan.Conv1D, Type: ggml.F16, P: [16]uint32{4, 4, 10, 3, 0, 1}}, "empty convolution"},
		{plan.Dispatch{Kernel: plan.Conv1D, Type: ggml.F16, P: [16]uint32{4, 4, 1, 5, 1, 1}}, "does not fit"},
		{plan.Dispatch{Kernel: plan.Conv1D, Type: ggml.Q8_0, P: [16]uint32{5, 4, 10, 3, 1, 1}}, "block size 32"},
	} {
		_, err := LaunchFor(&tc.d, &Default, nil)
		require.ErrorContains(t, err, tc.want, "%s %s", tc.d.Kernel, tc.d.Type)
	}
}

func TestMatrixLaunchNoAlloc(t *testing.T) {
	dst := make([]Launch, 0, 4)
	ds := []plan.Dispatch{
		{Kernel: plan.MatVec, Type: ggml.Q4_0, P: [16]uint32{4096, 4096, 1}},
		{Kernel: plan.MatMul, Type: ggml.F16, P: [16]uint32{384, 384, 1500}},
		{Kernel: plan.Embed, Type: ggml.Q8_0, P: [16]uint32{4096, 1}},
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := range ds {
			dst, _ = LaunchFor(&ds[i], &Default, dst[:0])
		}
	})
	require.Zero(t, allocs)
}

func TestMatrixKernelsRegistered(t *testing.T) {
	missing := map[plan.Kernel]bool{}
	for _, k := range Missing() {
		missing[k] = true
	}
	for _, k := range matrixKernels {
		require.False(t, missing[k], k)
	}
}
