package cpu

import "github.com/harkapp/hark/engine/ggml"

// halfRow sets h[i] = ggml.FP32ToFP16(x[i]): a decode step's K and V rows
// into an f16 cache, on the caller between two barriers (issue #37). amd64
// replaces it with F16C's conversion where it gives the same bits
// (halfrow_amd64.go).
var halfRow = halfRowGeneric

func halfRowGeneric(h []uint16, x []float32) {
	h = h[:len(x)]
	for i, v := range x {
		h[i] = ggml.FP32ToFP16(v)
	}
}
