package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// TestVNNIRowsMatchAVX2AndPortable runs the VNNI, AVX2 and portable row
// kernels on the same random rows (odd row and block counts, row strides
// wider than the row) and checks them against each other. Per-block
// integer sums are exact on every path; only the float accumulation order
// differs, so the bound is relative to Σ|block terms|.
func TestVNNIRowsMatchAVX2AndPortable(t *testing.T) {
	if !hasVNNI {
		t.Log("CPU without AVX-512 VNNI: only the AVX2 path is checked")
	}
	type path struct {
		vnni, avx2 func(w []byte, rb int, x []byte, nb int, out []float32)
		generic    func(w, x []byte, nb int) float32
	}
	paths := map[ggml.Type]path{
		ggml.Q4_0: {rowsQ4_0VNNI, rowsQ4_0Fast, dotQ4_0Generic},
		ggml.Q5_0: {rowsQ5_0VNNI, rowsQ5_0Fast, dotQ5_0Generic},
		ggml.Q8_0: {rowsQ8_0VNNI, rowsQ8_0Fast, dotQ8_0Generic},
	}
	r := rand.New(rand.NewPCG(4, 7))
	for typ, p := range paths {
		ts := typ.TypeSize()
		for _, nb := range []int{1, 2, 3, 17, 18} {
			for _, rows := range []int{1, 3, 4, 5, 7, 9, 13} {
				for _, pad := range []int{0, 5} {
					rb := nb*ts + pad
					w := make([]byte, rows*rb)
					for i := 0; i < rows; i++ {
						copy(w[i*rb:], randWeights(r, typ, 1, nb*32))
					}
					xq := make([]byte, nb*q8_0Bytes)
					kinds[typ].quantize(randF32(r, nb*32), xq)
					got, avx := make([]float32, rows), make([]float32, rows)
					nanFill(got)
					nanFill(avx)
					if hasVNNI {
						p.vnni(w, rb, xq, nb, got)
					}
					p.avx2(w, rb, xq, nb, avx)
					for i := range rows {
						row := w[i*rb : i*rb+nb*ts]
						want := p.generic(row, xq, nb)
						var mag float64
						for b := range nb {
							mag += math.Abs(float64(p.generic(row[b*ts:], xq[b*q8_0Bytes:], 1)))
						}
						tol := 1e-5*mag + 1e-6
						msg := []any{"%s nb=%d rows=%d pad=%d row=%d", typ, nb, rows, pad, i}
						require.InDelta(t, want, avx[i], tol, msg...)
						if hasVNNI {
							require.InDelta(t, want, got[i], tol, msg...)
							require.InDelta(t, avx[i], got[i], tol, msg...)
						}
					}
				}
			}
		}
	}
}

// TestVNNISwitchMatVec runs the same matrix-vector product with the AVX2
// and the VNNI kernels installed (useVNNI) and compares the outputs.
func TestVNNISwitchMatVec(t *testing.T) {
	defer useVNNI(hasVNNI)
	r := rand.New(rand.NewPCG(8, 1))
	const n, k = 131, 576
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q5_0, ggml.Q8_0} {
		kd := kinds[typ]
		w := randWeights(r, typ, n, k)
		xq := make([]byte, k/32*q8_0Bytes)
		kd.quantize(randF32(r, k), xq)
		var outs [2][]float32
		for i, on := range []bool{false, true} {
			useVNNI(on)
			outs[i] = make([]float32, n)
			kd.dotQRows(w, len(w)/n, xq, k/32, outs[i])
		}
		for i := range n {
			require.InDelta(t, outs[0][i], outs[1][i], 1e-4*math.Abs(float64(outs[0][i]))+1e-3, "%s row %d", typ, i)
		}
	}
}

// useVNNI switches the quantized GEMM with the row kernels: off, a VNNI
// CPU runs the AVX2 GEMM (which takes no Q8_0), and products of
// qgemmMinM rows match the reference either way.
func TestVNNISwitchQGemm(t *testing.T) {
	defer useVNNI(hasVNNI)
	pool := NewPool(2)
	defer pool.Close()
	r := rand.New(rand.NewPCG(8, 2))
	for _, on := range []bool{false, true} {
		useVNNI(on)
		vnni := on && hasVNNI
		require.Equal(t, vnni, qgemmMaxCode == 255, "vnni=%v", on)
		mm := NewMatMul(pool)
		mm.noBLAS = true
		require.Equal(t, vnni, mm.canQGemm(&mulArgs{kd: kinds[ggml.Q8_0], k: 64, m: qgemmMinM}), "q8_0 vnni=%v", on)
		require.True(t, mm.canQGemm(&mulArgs{kd: kinds[ggml.Q4_0], k: 64, m: qgemmMinM}), "q4_0 vnni=%v", on)
		for _, typ := range []ggml.Type{ggml.Q8_0, ggml.Q4_0} {
			checkMul(t, mm, r, typ, mulCase{n: 37, k: 96, m: qgemmMinM + 3, bias: true, res: true})
		}
	}
}

// BenchmarkDotRowsVNNI: one core, cache-resident rows (as BenchmarkDotRows)
// with the AVX2 and the VNNI kernels side by side.
func BenchmarkDotRowsVNNI(b *testing.B) {
	defer useVNNI(hasVNNI)
	for _, t := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
		for _, on := range []bool{false, true} {
			name := t.String() + "/avx2"
			if on {
				name = t.String() + "/vnni"
			}
			b.Run(name, func(b *testing.B) {
				useVNNI(on)
				kd := kinds[t]
				r := rand.New(rand.NewPCG(1, 2))
				const rows, k = 256, 576
				w := randWeights(r, t, rows, k)
				xq := make([]byte, k/32*q8_0Bytes)
				kd.quantize(randF32(r, k), xq)
				out := make([]float32, rows)
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					kd.dotQRows(w, len(w)/rows, xq, k/32, out)
				}
			})
		}
	}
}

// BenchmarkMatVecVNNI: the 49152x576 matrix-vector product (both workers,
// weights streamed from memory) with the AVX2 and the VNNI kernels.
func BenchmarkMatVecVNNI(b *testing.B) {
	defer useVNNI(hasVNNI)
	pool := NewPool(0)
	defer pool.Close()
	mm := NewMatMul(pool)
	for _, t := range []ggml.Type{ggml.Q8_0, ggml.Q4_0, ggml.Q5_0} {
		for _, on := range []bool{false, true} {
			name := t.String() + "/avx2"
			if on {
				name = t.String() + "/vnni"
			}
			b.Run(name, func(b *testing.B) {
				useVNNI(on)
				benchMul(b, mm, t, 49152, 576, 1)
			})
		}
	}
}
