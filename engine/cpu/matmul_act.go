package cpu

import (
	"encoding/binary"
	"math"

	"github.com/harkapp/hark/engine/ggml"
)

// Activation quantizers: one row of x into ggml's Q8_0, Q8_1 or Q8_K block
// layout, rounding as ggml's reference quantize_row_* functions do, so the
// quantized dot products reproduce ggml's results.

func quantizeQ8_0(x []float32, dst []byte) {
	for b := 0; b < len(x)/32; b++ {
		xs, o := x[b*32:b*32+32], dst[b*34:b*34+34]
		var amax float32
		for _, v := range xs {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(o, ggml.FP32ToFP16(d))
		for j, v := range xs {
			o[2+j] = byte(int8(math.Round(float64(v * id))))
		}
	}
}

func quantizeQ8_1(x []float32, dst []byte) {
	for b := 0; b < len(x)/32; b++ {
		xs, o := x[b*32:b*32+32], dst[b*36:b*36+36]
		var amax float32
		for _, v := range xs {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		var sum int32
		for j, v := range xs {
			q := int8(math.Round(float64(v * id)))
			o[4+j] = byte(q)
			sum += int32(q)
		}
		binary.LittleEndian.PutUint16(o, ggml.FP32ToFP16(d))
		binary.LittleEndian.PutUint16(o[2:], ggml.FP32ToFP16(float32(sum)*d))
	}
}

func quantizeQ8K(x []float32, dst []byte) {
	for b := 0; b < len(x)/256; b++ {
		xs, o := x[b*256:b*256+256], dst[b*q8KBytes:(b+1)*q8KBytes]
		var amax, mx float32
		for _, v := range xs {
			if a := abs32(v); a > amax {
				amax, mx = a, v
			}
		}
		if amax == 0 {
			clear(o)
			continue
		}
		iscale := -127 / mx
		for j, v := range xs {
			q := min(127, int32(math.RoundToEven(float64(iscale*v))))
			o[4+j] = byte(int8(q))
		}
		for j := 0; j < 16; j++ {
			var s int32
			for _, q := range o[4+16*j : 4+16*j+16] {
				s += int32(int8(q))
			}
			binary.LittleEndian.PutUint16(o[260+2*j:], uint16(int16(s)))
		}
		binary.LittleEndian.PutUint32(o, math.Float32bits(1/iscale))
	}
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }
