package plan

import "golang.org/x/sys/cpu"

// maxF32x32 folds s[:n] (n a multiple of 32) with VMAXPS into its largest
// entry and reports whether any entry is NaN. VMAXPS's result for NaN and
// for a pair of zeros depends on the operands' order, so maxF32 redoes
// those cases with the builtin.
//
//go:noescape
func maxF32x32(s *float32, n int) (m float32, nan bool)

// useMaxAVX: the CPU has AVX; tests turn it off to compare.
var useMaxAVX = cpu.X86.HasAVX

func maxF32(s []float32) float32 {
	n32 := len(s) &^ 31
	if !useMaxAVX || n32 == 0 {
		return maxF32Go(s)
	}
	m, nan := maxF32x32(&s[0], n32)
	if nan || m == 0 {
		return maxF32Go(s)
	}
	for _, v := range s[n32:] {
		m = max(m, v)
	}
	return m
}
