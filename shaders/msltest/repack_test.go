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
// (shaders/repack.go: mat_vec's five forms, LayerNormMatVec's q8_0, mat_mul, embed) on q8_0 and
// q4_0 weights uploaded repacked, as the CUDA host does (the cuda family's
// Tuning.Repack), against the exact product and the CPU backend. Row widths
// of 5, 9 and 18 blocks give scale runs of 10, 18 and 36 bytes, each padded
// to a different multiple of 16; 29 rows leave ragged row groups and tiles.
// On a device (HARK_MSLTEST_DEVICE) it runs the device's own tuning, whose
// mat_mul from 16 rows is the native mat_mul_mma on sm_80 GPUs.
func TestRepackedWeights(t *testing.T) {
	be, tun := cudaTuning(t)
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
			for _, kern := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec, plan.LayerNormMatVec} {
				if kern == plan.LayerNormMatVec && !plan.LayerNormMatVecType(typ) {
					continue
				}
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

// TestAligned16Loads runs the mat-vecs of a host that promises 16-byte
// aligned buffers (the cuda family's Tuning.Align16): f16 weights by the
// "_a16" instances (two 16-byte loads a chunk), and the activations (x, g
// or up) four 16-byte loads a chunk where their offsets and row strides
// allow (function constant 22), for f16 and the repacked q8_0 and q4_0,
// against the exact product and the CPU backend: widths of 10 to 96
// chunks, 29 rows (ragged row groups), one and three activation rows, the
// activations aligned or at 4 and 8 bytes with odd strides; k = 168 (half a
// chunk left over) keeps the element-aligned f16 instance and scalar
// activation loads under the same tuning. On a device (HARK_MSLTEST_DEVICE)
// it runs the device's own tuning.
func TestAligned16Loads(t *testing.T) {
	be, tun := cudaTuning(t)
	require.Equal(t, uint32(shaders.Aligned16), tun.Align16, "the tuning under test promises aligned buffers")
	r := rand.New(rand.NewPCG(34, 7))
	xaligned := 0
	for _, typ := range []ggml.Type{ggml.F16, ggml.Q8_0, ggml.Q4_0} {
		for _, k := range []int{160, 288, 576, 1536, 168} {
			if k%typ.BlockSize() != 0 {
				continue
			}
			for _, kern := range []plan.Kernel{plan.MatVec, plan.RMSNormMatVec, plan.SiLUMulMatVec, plan.GELUMulMatVec, plan.LayerNormMatVec} {
				if kern == plan.LayerNormMatVec && !plan.LayerNormMatVecType(typ) {
					continue
				}
				for _, m := range []int{1, 3} {
					for _, aligned := range []bool{false, true} {
						c, exact := productCaseLayout(t, r, kern, typ, 29, k, m, m > 1, false, aligned)
						name := fmt.Sprintf("%s %s k=%d m=%d aligned=%v", kern, typ, k, m, aligned)
						ls, err := shaders.LaunchFor(&c.d, &tun, nil)
						require.NoError(t, err, name)
						if typ == ggml.F16 {
							require.Equal(t, k%16 == 0, strings.HasSuffix(ls[0].Function, "_a16"), "%s: %s", name, ls[0].Function)
						}
						xa := uint32(0)
						for _, fc := range ls[0].Constants {
							if fc.Index == 22 {
								xa = fc.Value
							}
						}
						require.Equal(t, aligned && k%16 == 0, xa == 1, "%s: function constant 22", name)
						xaligned += int(xa)
						checkOn(t, be, name, typ, c, exact)
					}
				}
			}
		}
	}
	require.NotZero(t, xaligned)
}

// cudaTuning is the backend and tuning the CUDA host's layouts are tested
// under: a device's own, or the executor with the cuda family.
func cudaTuning(t *testing.T) (*Backend, shaders.Tuning) {
	be, tun := deviceTuning(t)
	if be.Device() == nil {
		tun = shaders.TuningFor("cuda")
		be = be.WithTuning(tun)
	}
	return be, tun
}
