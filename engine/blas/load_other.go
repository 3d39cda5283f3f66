//go:build !((linux || darwin || freebsd || netbsd) && !android)

package blas

import (
	"errors"
	"unsafe"
)

func open() (string, error) {
	return "", errors.New("blas: dynamic loading is not supported on this platform")
}

func callSgemm(f *sgemmArgs, a, b, c unsafe.Pointer) {}

func callSetThreads(n int) {}

func coreName() string { return "" }
