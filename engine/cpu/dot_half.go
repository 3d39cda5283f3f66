package cpu

import (
	"encoding/binary"

	"github.com/harkapp/hark/engine/ggml"
)

// f16Table maps every half bit pattern to float32: block scales are read
// once per 32 or 256 elements, and a table load beats the branchy
// conversion in the inner loops.
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = ggml.FP16ToFP32(uint16(i))
	}
	return &t
}()

// f16At reads the little-endian half at b[0:2].
func f16At(b []byte) float32 { return f16Table[binary.LittleEndian.Uint16(b)] }
