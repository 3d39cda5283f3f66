package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The native modules a GPU loads follow its compute capability: none
// below 8.0, the sm_80 module from 8.0 on (Ampere, Ada, Hopper), newest
// architecture first when there are several.
func TestModulesFor(t *testing.T) {
	names := func(ms []nativeModule) []string {
		var s []string
		for _, m := range ms {
			s = append(s, m.name)
		}
		return s
	}
	require.Empty(t, modulesFor(75, nativeModules))
	require.Empty(t, modulesFor(79, nativeModules))
	for _, cc := range []int{80, 86, 89, 100, 120} {
		require.Equal(t, []string{"sm80"}, names(modulesFor(cc, nativeModules)), "sm_%d", cc)
	}
	require.Equal(t, []string{"sm90a", "sm80"}, names(modulesFor(90, nativeModules)), "sm_90a runs on 9.0 only")
	three := []nativeModule{{name: "a", minCompute: 80}, {name: "b", minCompute: 90}, {name: "c", minCompute: 100}}
	require.Equal(t, []string{"b", "a"}, names(modulesFor(90, three)))
	require.Equal(t, []string{"c", "b", "a"}, names(modulesFor(120, three)))
	require.Equal(t, []string{"a"}, names(modulesFor(89, three)))
}

// The sm_80 module holds the tensor-core mat_mul, conv1d and attention variants the launch rule
// names, at sm_80 and PTX ISA 7.0, with mma.sync.
func TestNativeModuleEntries(t *testing.T) {
	e := ptxEntries(kernelsSM80PTX())
	for _, n := range []string{"mat_mul_mma_f16", "mat_mul_mma_q8_0", "mat_mul_mma_q4_0", "mat_mul_big_f16", "mat_mul_big_f16_h",
		"conv1d_mma_f16", "conv1d_mma_q8_0", "conv1d_mma_q4_0",
		"attention_mma_tc_f32", "attention_mma_tc_f16", "attention_mma_tc_hd128_f32", "attention_mma_tc_hd128_f16"} {
		require.True(t, e[n], n)
	}
	require.Contains(t, kernelsSM80PTX(), "\n.target sm_80\n")
	require.Contains(t, kernelsSM80PTX(), "\n.version 7.0\n")
	require.Contains(t, kernelsSM80PTX(), "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
	require.Contains(t, kernelsSM80PTX(), "cp.async.cg.shared.global")
	require.Contains(t, kernelsSM80PTX(), "ldmatrix.sync.aligned.m8n8.x4.shared.b16")
	require.False(t, ptxEntries(kernelsPTX())["mat_mul_mma_f16"], "the base module has no tensor-core entries")

	e = ptxEntries(kernelsSM90aPTX())
	require.True(t, e["mat_mul_wgmma_f16"])
	require.Contains(t, kernelsSM90aPTX(), "\n.target sm_90a\n")
	require.Contains(t, kernelsSM90aPTX(), "\n.version 8.0\n")
	require.Contains(t, kernelsSM90aPTX(), "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16")
	require.NotContains(t, kernelsSM90aPTX(), ".local", "no local memory (the fragments and accumulators stay in registers)")
}

// On an sm_90 GPU (the fake) the sm_90a and sm_80 modules load beside
// the base module, their entries come from them and the rest from the
// base module; on sm_75, or with NoNative, only the base module loads.
func TestFakeNativeModules(t *testing.T) {
	f := withFake(t, 90)
	loads := f.count_("cuModuleLoadDataEx")
	b, err := New(Options{})
	require.NoError(t, err)
	require.Equal(t, loads+3, f.count_("cuModuleLoadDataEx"))
	require.Equal(t, []string{"sm90a", "sm80"}, b.dev.info.Native)
	require.Contains(t, b.dev.info.String(), "native modules sm90a,sm80")
	mod := func(name string) uintptr { h, _ := b.dev.moduleOf(name); return h }
	require.NotEqual(t, b.dev.mod, mod("mat_mul_mma_f16"))
	require.NotEqual(t, mod("mat_mul_mma_f16"), mod("mat_mul_wgmma_f16"))
	require.NotZero(t, b.tuning.MatMulWGMMA)
	require.Equal(t, b.dev.mod, mod("mat_mul_f16"))
	unloads := f.count_("cuModuleUnload")
	b.Close()
	require.Equal(t, unloads+3, f.count_("cuModuleUnload"))

	for _, o := range []Options{{NoNative: true}, {}} {
		if !o.NoNative {
			f.compute = 75
		}
		loads = f.count_("cuModuleLoadDataEx")
		b, err = New(o)
		require.NoError(t, err)
		require.Equal(t, loads+1, f.count_("cuModuleLoadDataEx"))
		require.Empty(t, b.dev.info.Native)
		require.Zero(t, b.tuning.MatMulMMA)
		require.Zero(t, b.tuning.AttnMMA)
		require.Zero(t, b.tuning.MatMulWGMMA)
		b.Close()
	}
}
