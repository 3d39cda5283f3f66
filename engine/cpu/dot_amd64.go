package cpu

import (
	"encoding/binary"
	"math"

	"github.com/harkapp/hark/engine/ggml"
	"golang.org/x/sys/cpu"
)

//go:noescape
func dotF32AVX2(a, b *float32, n int) float32

//go:noescape
func dotF16AVX2(w *uint16, x *float32, n int) float32

//go:noescape
func dotQ8_0AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4_0AVX2(w, x *byte, nb int) float32

//go:noescape
func dotQ4KAVX2(w, x *byte, nb int, sc *int16, d *float32) float32

// hasAVX2 gates the assembly; without it the portable kernels stay. x/sys
// has no F16C flag; every AVX2+FMA CPU (Haswell, Piledriver and later) has F16C.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if !hasAVX2 {
		return
	}
	dotF32 = dotF32Fast
	kinds[ggml.F16].dotF = dotF16Fast
	kinds[ggml.Q8_0].dotQ = dotQ8_0Fast
	kinds[ggml.Q4_0].dotQ = dotQ4_0Fast
	kinds[ggml.Q4_K].dotQ = dotQ4KFast
}

func dotF32Fast(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	main := n &^ 31
	var s float32
	if main > 0 {
		s = dotF32AVX2(&a[0], &b[0], main)
	}
	for i := main; i < n; i++ {
		s += a[i] * b[i]
	}
	return s
}

func dotF16Fast(w []byte, x []float32) float32 {
	n := len(x)
	w = w[:2*n]
	main := n &^ 31
	var s float32
	if main > 0 {
		s = dotF16AVX2((*uint16)(f16Ptr(w)), &x[0], main)
	}
	for i := main; i < n; i++ {
		s += f16Table[binary.LittleEndian.Uint16(w[2*i:])] * x[i]
	}
	return s
}

func dotQ8_0Fast(w, x []byte, nb int) float32 {
	if nb == 0 {
		return 0
	}
	_, _ = w[nb*34-1], x[nb*34-1]
	return dotQ8_0AVX2(&w[0], &x[0], nb)
}

func dotQ4_0Fast(w, x []byte, nb int) float32 {
	if nb == 0 {
		return 0
	}
	_, _ = w[nb*18-1], x[nb*34-1]
	return dotQ4_0AVX2(&w[0], &x[0], nb)
}

// q4KChunk bounds the per-call scale scratch kept on the stack.
const q4KChunk = 32

func dotQ4KFast(w, x []byte, nb int) float32 {
	if nb == 0 {
		return 0
	}
	_, _ = w[nb*144-1], x[nb*q8KBytes-1]
	var sc [q4KChunk * 8]int16
	var d [q4KChunk]float32
	var total float32
	for b0 := 0; b0 < nb; b0 += q4KChunk {
		cnt := min(q4KChunk, nb-b0)
		var msum float32
		for b := 0; b < cnt; b++ {
			wb := w[(b0+b)*144 : (b0+b+1)*144]
			xb := x[(b0+b)*q8KBytes : (b0+b+1)*q8KBytes]
			yd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
			bs := xb[260:292]
			var mins int32
			for sb := 0; sb < 8; sb++ {
				s, m := kScaleMin(sb, wb[4:16])
				sc[b*8+sb] = int16(s)
				mins += m * (int32(int16(binary.LittleEndian.Uint16(bs[4*sb:]))) +
					int32(int16(binary.LittleEndian.Uint16(bs[4*sb+2:]))))
			}
			d[b] = yd * f16At(wb)
			msum += yd * f16At(wb[2:]) * float32(mins)
		}
		total += dotQ4KAVX2(&w[b0*144], &x[b0*q8KBytes], cnt, &sc[0], &d[0]) - msum
	}
	return total
}
