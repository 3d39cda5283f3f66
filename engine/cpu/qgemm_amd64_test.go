package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
)

// addSIMDKernels adds the amd64 quantized GEMM kernels this CPU runs: the
// AVX2 one is tested on VNNI CPUs too, and the VNNI one on AMX CPUs.
func addSIMDKernels(ks map[string]qgemmTestKernel) {
	if hasAVX2 {
		ks["avx2"] = qgemmTestKernel{qgemmAVX2Tile, 31}
	}
	if hasVNNI {
		ks["vnni"] = qgemmTestKernel{qgemmVNNITile, 255}
	}
	if amxWorks() == nil {
		ks["amx"] = qgemmTestKernel{qgemmAMXTile, 255}
	}
}

// With the SIMD GEMM off, quantized products take the previous paths
// (sgemm on dequantized tiles, or the row-run dots: the AVX2 ones when the
// VNNI row kernels are switched off too), and still match the reference.
func TestQGemmOffPaths(t *testing.T) {
	pool := NewPool(0)
	defer pool.Close()
	defer useVNNI(hasVNNI)
	r := rand.New(rand.NewPCG(1, 4))
	for _, vnni := range []bool{true, false} {
		useVNNI(vnni)
		for _, noBLAS := range []bool{true, false} {
			mm := NewMatMul(pool)
			mm.qgemm, mm.noBLAS = qgemmOff, noBLAS
			for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
				checkMul(t, mm, r, typ, mulCase{n: 37, k: 96, m: 19, bias: true, res: true})
			}
		}
	}
}
