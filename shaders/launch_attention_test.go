package shaders

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

func dispatch(k plan.Kernel, ty ggml.Type, nbind int, p ...uint32) plan.Dispatch {
	d := plan.Dispatch{Kernel: k, Type: ty, NBind: uint8(nbind)}
	copy(d.P[:], p)
	return d
}

// Bad dispatches of the norm, RoPE, attention, argmax and sample rules
// return errors (never a panic, never a launch the kernel would misread).
func TestLaunchRulesReject(t *testing.T) {
	bad := map[string]plan.Dispatch{
		"rms stride":        dispatch(plan.RMSNorm, ggml.F32, 3, 64, 4, 63, 64, 0, 1),
		"layer stride":      dispatch(plan.LayerNorm, ggml.F32, 4, 64, 2, 64, 10),
		"rope odd dims":     dispatch(plan.Rope, ggml.F32, 2, 64, 2, 1, 128, 0, 0, 63),
		"rope dims > head":  dispatch(plan.Rope, ggml.F32, 2, 64, 2, 1, 128, 0, 0, 66),
		"rope mode":         dispatch(plan.Rope, ggml.F32, 2, 64, 2, 1, 128, 0, 1),
		"rope head 0":       dispatch(plan.Rope, ggml.F32, 2, 0, 2, 1, 128),
		"rope stride":       dispatch(plan.Rope, ggml.F32, 2, 64, 2, 2, 100),
		"rope_kv type":      dispatch(plan.RopeKV, ggml.Q8_0, 4, 64, 2, 1, 1, 256),
		"rope_kv stride":    dispatch(plan.RopeKV, ggml.F16, 4, 64, 2, 1, 2, 200),
		"rope_kv heads":     dispatch(plan.RopeKV, ggml.F16, 4, 64, 1<<31, 1<<31, 1, 256),
		"attn gqa":          dispatch(plan.Attention, ggml.F16, 4, 64, 6, 4, 1, 384, 384, 10),
		"attn nkv 0":        dispatch(plan.Attention, ggml.F16, 4, 64, 6, 0, 1, 384, 384, 10),
		"attn head 512":     dispatch(plan.Attention, ggml.F32, 4, 512, 1, 1, 1, 512, 512, 10),
		"attn type":         dispatch(plan.Attention, ggml.Q4_0, 4, 64, 1, 1, 1, 64, 64, 10),
		"attn kvLen":        dispatch(plan.Attention, ggml.F32, 4, 64, 1, 1, 1, 64, 64, 1<<23),
		"attn strides":      dispatch(plan.Attention, ggml.F32, 4, 64, 2, 1, 2, 100, 128, 10),
		"argmax empty":      dispatch(plan.Argmax, ggml.F32, 2, 0, 1, 0),
		"argmax stride":     dispatch(plan.Argmax, ggml.F32, 2, 100, 2, 99),
		"sample empty":      dispatch(plan.Sample, ggml.F32, 4, 0),
		"sample vocabulary": dispatch(plan.Sample, ggml.F32, 4, 1<<21),
	}
	probs := dispatch(plan.Attention, ggml.F32, 5, 64, 1, 1, 1, 64, 64, 10, 0, 0, 0, 64, 64, 0, 9)
	probs.Bind[4].Buf = 0
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
	decode := dispatch(plan.Attention, ggml.F16, 4, 64, 32, 8, 1, 2048, 2048, 1000, 999, plan.FlagCausal, 0, 64, 512*64, 0)
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

	am := dispatch(plan.Argmax, ggml.F32, 2, 32000, 3, 32000)
	ls, err = LaunchFor(&am, &Default, nil)
	require.NoError(t, err)
	require.Len(t, ls, 2)
	require.Equal(t, [3]uint32{8, 3, 1}, ls[0].Groups)
	require.Equal(t, uint32(4*(2+2*3*8)), ls[0].Scratch)

	for _, d := range []plan.Dispatch{
		dispatch(plan.RMSNorm, ggml.F32, 3, 64, 0),
		dispatch(plan.Rope, ggml.F32, 2, 64, 2, 0),
		dispatch(plan.Attention, ggml.F32, 4, 64, 2, 2, 0),
		dispatch(plan.Argmax, ggml.F32, 2, 10, 0),
	} {
		ls, err := LaunchFor(&d, &Default, nil)
		require.NoError(t, err)
		require.Empty(t, ls, d.Kernel.String())
	}
}
