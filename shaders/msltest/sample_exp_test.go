package msltest

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
	"github.com/harkapp/hark/shaders/msl"
)

// The sampler's integer exp (smp_exp_fx) against float64 math.Exp: within
// one unit of 2^-43 over [-32, 0], where a float32 exp would be off by up
// to ~1e-7·2^43 ≈ 5e5 units; and bit for bit the CPU kernel's
// (plan.SampleExpFx), so both backends' masses are the same integers.
func TestSampleExpFixedPoint(t *testing.T) {
	var srcs []msl.Source
	for _, name := range []string{"kargs.h", "common.metal", "sample.metal"} {
		b, err := shaders.File(name)
		require.NoError(t, err)
		srcs = append(srcs, msl.Source{Name: name, Text: string(b)})
	}
	srcs = append(srcs, msl.Source{Name: "exp_probe.metal", Text: `
kernel void exp_probe(device const float* d [[buffer(0)]], device ulong* out [[buffer(1)]],
                      uint i [[thread_position_in_grid]]) {
    out[i] = smp_exp_fx(d[i]);
}
`})
	lib, err := Open(srcs)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(13, 14))
	const n = 4096
	d := make([]float32, n)
	for i := range d {
		switch {
		case i < 8:
			d[i] = []float32{0, float32(math.Copysign(0, -1)), -1e-30, -1e-9, -0.5, -1, -31.9, float32(math.Inf(-1))}[i]
		case i < 2048:
			d[i] = -float32(r.Float64() * 33)
		default:
			d[i] = -float32(math.Exp(-r.Float64() * 40)) // near 0
		}
	}
	out := make([]uint64, n)
	var bufs [16]unsafe.Pointer
	bufs[0], bufs[1] = unsafe.Pointer(&d[0]), unsafe.Pointer(&out[0])
	require.NoError(t, lib.Run(&shaders.Launch{Function: "exp_probe", Groups: [3]uint32{n / 64, 1, 1}, Threads: [3]uint32{64, 1, 1}}, &bufs))
	worst := 0.0
	for i, x := range d {
		want := math.Exp(float64(x)) * (1 << 43)
		e := math.Abs(float64(out[i]) - want)
		require.LessOrEqual(t, e, 1.0, "d=%v: got %d want %.3f", x, out[i], want)
		require.Equal(t, plan.SampleExpFx(x), out[i], "d=%v: the CPU's mass", x)
		worst = max(worst, e)
	}
	t.Logf("smp_exp_fx: worst error %.3f units of 2^-43", worst)
}
