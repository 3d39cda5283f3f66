package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
)

// TestHalfRowBitExact: the f16 row conversion gives FP32ToFP16's bits on
// every 997th float32 bit pattern (NaNs with payloads, infinities,
// subnormals included) and on every value half way between two
// neighbouring halves and one ulp either side of it (the ties to even),
// in rows of odd lengths so the portable tail runs too.
func TestHalfRowBitExact(t *testing.T) {
	var x []float32
	for b := uint64(0); b < 1<<32; b += 997 {
		x = append(x, math.Float32frombits(uint32(b)))
	}
	for h := range uint32(0x7c00) { // every finite half and the next one up
		lo := float64(ggml.FP16ToFP32(uint16(h)))
		hi := float64(ggml.FP16ToFP32(uint16(h + 1)))
		mid := float32((lo + hi) / 2)
		b := math.Float32bits(mid)
		for _, m := range []uint32{b - 1, b, b + 1} {
			v := math.Float32frombits(m)
			x = append(x, v, -v)
		}
	}
	for _, n := range []int{7, 8, 13, 64, 1001} {
		for lo := 0; lo < len(x); lo += n {
			row := x[lo:min(lo+n, len(x))]
			want, got := make([]uint16, len(row)), make([]uint16, len(row))
			halfRowGeneric(want, row)
			halfRow(got, row)
			for i := range row {
				if want[i] != got[i] {
					require.Equal(t, want[i], got[i], "x=%g (bits %#x)", row[i], math.Float32bits(row[i]))
				}
			}
		}
	}
}

func BenchmarkHalfRow(b *testing.B) {
	x, h := make([]float32, 384), make([]uint16, 384)
	for i := range x {
		x[i] = float32(i%97)*0.37 - 17
	}
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			halfRowGeneric(h, x)
		}
	})
	b.Run("row", func(b *testing.B) {
		for b.Loop() {
			halfRow(h, x)
		}
	})
}
