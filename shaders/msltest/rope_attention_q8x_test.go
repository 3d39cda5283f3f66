package msltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// TestRopeAttentionMatVecQ8Activations runs RopeAttentionMatVec at the
// Llama-3.2-1B shape's width (32 heads of 64: a 2048-wide output product)
// unfolded, so the product is its own launch and takes the
// 8-bit-activation instance (rope_attention_mat_vec_o_<type>_q8x[_rp]):
// q8_0 and q4_0, repacked and in the file's layout, and with the grid
// capped at two threadgroups (Tuning.MatVecQ8Groups). x + att·Woᵀ + bias
// is checked over the run's own att against a float64 emulation of the
// 8-bit arithmetic (q8xSums) and against the exact product; att against
// the CPU backend.
func TestRopeAttentionMatVecQ8Activations(t *testing.T) {
	be, tun := cudaTuning(t)
	tun.MatVecQ8KQ8_0 = tun.MatVecQ8K
	tun.AttnFoldO = 1 // the product in its own launch
	require.LessOrEqual(t, tun.MatVecQ8K, uint32(2048), "the tuning under test takes the 8-bit-activation mat-vecs")
	defer func() { kitTune = nil }()
	const hd, nHead, nKV, kvLen = 64, 32, 8, 20
	n, w := nHead*hd, (nHead+2*nKV)*hd
	for ci, cf := range []struct {
		ty             ggml.Type
		repack, capped bool
		bias           bool
	}{{ggml.Q8_0, true, false, false}, {ggml.Q4_0, true, false, true}, {ggml.Q8_0, false, false, true},
		{ggml.Q4_0, false, false, false}, {ggml.Q8_0, true, true, false}, {ggml.Q4_0, true, true, true}} {
		tn := tun
		if !cf.repack {
			tn.Repack = 1
		}
		if cf.capped {
			tn.Cores, tn.MatVecQ8Groups = 2, 1
		}
		kitTune = &tn
		what := fmt.Sprintf("%s repack=%v capped=%v bias=%v", cf.ty, cf.repack, cf.capped, cf.bias)
		r := rand.New(rand.NewPCG(34, uint64(700+ci)))
		qkv := kitF32(kitRand(r, w, 1))
		hs := kvLen * hd
		kc, vc := kitF16(kitRand(r, nKV*hs, 1)), kitF16(kitRand(r, nKV*hs, 1))
		x := kitRand(r, n, 1)
		var bias []float32
		if cf.bias {
			bias = kitRand(r, n, 0.1)
		}
		wo, deq := randWeightsK(t, r, cf.ty, n, n)
		a := plan.RopeAttentionMatVecArgs{Type: cf.ty, HeadDim: hd, NHead: nHead, NKV: nKV, M: 1, Ldq: w, Ldo: n,
			KVLen: kvLen, Pos0: kvLen - 1, Flags: plan.FlagCausal, Scale: float32(1 / math.Sqrt(hd)),
			HeadStride: hs, PosStride: hd, Mode: plan.RopeNeoX}
		init := ramvInit{qkv: qkv, k: kc, v: vc, freqs: kitF32(ropeFreqs(hd, 10000)), w: wo, x: kitF32(x), bias: bias}
		used := map[string]bool{}
		got := ramvRun(t, be.WithTuning(tn), a, init, used)
		fn := "rope_attention_mat_vec_o_" + map[ggml.Type]string{ggml.Q8_0: "q8_0", ggml.Q4_0: "q4_0"}[cf.ty] + "_q8x"
		if cf.repack {
			fn += "_rp"
		}
		require.True(t, used[fn], "%s: no %s in %v", what, fn, used)
		ref := ramvRun(t, cpuShared, a, init, nil)
		kitCompare(t, ggml.BytesF32(ref.att), ggml.BytesF32(got.att), 2e-5, what+": att")
		att := ggml.BytesF32(got.att)
		sums := q8xSums(wo, cf.ty, n, n, att)
		emu, exact := make([]float64, n), make([]float64, n)
		for row := range n {
			s := float64(x[row])
			if bias != nil {
				s += float64(bias[row])
			}
			emu[row] = s + sums[row]
			for e := range n {
				s += float64(deq[row*n+e]) * float64(att[e])
			}
			exact[row] = s
		}
		gx := ggml.BytesF32(got.x)
		eEmu, eExact := relErr(gx, emu), relErr(gx, exact)
		t.Logf("%-45s emulated %.2e  exact %.2e", what, eEmu, eExact)
		require.LessOrEqual(t, eEmu, mxQ8Tight, "%s: vs the emulated 8-bit product", what)
		require.LessOrEqual(t, eExact, mxCPUBound[cf.ty], "%s: vs the exact product", what)
	}
}
