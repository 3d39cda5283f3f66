package msltest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// TestMatMulTensorCores: mat_mul at the shapes of the tensor-core variant
// (cuda/native/mat_mul_mma.cu, issue #35) against the exact product and
// the CPU backend with mxTight / mxCPUBound, as TestMatMulAllTypes. On a
// CUDA GPU ($HARK_MSLTEST_DEVICE=cuda, sm_80 or newer) the device's own
// tuning picks mat_mul_mma_<type> from 16 rows, as the CUDA host does;
// in the executor the same cases run mat_mul_<type>, the MSL kernel with
// the same blocking (32×64 tiles, 4 SIMD-groups of 16×32, k steps of 32),
// so the native kernel and its Metal twin are held to the same bounds.
// Odd sizes: n 70 and 130 (partial 64-row tiles), m 16, 45 and 100
// (partial 32-row tiles), k 37 for f16 and bf16 (a partial k step) and 96
// (three blocks) for q8_0 and q4_0; m 15 stays on mat_mul everywhere.
// bf16 weights enter the f16 tensor cores scaled by a power of two per
// 32-element block (wbf16): TestMatMulTensorCoresBF16Range spreads a
// block's magnitudes over the whole bf16 range.
func TestMatMulTensorCores(t *testing.T) {
	be, tun := deviceTuning(t)
	tun.MatMulMMQ = 0 // float activations; the int8 products: TestMatMulInt8
	be = be.WithTuning(tun)
	mma := tun.MatMulMMA != 0 // the device loads the native tensor-core kernels
	r := rand.New(rand.NewPCG(35, 1))
	for _, typ := range []ggml.Type{ggml.F16, ggml.BF16, ggml.Q8_0, ggml.Q4_0} {
		for _, sh := range []struct{ n, m int }{{70, 16}, {70, 45}, {130, 100}, {9, 15}} {
			c, exact := productCase(t, r, plan.MatMul, typ, sh.n, sh.m, true, typ == ggml.F16)
			ls, err := shaders.LaunchFor(&c.d, &tun, nil)
			require.NoError(t, err)
			native := strings.HasPrefix(ls[0].Function, "mat_mul_mma_")
			require.Equal(t, mma && sh.m >= shaders.MatMulMMARows, native, ls[0].Function)
			checkOn(t, be, fmt.Sprintf("%s n=%d m=%d", ls[0].Function, sh.n, sh.m), typ, c, exact)
		}
		// rows on 16-byte boundaries (the kernel's vector loads)
		c, exact := alignedMatMul(t, r, typ, 70, 160, 40)
		checkOn(t, be, fmt.Sprintf("%s aligned n=70 k=160 m=40", typ), typ, c, exact)
	}
}

// alignedMatMul is a MatMul case whose weight rows and activation rows
// start on 16-byte boundaries (x at offset 0, ldx = k, k a multiple of
// 32), so the tensor-core kernel takes its 16-byte load paths; no bias
// or residual.
func alignedMatMul(t *testing.T, r *rand.Rand, typ ggml.Type, n, k, m int) (*mxCase, []float64) {
	q, w := randWeights(t, r, typ, n, k)
	x := randF32(r, m*k, 1)
	out := filled(m*n, mxSentinel)
	c := &mxCase{d: plan.Dispatch{Kernel: plan.MatMul, Type: typ, Grid: [3]uint32{uint32(n), uint32(m), 1}}}
	c.bind(0, c.add(q, true), 0)
	c.bind(1, c.add(ggml.F32Bytes(x), false), 0)
	ob := c.add(ggml.F32Bytes(out), false)
	c.bind(2, ob, 0)
	c.out = int(ob)
	c.noBind(3)
	c.noBind(4)
	c.d.P = plan.MatVecArgs{N: n, K: k, M: m, Ldx: k, Ldo: n, Ldr: n}.Dispatch().P
	exact := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for e := range k {
				s += float64(x[i*k+e]) * float64(w[j*k+e])
			}
			exact[i*n+j] = s
		}
	}
	return c, exact
}

// deviceTuning is the test backend with its device's own tuning (on a CUDA
// GPU: the native tensor-core knobs set only where the sm_80 module
// loaded), or the executor with shaders.Default.
func deviceTuning(t *testing.T) (*Backend, shaders.Tuning) {
	be := TestBackend(t)
	tun := shaders.Default
	if d, ok := be.Device().(interface{ Tuning() shaders.Tuning }); ok {
		tun = d.Tuning()
		if tun.MatMulMMA == 0 && tun.AttnMMA == 0 { // HARK_CUDA_NATIVE=0, or a GPU before sm_80
			t.Logf("%s loads no tensor-core module: checked on the translated kernels only", be.Device().Name())
		}
	}
	return be.WithTuning(tun), tun
}

// TestMatMulBigTensorCores: f16 mat_mul at the shapes of the large-tile
// variants (cuda/native/mat_mul_big.cu: 128×128 tiles, weights through a
// 3-step cp.async ring, ldmatrix; mat_mul_wgmma.cu: the same tiles on
// sm_90a's wgmma, k steps of 64 through a 6-stage ring that producer
// warpgroups fill and mbarriers hand over) with Tuning.MatMulBig
// = 1, so small products take them: n 130 and 300 (partial 128-row weight
// tiles), m 16, 100 and 260 (partial activation tiles), k 37 (not a
// multiple of 8: the weights' element loads, unaligned activation rows),
// 200 (cp.async, a partial last k step, more steps than the big ring),
// 1000 unaligned (16 wgmma steps through the element loads) and 4096
// aligned (128 and 64 steps). Their MSL twins (matmul_t128.metal:
// mat_mul_t128_f16, _f16_h and _wg_f16, the same tiles, SIMD-group
// sub-tiles, k steps and f16 operands) run everywhere, with MatMulMMA
// unset (no native module): in the executor and, translated, on a GPU;
// on a CUDA GPU whose tuning loads the native kernels the same cases then
// run mat_mul_big_f16, _h, and mat_mul_wgmma_f16 where the GPU loaded the
// sm_90a module. The split variants (float activations) are held to
// mxTight like every mat_mul; the f16-activation ones to mxHalf against
// the exact product and the float-activation CPU backend, which a wrong
// element, tile or tail still breaks by orders of magnitude.
func TestMatMulBigTensorCores(t *testing.T) {
	be, tun := deviceTuning(t)
	r := rand.New(rand.NewPCG(35, 4))
	type variant struct {
		want  string
		split bool // float activations (hi + lo): mxTight
		tune  func(*shaders.Tuning)
	}
	big := func(bt *shaders.Tuning) { bt.MatMulBigHalf, bt.MatMulWGMMA = 0, 0 }
	half := func(bt *shaders.Tuning) { bt.MatMulBigHalf, bt.MatMulWGMMA = 1, 0 }
	wg := func(bt *shaders.Tuning) { bt.MatMulBigHalf, bt.MatMulWGMMA = 0, 1 }
	twin := tun
	twin.MatMulMMA = 0
	type run struct {
		tun      shaders.Tuning
		variants []variant
	}
	runs := []run{{twin, []variant{{"mat_mul_t128_f16", true, big}, {"mat_mul_t128_f16_h", false, half}, {"mat_mul_t128_wg_f16", false, wg}}}}
	if tun.MatMulMMA != 0 { // the device loads the native tensor-core kernels
		native := []variant{{"mat_mul_big_f16", true, big}, {"mat_mul_big_f16_h", false, half}}
		if tun.MatMulWGMMA != 0 {
			native = append(native, variant{"mat_mul_wgmma_f16", false, wg})
		}
		runs = append(runs, run{tun, native})
	}
	for _, rn := range runs {
		for _, v := range rn.variants {
			bt := rn.tun
			bt.MatMulBig = 1
			v.tune(&bt)
			bbe := be.WithTuning(bt)
			for _, sh := range []struct {
				n, k, m int
				aligned bool
			}{{130, 37, 100, false}, {300, 200, 16, false}, {300, 200, 260, true}, {130, 1000, 70, false}, {130, 4096, 140, true}} {
				var c *mxCase
				var exact []float64
				if sh.aligned {
					c, exact = alignedMatMul(t, r, ggml.F16, sh.n, sh.k, sh.m)
				} else {
					c, exact = productCaseK(t, r, plan.MatMul, ggml.F16, sh.n, sh.k, sh.m, true, false)
				}
				ls, err := shaders.LaunchFor(&c.d, &bt, nil)
				require.NoError(t, err)
				require.Equal(t, v.want, ls[0].Function)
				name := fmt.Sprintf("%s n=%d k=%d m=%d", ls[0].Function, sh.n, sh.k, sh.m)
				if v.split {
					checkOn(t, bbe, name, ggml.F16, c, exact)
					continue
				}
				got := runOn(t, bbe, c)
				e, ec := relErr(got, exact), relErr(got, float64s(runOn(t, cpuShared, c)))
				t.Logf("%-40s exact %.2e  cpu %.2e", name, e, ec)
				require.LessOrEqual(t, e, mxHalf, "%s: f16 activations vs exact product", name)
				require.LessOrEqual(t, ec, mxHalf, "%s: f16 activations vs float-activation CPU", name)
			}
		}
	}
}

// mxHalf bounds mat_mul_big_f16_h (activations rounded to f16 once:
// ~2^-12 of Σ|w·x| in the mean) against the exact product, relative as
// mxTight.
const mxHalf = 2e-3
