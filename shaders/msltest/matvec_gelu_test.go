package msltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// TestMatVecGELUOut runs MatVec with FlagGELUOut (out = gelu_erf(x·Wᵀ +
// bias): Whisper's MLP up product, issue #34) under the cuda family's
// tuning, weights repacked where it repacks them, against the float64
// product through exact GELU and against the CPU backend: odd sizes (37
// rows, float rows ending inside a chunk), one and three activation rows,
// and the 8-bit-activation mat-vec (k = 2048, one aligned row). On a
// device (HARK_MSLTEST_DEVICE) it runs the device's own tuning.
func TestMatVecGELUOut(t *testing.T) {
	be, tun := cudaTuning(t)
	tun.MatVecQ8KQ8_0 = tun.MatVecQ8K
	bt := be.WithTuning(tun)
	r := rand.New(rand.NewPCG(34, 41))
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0} {
		for _, tc := range []struct {
			k, m    int
			aligned bool
		}{{mxK(typ), 1, false}, {mxK(typ), 3, false}, {int(max(tun.MatVecQ8K, 2048)), 1, true}} {
			c, exact := productCaseLayout(t, r, plan.MatVec, typ, 37, tc.k, tc.m, false, false, tc.aligned)
			geluOut(r, c, exact)
			ls, err := shaders.LaunchFor(&c.d, &tun, nil)
			require.NoError(t, err)
			name := fmt.Sprintf("mat_vec gelu %s k=%d m=%d %s", typ, tc.k, tc.m, ls[0].Function)
			if !strings.HasSuffix(ls[0].Function, "_q8x") {
				checkOn(t, bt, name, typ, c, exact)
				continue
			}
			// the 8-bit activations: within the quantized products' bound
			got := runOn(t, bt, c)
			eExact, eCPU := relErr(got, exact), relErr(got, float64s(runOn(t, cpuShared, c)))
			t.Logf("%-60s exact %.2e  cpu %.2e", name, eExact, eCPU)
			require.LessOrEqual(t, eExact, mxCPUBound[typ], "%s: vs the exact product", name)
			require.LessOrEqual(t, eCPU, mxCPUBound[typ], "%s: vs the CPU backend", name)
		}
	}
}

// geluOut turns c (a MatVec or LayerNormMatVec with neither bias nor
// residual, exact its float64 result) into FlagGELUOut's with a bias:
// exact becomes gelu_erf(exact + bias) on the n columns of each row, the
// sentinels between rows untouched.
func geluOut(r *rand.Rand, c *mxCase, exact []float64) {
	a := plan.DecodeProduct(&c.d)
	bias := randF32(r, a.N, 1)
	c.bind(3, c.add(ggml.F32Bytes(bias), false), 0)
	if c.d.Kernel == plan.LayerNormMatVec {
		ln := plan.DecodeLayerNormMatVec(&c.d)
		ln.Flags = plan.FlagGELUOut
		c.d.P = ln.Dispatch().P
	} else {
		mv := plan.DecodeMatVec(&c.d)
		mv.Flags = plan.FlagGELUOut
		c.d.P = mv.Dispatch().P
	}
	for i := range a.M {
		for j := range a.N {
			v := exact[i*a.Ldo+j] + float64(bias[j])
			exact[i*a.Ldo+j] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
		}
	}
}
