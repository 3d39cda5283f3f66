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

// TestRepackedWeights runs every kernel with a repacked-weights instance
// (shaders/repack.go: mat_vec's four forms, mat_mul, embed) on q8_0 and
// q4_0 weights uploaded repacked, as the CUDA host does (the cuda family's
// Tuning.Repack), against the exact product and the CPU backend. Row widths
// of 5, 9 and 18 blocks give scale runs of 10, 18 and 36 bytes, each padded
// to a different multiple of 16; 29 rows leave ragged row groups and tiles.
// On a device (HARK_MSLTEST_DEVICE) it runs the device's own tuning, whose
// mat_mul from 16 rows is the native mat_mul_mma on sm_80 GPUs.
func TestRepackedWeights(t *testing.T) {
	be, tun := deviceTuning(t)
	if be.Device() == nil {
		tun = shaders.TuningFor("cuda")
		be = be.WithTuning(tun)
	}
	require.Equal(t, uint32(shaders.RepackRows), tun.Repack, "the tuning under test repacks")
	r := rand.New(rand.NewPCG(34, 5))
	for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
		for _, k := range []int{160, 288, 576} {
			var cases []struct {
				name  string
				c     *mxCase
				exact []float64
			}
			add := func(name string, c *mxCase, exact []float64) {
				cases = append(cases, struct {
					name  string
					c     *mxCase
					exact []float64
				}{fmt.Sprintf("%s %s k=%d", name, typ, k), c, exact})
			}
			for _, kern := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec} {
				c, exact := productCaseK(t, r, kern, typ, 29, k, 3, true, false)
				add(kern.String()+" m=3", c, exact)
			}
			c, exact := productCaseK(t, r, plan.MatVec, typ, 29, k, 1, false, false)
			add("mat_vec m=1", c, exact)
			for _, m := range []int{5, 20} {
				c, exact := productCaseK(t, r, plan.MatMul, typ, 70, k, m, true, false)
				add(fmt.Sprintf("mat_mul m=%d", m), c, exact)
			}
			c, exact = embedCase(t, r, typ, k, true)
			add("embed", c, exact)
			for _, tc := range cases {
				p, _ := tc.c.plan()
				l := shaders.Layouts(p, &tun)
				require.True(t, l[tc.c.d.Bind[0].Buf].Repacked(), "%s: weights not repacked", tc.name)
				checkOn(t, be, tc.name, typ, tc.c, tc.exact)
			}
		}
	}
}

// TestAligned16F16Weights runs the f16 mat-vecs of a host that promises
// 16-byte aligned weights (the cuda family's Tuning.Align16): the "_a16"
// instances, two 16-byte loads a chunk, against the exact product and the
// CPU backend, at widths of 10 to 96 chunks and 29 rows (ragged row
// groups); k = 168 (half a chunk left over) keeps the element-aligned
// instance under the same tuning. On a device (HARK_MSLTEST_DEVICE) it runs
// the device's own tuning.
func TestAligned16F16Weights(t *testing.T) {
	be, tun := deviceTuning(t)
	if be.Device() == nil {
		tun = shaders.TuningFor("cuda")
		be = be.WithTuning(tun)
	}
	require.Equal(t, uint32(shaders.Aligned16), tun.Align16, "the tuning under test promises aligned weights")
	r := rand.New(rand.NewPCG(34, 7))
	for _, k := range []int{160, 288, 576, 1536, 168} {
		for _, kern := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec} {
			for _, m := range []int{1, 3} {
				c, exact := productCaseK(t, r, kern, ggml.F16, 29, k, m, m > 1, false)
				name := fmt.Sprintf("%s f16 k=%d m=%d", kern, k, m)
				ls, err := shaders.LaunchFor(&c.d, &tun, nil)
				require.NoError(t, err, name)
				require.Equal(t, k%16 == 0, strings.HasSuffix(ls[0].Function, "_a16"), "%s: %s", name, ls[0].Function)
				checkOn(t, be, name, ggml.F16, c, exact)
			}
		}
	}
}
