//go:build !amd64

package cpu

func addSIMDKernels(map[string]qgemmTestKernel) {
}
