package cpu

import (
	"encoding/binary"

	"github.com/harkapp/hark/engine/ggml"
)

// quantQ8_0Row encodes x (whole blocks of 32) as Q8_0 blocks, byte for
// byte as ggml.Quantize does: the activation format of q8_0, q4_0 and
// q5_0 products. A decode step quantizes each product's input row on the
// caller while the other workers wait for the job (issue #37: 12% of the
// 16-thread decode profile), so where the CPU has AVX2 a block is scaled
// and rounded in vector registers. The assembly takes the blocks whose
// arithmetic it repeats exactly (finite values, a normal or zero scale);
// ggml's code takes the others (NaN, infinities, a subnormal scale).
func quantQ8_0Row(x []float32, dst []byte) {
	const qk, bb = ggml.QK8_0, ggml.BlockQ8_0Bytes
	for ; len(x) >= qk; x, dst = x[qk:], dst[bb:] {
		if q8Block != nil {
			if d, ok := q8Block(&x[0], &dst[2]); ok {
				binary.LittleEndian.PutUint16(dst, ggml.FP32ToFP16(d))
				continue
			}
		}
		if err := ggml.Quantize(ggml.Q8_0, x[:qk], dst[:bb]); err != nil {
			panic("cpu: " + err.Error()) // sizes are whole blocks: a bug
		}
	}
}

// q8Block, where this CPU has it, writes the 32 quants of the block at x
// to q and returns its scale, or reports false without writing (the block
// takes ggml's code).
var q8Block func(x *float32, q *byte) (d float32, ok bool)
