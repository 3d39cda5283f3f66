package msltest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// mxQ8A bounds mat_mul with 8-bit activations against the CPU's quantized
// GEMM, relative as mxTight: both quantize the activations alike and sum
// each block's codes exactly, so they differ by float rounding of the
// per-block scaling (and, where the CPU kernel fuses, its fma); a wrong
// code, block, tile or tail is off by orders of magnitude more.
const mxQ8A = 1e-5

// TestMatMulInt8: mat_mul of q8_0, q4_0 and q5_0 weights with 8-bit
// activations (Tuning.MatMulMMQ = 16: quantize_q8a, then in the executor
// the MSL twin mat_mul_q8a_<type>, on a CUDA GPU with the sm_80 module the
// int8 tensor-core mat_mul_mmq_<type>), in the file's layout and repacked
// (q8_0, q4_0: the "_rp" instances), against the CPU's quantized GEMM
// (cpu.Options.QuantGEMM, the reference of 8-bit activations) to mxQ8A and
// the exact product to the activation quantization's bound. Odd sizes: n
// 9, 70, 130, 300 (partial 128-row weight tiles), m 16 to 130 (partial
// 64-row activation tiles), k 64 to 1024 (multiples of 32 only), bias and
// residual (aliased or not), activation rows at odd offsets and strides.
func TestMatMulInt8(t *testing.T) {
	be, tun := deviceTuning(t)
	native := tun.MatMulMMA != 0
	ref := cpu.New(cpu.Options{QuantGEMM: true})
	defer ref.Close()
	r := rand.New(rand.NewPCG(35, 8))
	for _, rp := range []uint32{1, shaders.RepackRows} {
		qt := tun
		qt.MatMulMMQ, qt.Repack = 16, rp
		qbe := be.WithTuning(qt)
		for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
			for i, sh := range []struct{ n, k, m int }{{70, 96, 16}, {130, 160, 45}, {300, 96, 100}, {9, 64, 70}, {130, 1024, 130}} {
				c, exact := productCaseK(t, r, plan.MatMul, typ, sh.n, sh.k, sh.m, true, i%2 == 1)
				ls, err := shaders.LaunchFor(&c.d, &qt, nil)
				require.NoError(t, err)
				want := "mat_mul_q8a_" + typ.String()
				if native {
					want = "mat_mul_mmq_" + typ.String()
				}
				require.Len(t, ls, 2)
				require.Equal(t, "quantize_q8a", ls[0].Function)
				require.Equal(t, want, ls[1].Function)
				name := fmt.Sprintf("%s repack=%d n=%d k=%d m=%d", want, rp, sh.n, sh.k, sh.m)
				got := runOn(t, qbe, c)
				cpu64 := float64s(runOn(t, ref, c))
				eExact, eCPU := relErr(got, exact), relErr(got, cpu64)
				t.Logf("%-50s exact %.2e  cpu(8-bit) %.2e", name, eExact, eCPU)
				if eCPU > mxQ8A {
					logOff(t, got, cpu64)
				}
				require.LessOrEqual(t, eCPU, mxQ8A, "%s: vs the CPU's quantized GEMM", name)
				require.LessOrEqual(t, eExact, mxCPUBound[typ], "%s: vs exact product", name)
			}
		}
	}
}
