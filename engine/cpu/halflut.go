package cpu

import "github.com/harkapp/hark/engine/ggml"

// halfLUT maps every f16 bit pattern to its float32 value: a table load is
// much cheaper than the branchy conversion in the attention inner loops.
var halfLUT = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = ggml.FP16ToFP32(uint16(i))
	}
	return &t
}()
