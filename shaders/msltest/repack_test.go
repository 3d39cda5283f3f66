package msltest

import (
	"fmt"
	"math/rand/v2"
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
