package cpu

import "github.com/harkapp/hark/engine/ggml"

// The AVX2 multi-row kernels, where the CPU has AVX2 (TestRowsMEqualRows,
// TestRowsFMEqualDotF, TestMulRowsMReference).
func init() {
	if !hasAVX2 {
		return
	}
	rowsMPaths[ggml.Q8_0]["avx2"] = rowsMPath{rows: rowsQ8_0Fast, m: rowsMQ8_0Fast, prep: prepScales, prepN: 1}
	rowsMPaths[ggml.Q4_0] = map[string]rowsMPath{"avx2": {rows: rowsQ4_0Fast, m: rowsMQ4_0Fast, prep: prepQ4_0, prepN: prepQ4_0N}}
	rowsMPaths[ggml.F16]["avx2"] = rowsMPath{dotF: dotF16Fast, fm: rowsFMF16Fast}
	rowsMPaths[ggml.F32]["avx2"] = rowsMPath{dotF: func(w []byte, x []float32) float32 { return dotF32Fast(f32View(w, len(x)), x) }, fm: rowsFMF32Fast}
}
