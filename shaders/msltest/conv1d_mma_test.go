package msltest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/shaders"
)

// TestConv1DTensorCores: conv1d at the shapes of its tensor-core variant
// (conv1d_mma_<type> in cuda/native/mat_mul_mma.cu, issue #35) against the
// exact convolution and the CPU backend, as TestConv1DAllTypes. On a CUDA
// GPU with the sm_80 module the device's own tuning picks conv1d_mma from
// 16 output steps; in the executor the same cases run conv1d_<type>, the
// MSL kernel of the same blocking (mm_core over the im2col view), so the
// two are held to the same bounds. Odd sizes: cout 9, 70 and 130 (partial
// 64-wide tiles), 15 to 100 output steps (partial 32-row tiles), cin·kw
// 111, 120 and 240 (partial k steps), both input layouts, strides 1 and
// 2; 15 output steps stay on conv1d everywhere.
func TestConv1DTensorCores(t *testing.T) {
	be, tun := deviceTuning(t)
	mma := tun.MatMulMMA != 0
	r := rand.New(rand.NewPCG(35, 3))
	for _, c := range []struct {
		typ ggml.Type
		s   convShape
		cm  bool
	}{
		{ggml.F16, convShape{80, 3, 70, 37, 1, 1}, true},   // Whisper's conv1, scaled down
		{ggml.F16, convShape{40, 3, 130, 37, 2, 1}, false}, // conv2
		{ggml.F16, convShape{37, 3, 70, 100, 1, 1}, false},
		{ggml.F16, convShape{16, 3, 9, 29, 2, 1}, true}, // 15 steps
		{ggml.F16, convShape{16, 5, 70, 40, 1, 0}, true},
		{ggml.Q8_0, convShape{32, 3, 70, 45, 1, 1}, false},
		{ggml.Q8_0, convShape{32, 3, 70, 45, 2, 1}, true},
		{ggml.Q4_0, convShape{32, 3, 130, 45, 1, 1}, true},
		{ggml.Q4_0, convShape{64, 3, 70, 33, 2, 1}, false},
	} {
		cs, exact := convCaseShape(t, r, c.typ, c.cm, true, c.s)
		ls, err := shaders.LaunchFor(&cs.d, &tun, nil)
		require.NoError(t, err)
		tout := (c.s.T+2*c.s.pad-c.s.kw)/c.s.stride + 1
		require.Equal(t, mma && tout >= shaders.MatMulMMARows, strings.HasPrefix(ls[0].Function, "conv1d_mma_"), ls[0].Function)
		checkOn(t, be, fmt.Sprintf("%s %+v channel-major=%v", ls[0].Function, c.s, c.cm), c.typ, cs, exact)
	}
}
