package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
)

var benchTypes = []ggml.Type{ggml.F32, ggml.F16, ggml.Q8_0, ggml.Q4_0, ggml.Q4_K}

// benchK rounds k up to the type's block size: Q4_K needs multiples of 256,
// which Whisper-tiny's 384 and SmolLM2's 576 are not.
func benchK(t ggml.Type, k int) int {
	bs := t.BlockSize()
	return (k + bs - 1) / bs * bs
}

func benchMul(b *testing.B, mm *MatMul, t ggml.Type, n, k, m int) {
	r := rand.New(rand.NewPCG(1, 2))
	w := randWeights(r, t, n, k)
	x := randF32(r, m*k)
	out := make([]float32, m*n)
	b.SetBytes(int64(len(w)))
	// One untimed call first: scratch growth and the BLAS library's
	// per-thread buffers are one-time costs, not throughput.
	if err := mm.Mul(t, w, n, k, m, x, k, out, n, nil, nil, 0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := mm.Mul(t, w, n, k, m, x, k, out, n, nil, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(2*float64(n)*float64(k)*float64(m)/sec/1e9, "GFLOP/s")
	b.ReportMetric(float64(len(w))/sec/1e9, "GB/s")
}

// BenchmarkMatMul: Whisper-tiny encoder shapes (1500 frames).
func BenchmarkMatMul(b *testing.B) {
	pool := NewPool(0)
	defer pool.Close()
	for _, goOnly := range []bool{false, true} {
		mm := NewMatMul(pool)
		mm.noBLAS = goOnly
		suffix := ""
		if goOnly {
			suffix = "/go"
		}
		for _, t := range benchTypes {
			for _, s := range [][2]int{{384, 384}, {1536, 384}} {
				k := benchK(t, s[1])
				b.Run(fmt.Sprintf("%s/%dx%dx1500%s", t, s[0], k, suffix), func(b *testing.B) { benchMul(b, mm, t, s[0], k, 1500) })
			}
		}
	}
}

// BenchmarkMatVec: SmolLM2-135M decode shapes (m = 1), plus 4 beams.
func BenchmarkMatVec(b *testing.B) {
	pool := NewPool(0)
	defer pool.Close()
	mm := NewMatMul(pool)
	// Q4_K_M models also carry q6_K (output, ffn_down) and q5_K/q5_0 tensors.
	types := append(benchTypes[:len(benchTypes):len(benchTypes)], ggml.Q5_0, ggml.Q5_K, ggml.Q6_K)
	for _, t := range types {
		for _, s := range [][2]int{{576, 576}, {1536, 576}, {49152, 576}} {
			k := benchK(t, s[1])
			b.Run(fmt.Sprintf("%s/%dx%d", t, s[0], k), func(b *testing.B) { benchMul(b, mm, t, s[0], k, 1) })
		}
	}
}

// BenchmarkMemBandwidth reads a 256 MiB buffer on every worker with the
// SIMD dot, the ceiling for matrix-vector products.
func BenchmarkMemBandwidth(b *testing.B) {
	pool := NewPool(0)
	defer pool.Close()
	buf := make([]float32, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	task := &readTask{buf: buf, sums: make([]float32, pool.Workers()*16)}
	b.SetBytes(int64(4 * len(buf)))
	b.ResetTimer()
	for b.Loop() {
		pool.Run(len(buf)/readChunk, 1, task)
	}
	b.ReportMetric(float64(4*len(buf))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

const readChunk = 1 << 16

type readTask struct {
	buf  []float32
	sums []float32
}

func (t *readTask) Do(w, lo, hi int) {
	for c := lo; c < hi; c++ {
		s := t.buf[c*readChunk : (c+1)*readChunk]
		t.sums[w*16] += dotF32(s, s)
	}
}

// BenchmarkDotRows times one core's row-run kernel on cache-resident
// weights (256 rows of 576 or 768): the compute ceiling of each kernel,
// less sensitive to the memory system than BenchmarkMatVec.
func BenchmarkDotRows(b *testing.B) {
	for _, t := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K} {
		b.Run(t.String(), func(b *testing.B) {
			kd := kinds[t]
			k := benchK(t, 576)
			r := rand.New(rand.NewPCG(1, 2))
			const rows = 256
			w := randWeights(r, t, rows, k)
			xq := make([]byte, k/kd.blockSize*kd.actBytes)
			kd.quantize(randF32(r, k), xq)
			out := make([]float32, rows)
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				kd.dotQRows(w, len(w)/rows, xq, k/kd.blockSize, out)
			}
		})
	}
}
