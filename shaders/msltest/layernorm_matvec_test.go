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

// TestLayerNormMatVec runs layer_norm_mat_vec (matvec.metal's MV_LN: each
// SIMD-group takes its row's mean and variance in a prologue) against a
// float64 LayerNorm and product and the CPU backend, under the executor's
// default tuning and the cuda family's (repacked q8_0, f16 by 16-byte
// loads, aligned activations), or a device's own: its three weight types;
// Whisper tiny's shapes (k = 384: the QKV, cross Q and MLP up products,
// one row and five beams); odd n; rows from 37 wide (a partial chunk) to
// 1568 (past the prologue's two chunks a lane: the further chunks read
// again; 1060 ends there in a partial chunk); ten rows (two threadgroups' worth of batch rows); the rows off
// zero mean; bias and residual; and FlagGELUOut (the MLP up product's).
func TestLayerNormMatVec(t *testing.T) {
	def := TestBackend(t)
	cbe, ctun := cudaTuning(t)
	r := rand.New(rand.NewPCG(34, 55))
	for _, typ := range []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0} {
		for _, tc := range []struct {
			n, k, m        int
			withBR, gelu   bool
			aligned, alias bool
		}{
			{1152, 384, 1, true, false, true, false}, {1536, 384, 5, false, true, true, false},
			{37, mxK(typ), 1, false, false, false, false}, {29, 1568, 3, true, false, false, true},
			{21, 1056, 10, true, false, true, false}, {45, 1024, 2, false, true, false, false},
			{23, 1060, 2, true, false, false, false}, // a partial chunk past the first 1024 (f32, f16)
		} {
			if tc.k%typ.BlockSize() != 0 {
				continue
			}
			c, exact := productCaseLayout(t, r, plan.LayerNormMatVec, typ, tc.n, tc.k, tc.m, tc.withBR, tc.alias, tc.aligned)
			if tc.gelu {
				geluOut(r, c, exact)
			}
			for _, run := range []struct {
				be  plan.Backend
				tun shaders.Tuning
			}{{def, shaders.Default}, {cbe, ctun}} {
				ls, err := shaders.LaunchFor(&c.d, &run.tun, nil)
				require.NoError(t, err)
				checkOn(t, run.be, fmt.Sprintf("%s n=%d k=%d m=%d gelu=%v %s", typ, tc.n, tc.k, tc.m, tc.gelu, ls[0].Function), typ, c, exact)
			}
		}
	}
}
