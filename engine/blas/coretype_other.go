//go:build !(linux && amd64)

package blas

// openBLASCore: OpenBLAS's own choice stands off x86-64 Linux.
func openBLASCore() string { return "" }
