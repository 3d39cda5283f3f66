package cpu

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// SIMD names the widest vector instructions this CPU offers the kernels:
// "avx512", "avx2" (with FMA), "neon" (every arm64 CPU) or "" (none of
// these: portable loops). The model advice estimates speed from it before
// any model has run.
func SIMD() string {
	switch {
	case runtime.GOARCH == "arm64":
		return "neon"
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasFMA:
		return "avx512"
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return "avx2"
	}
	return ""
}
