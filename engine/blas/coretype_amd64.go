//go:build linux

package blas

import "golang.org/x/sys/cpu"

// openBLASCore names the OpenBLAS kernel family this CPU can run, for
// $OPENBLAS_CORETYPE. OpenBLAS picks its kernels from the CPU's model
// number, and under hypervisors that report a generic model ("Intel Xeon
// Processor" on KVM) it falls back to its SSE3 Prescott kernels, which
// made Whisper's f32 products 1.7x slower on the dev VM. The features
// decide instead: every sgemm kernel newer than these two is the same
// code.
func openBLASCore() string {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL:
		return "SkylakeX"
	case x.HasAVX2 && x.HasFMA:
		return "Haswell"
	}
	return ""
}
