package shaders

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// A plan that asks for float activations gets neither the int8 GEMM nor
// the 8-bit-activation mat-vecs under the CUDA host's tuning; other
// plans keep them, and nothing else in the tuning moves.
func TestTuningForPlan(t *testing.T) {
	cu := TuningFor("cuda")
	cu.MatMulMMA, cu.MatMulMMQ = MatMulMMARows, MatMulMMQRows
	require.Equal(t, cu, cu.ForPlan(&plan.Plan{}))
	fl := cu.ForPlan(&plan.Plan{FloatActivations: true})
	want := cu
	want.MatMulMMQ, want.MatVecQ8K, want.MatVecQ8KQ8_0 = 0, MatVecQ8Off, MatVecQ8Off
	require.Equal(t, want, fl)

	gemm := plan.MatMulArgs{Type: ggml.Q8_0, N: 300, K: 384, M: 1500}.Dispatch() // the kit encoder's shape
	ls, err := LaunchFor(&gemm, &cu, nil)
	require.NoError(t, err)
	require.Equal(t, "quantize_q8a", ls[0].Function)
	ls, err = LaunchFor(&gemm, &fl, nil)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.True(t, strings.HasPrefix(ls[0].Function, "mat_mul_mma_q8_0"), ls[0].Function)

	mv := plan.RMSNormMatVecArgs{Type: ggml.Q4_0, N: 3072, K: 2048, M: 1, Ldx: 2048}.Dispatch() // decode, where the cuda family quantizes x
	ls, err = LaunchFor(&mv, &cu, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"rms_norm_quantize_q8x", "mat_vec_q4_0_q8p"}, []string{ls[0].Function, ls[1].Function})
	ls, err = LaunchFor(&mv, &fl, nil)
	require.NoError(t, err)
	require.Equal(t, "rms_norm_mat_vec_q4_0", ls[0].Function, "the float-activation mat-vec")
}
