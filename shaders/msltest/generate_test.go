package msltest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/shaders/msl"
)

// The generator's textual rewrites on the forms kernels use, and its
// errors for forms it does not support.
func TestGenerateForms(t *testing.T) {
	src := `#include <metal_stdlib>
using namespace metal;
// kernel void commented_out(device float* x [[buffer(0)]]) {}
/* kernel void also_commented(device float* x [[buffer(0)]]) {} */
constant bool fc_flag [[function_constant(5)]];
constant float fc_scale [[function_constant(6)]];
struct pair_t { float a, b; };
template <typename T, int N>
kernel void tmpl(device T* out [[buffer(0)]],
                 threadgroup float* dyn [[threadgroup(0)]],
                 ushort2 tid [[thread_position_in_threadgroup]],
                 uint3 grid [[threadgroups_per_grid]]) {
    threadgroup float2 tile[4][N * 2];
    threadgroup pair_t pr;
    threadgroup atomic_uint cnt;
    tile[tid.y % 4][tid.x % (N * 2)] = float2(dyn[0], float(grid.x));
    pr.a = fc_flag ? fc_scale : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[tid.x] = T(tile[0][0].x + pr.a);
}
typedef decltype(tmpl<float, 4>) tmpl_t;
template [[host_name("tmpl_f32_4")]] kernel tmpl_t tmpl<float, 4>;
template [[host_name("tmpl_i32_2")]] kernel void tmpl<int, 2>(device int*, threadgroup float*, ushort2, uint3);
`
	unit, names, err := generate([]msl.Source{{Name: "forms.metal", Text: src}})
	require.NoError(t, err)
	require.Equal(t, []string{"tmpl_f32_4", "tmpl_i32_2"}, names)
	require.Contains(t, unit, "threadgroup float2 (&tile)[4][N * 2] = *(threadgroup float2(*)[4][N * 2])__msl::msl_tg_alloc(")
	require.Contains(t, unit, "threadgroup pair_t& pr = ")
	require.Contains(t, unit, "__msl::make<float2>(dyn[0]")
	require.Contains(t, unit, "fc_flag = __msl::fc_cast<bool>(v[5]);")
	require.Contains(t, unit, "fc_scale = __msl::fc_cast<float>(v[6]);")
	require.NotContains(t, unit, "commented_out")
	require.NotContains(t, unit, "[[")
	require.NoError(t, TypeCheck([]msl.Source{{Name: "forms.metal", Text: src}}))

	bad := map[string]string{
		"no attribute": "kernel void k(device float* x) {}",
		"attribute":    "kernel void k(device float* x [[buffer(0)]], uint i [[stage_in]]) {}",
		"buffer index": "kernel void k(device float* x [[buffer(16)]]) {}",
		"tg index":     "kernel void k(threadgroup float* x [[threadgroup(1)]]) {}",
		"host name":    `template [[host_name("x")]] kernel void nothing<float>(device float*);`,
		"twice":        "kernel void k(device float* x [[buffer(0)]]) {}\nkernel void k(device float* y [[buffer(0)]]) {}",
	}
	for name, s := range bad {
		_, _, err := generate([]msl.Source{{Name: "bad.metal", Text: s}})
		require.Error(t, err, name)
	}
}
