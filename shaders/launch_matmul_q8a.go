package shaders

import (
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// mat_mul with 8-bit activations (Tuning.MatMulMMQ; matmul_q8a.metal,
// cuda/native/mat_mul_mmq.cu): quantize_q8a, then the int8 product, both
// on the dispatch's scratch.

// Tile of mat_mul_q8a and mat_mul_mmq (Q8A_BM, Q8A_BN, Q8A_THREADS).
const (
	q8aBM, q8aBN = 64, 128
	q8aThreads   = 256
)

// MatMulMMQRows is the CUDA host's Tuning.MatMulMMQ with the sm_80
// module: the rows from which the int8 tensor-core product replaces
// mat_mul_mma's f16 one for q8_0, q4_0 and q5_0 weights. Measured where
// it wins (BENCHMARKS.md, "int8 tensor-core GEMM"): at 512 rows (a full
// prefill chunk) on the H200, pp512 2.1× on the Llama-3.2-1B shape and
// 1.14-1.19× on SmolLM2-135M's, q8_0 and q4_0. Fewer rows (short
// prompts, batched decode) were not measured against mat_mul_mma yet, so
// they keep it.
const MatMulMMQRows = 512

// q8aNames are the MSL twins, mmqNames the native kernels, per type.
var (
	q8aNames = map[ggml.Type]string{ggml.Q8_0: "mat_mul_q8a_q8_0", ggml.Q4_0: "mat_mul_q8a_q4_0", ggml.Q5_0: "mat_mul_q8a_q5_0"}
	mmqNames = map[ggml.Type]string{ggml.Q8_0: "mat_mul_mmq_q8_0", ggml.Q4_0: "mat_mul_mmq_q4_0", ggml.Q5_0: "mat_mul_mmq_q5_0"}
)

// q8aScratch is the scratch of a product's quantized activations: mp
// rows of k int8 codes, then k/32 float scales per row.
func q8aScratch(k, mp uint32) uint64 { return uint64(mp)*uint64(k) + 4*uint64(k/32)*uint64(mp) }

// launchMatMulQ8A returns the two launches of a mat_mul that takes 8-bit
// activations under t, or false.
func launchMatMulQ8A(d *plan.Dispatch, t *Tuning, n, k, m uint32) ([2]Launch, bool) {
	name, ok := q8aNames[d.Type]
	if !ok || t.MatMulMMQ == 0 || m < t.MatMulMMQ || k%32 != 0 {
		return [2]Launch{}, false
	}
	if t.MatMulMMA != 0 {
		name = mmqNames[d.Type]
	}
	mp := ceilDiv(m, q8aBM) * q8aBM
	scratch := q8aScratch(k, mp)
	if scratch > maxScratch {
		return [2]Launch{}, false
	}
	return [2]Launch{
		{Function: "quantize_q8a", Groups: [3]uint32{ceilDiv(k/32, 8), mp, 1}, Threads: [3]uint32{q8aThreads, 1, 1}, Scratch: uint32(scratch)},
		{Function: name, Groups: [3]uint32{ceilDiv(n, q8aBN), mp / q8aBM, 1}, Threads: [3]uint32{q8aThreads, 1, 1}, Scratch: uint32(scratch)},
	}, true
}
