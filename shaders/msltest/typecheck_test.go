package msltest

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/shaders"
	"github.com/harkapp/hark/shaders/msl"
)

func TestTypeCheckShaders(t *testing.T) {
	var srcs []msl.Source
	for _, name := range shaders.Files() {
		b, err := shaders.File(name)
		require.NoError(t, err)
		srcs = append(srcs, msl.Source{Name: name, Text: string(b)})
	}
	require.NoError(t, TypeCheck(srcs))
	b, err := os.ReadFile("testdata/selftest.metal")
	require.NoError(t, err)
	require.NoError(t, TypeCheck([]msl.Source{{Name: "selftest.metal", Text: string(b)}}))
}

// The checks the executor cannot make: address spaces must not mix.
func TestTypeCheckCatchesAddressSpaces(t *testing.T) {
	bad := map[string]string{
		"threadgroup to device": `
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    threadgroup float tile[32];
    device float* p = tile;
    p[i] = 1;
    out[i] = tile[i];
}`,
		"device to threadgroup parameter": `
static float first(threadgroup const float* p) { return p[0]; }
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = first(out);
}`,
		"write through constant": `
kernel void k(constant float* c [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    c[i] = 2;
}`,
		"vector width": `
kernel void k(device float4* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float4 v = float2(1, 2);
    out[i] = v;
}`,
	}
	for name, src := range bad {
		err := TypeCheck([]msl.Source{{Name: "bad.metal", Text: "#include <metal_stdlib>\nusing namespace metal;\n" + src}})
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "bad.metal", name)
	}
	good := `
#include <metal_stdlib>
using namespace metal;
static float first(threadgroup const float* p) { return p[0]; }
kernel void k(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    threadgroup float tile[32];
    tile[i % 32] = out[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[i] = first(tile) + float(n);
}`
	require.NoError(t, TypeCheck([]msl.Source{{Name: "good.metal", Text: good}}))
}
