package cpu

// The AVX2 paths, where the CPU has AVX2, of the kernels whose tests
// compare every path with float64 (TestGELUErfRow, TestSoftmaxScaledPaths,
// TestMaxScaledPaths, TestAttnKeyKernels, TestAttnHalfKernels).
func init() {
	if !hasAVX2 {
		return
	}
	geluErfRowPaths["avx2"] = geluErfRowFast
	softmaxPaths["avx2"] = softmaxScaledFast
	maxScaledPaths["avx2"] = maxScaledFast
	attnKeyPaths["avx2"] = attnKeyPath{keyScoresF32Fast, addValuesF32Fast}
	attnHalfPaths["avx2"] = attnHalfPath{keyScoresF16Fast, addValuesF16Fast}
}
