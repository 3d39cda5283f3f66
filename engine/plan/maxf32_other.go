//go:build !amd64

package plan

func maxF32(s []float32) float32 { return maxF32Go(s) }
