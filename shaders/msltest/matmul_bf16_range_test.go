package msltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// TestMatMulTensorCoresBF16Range: bf16 weights whose 32-element blocks sit
// anywhere in bf16's range (2^-120 to 2^100) and spread over 2^30 inside a
// block, with zeros, so the tensor-core kernel's power-of-two block scale
// (cuda/native/mat_mul_mma.cu, wbf16) is exercised at its edges. Each
// output is held to 1e-5 of its own row's Σ|w·x| (a row of tiny weights
// is checked at its own scale, not the largest row's), on the device's
// kernel (mat_mul_mma_bf16 on a GPU with the sm_80 module, mat_mul_bf16 in
// the executor) and on the CPU backend.
func TestMatMulTensorCoresBF16Range(t *testing.T) {
	be, tun := deviceTuning(t)
	const n, k, m = 40, 96, 32
	r := rand.New(rand.NewPCG(35, 7))
	exps := []int{-120, -60, -20, 0, 20, 60, 100}
	w := make([]float32, n*k)
	for j := range n {
		for b := range k / 32 {
			base := exps[(j+3*b)%len(exps)]
			for e := range 32 {
				if r.IntN(8) == 0 {
					continue // zeros
				}
				v := math.Ldexp(1+r.Float64(), base-r.IntN(31))
				if r.IntN(2) == 0 {
					v = -v
				}
				w[j*k+32*b+e] = float32(v)
			}
		}
	}
	q := make([]byte, 2*n*k)
	require.NoError(t, ggml.Quantize(ggml.BF16, w, q))
	deq := make([]float32, n*k)
	require.NoError(t, ggml.Dequantize(ggml.BF16, q, deq))
	x := randF32(r, m*k, 1)
	c := &mxCase{d: plan.Dispatch{Kernel: plan.MatMul, Type: ggml.BF16, Grid: [3]uint32{n, m, 1}}}
	c.bind(0, c.add(q, true), 0)
	c.bind(1, c.add(ggml.F32Bytes(x), false), 0)
	ob := c.add(ggml.F32Bytes(filled(m*n, mxSentinel)), false)
	c.bind(2, ob, 0)
	c.out = int(ob)
	c.noBind(3)
	c.noBind(4)
	c.d.P = plan.MatVecArgs{N: n, K: k, M: m, Ldx: k, Ldo: n, Ldr: n}.Dispatch().P

	ls, err := shaders.LaunchFor(&c.d, &tun, nil)
	require.NoError(t, err)
	want := "mat_mul_bf16"
	if tun.MatMulMMA != 0 {
		want = "mat_mul_mma_bf16"
	}
	require.Equal(t, want, ls[0].Function)

	check := func(name string, got []float32) {
		worst := 0.0
		for i := range m {
			for j := range n {
				var s, mag float64
				for e := range k {
					p := float64(x[i*k+e]) * float64(deq[j*k+e])
					s, mag = s+p, mag+math.Abs(p)
				}
				d := math.Abs(float64(got[i*n+j]) - s)
				require.False(t, math.IsNaN(d) || math.IsInf(d, 0), "%s: row %d col %d: %g against %g", name, i, j, got[i*n+j], s)
				if mag > 0 {
					worst = max(worst, d/mag)
				} else {
					require.Zero(t, d, "%s: row %d col %d of zeros", name, i, j)
				}
			}
		}
		t.Logf("%s: worst |got-exact| / Σ|w·x| %.2e", name, worst)
		require.LessOrEqual(t, worst, 1e-5, name)
	}
	check(ls[0].Function, runOn(t, be.WithTuning(tun), c))
	check("cpu", runOn(t, cpuShared, c))
}
