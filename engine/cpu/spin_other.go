//go:build !amd64

package cpu

// spinPause is a no-op where no pause instruction is wired in.
func spinPause() {}
