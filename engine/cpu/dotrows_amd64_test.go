package cpu

import "github.com/harkapp/hark/engine/ggml"

// The AVX2 multi-row kernels, where the CPU has AVX2 (TestRowsMEqualRows,
// TestMulRowsMReference).
func init() {
	if !hasAVX2 {
		return
	}
	rowsMPaths[ggml.Q8_0]["avx2"] = rowsMPath{rowsQ8_0Fast, rowsMQ8_0Fast}
}
