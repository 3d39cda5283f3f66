//go:build !((linux || darwin || freebsd || netbsd) && !android)

package blas

import "errors"

func open() (string, error) {
	return "", errors.New("blas: dynamic loading is not supported on this platform")
}
