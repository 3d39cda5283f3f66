package cuda

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// BenchmarkGPUMatMul times one mat_mul of n×k×m = 4096×4096×512 (issue
// #35's GEMM figure: f16 weights, f32 activations converted in the kernel,
// 2·n·k·m operations) with the 32×64-tile tensor-core kernel (mma), the
// translated Metal one (msl), and for f16 the 128×128-tile ones the launch
// rule picks at this shape (big: float-accurate split activations; big_h:
// activations rounded to f16, Tuning.MatMulBigHalf; wgmma: sm_90a's
// warpgroup products, activations rounded to f16), and the q8_0 and
// q4_0 weights the same way, and with 8-bit activations on int8 tensor
// cores (mmq: quantize_q8a and mat_mul_mmq, the launch rule's choice at
// this shape; operations counted as for the others): 64 products per RunSeq (one wait; a graph
// replay from the third batch), TFLOP/s over the wall time. Skips without a GPU.
func BenchmarkGPUMatMul(b *testing.B) {
	const n, k, m, steps = 4096, 4096, 512, 64
	r := rand.New(rand.NewPCG(35, 2))
	wf := make([]float32, n*k)
	for i := range wf {
		wf[i] = float32(r.NormFloat64()) * 0.02
	}
	x := make([]float32, m*k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, typ := range []ggml.Type{ggml.F16, ggml.Q8_0, ggml.Q4_0} {
		w := make([]byte, n*k/typ.BlockSize()*typ.TypeSize())
		require.NoError(b, ggml.Quantize(typ, wf, w))
		type variant struct {
			name string
			o    Options
		}
		variants := []variant{{"mma", Options{Tune: "MatMulBig=1000000,MatMulMMQ=1000000"}}, {"msl", Options{NoNative: true}}}
		if typ != ggml.F16 { // 8-bit activations on int8 tensor cores (mat_mul_mmq)
			variants = append(variants, variant{"mmq", Options{}})
		}
		if typ == ggml.F16 {
			variants = append(variants, variant{"big", Options{Tune: "MatMulWGMMA=1000000"}},
				variant{"big_h", Options{Tune: "MatMulBigHalf=1,MatMulWGMMA=1000000"}}, variant{"wgmma", Options{}})
		}
		for _, v := range variants {
			b.Run(typ.String()+"/"+v.name, func(b *testing.B) {
				be, err := New(v.o)
				if err != nil {
					b.Skipf("no GPU: %v", err)
				}
				defer be.Close()
				if v.name == "wgmma" && be.tuning.MatMulWGMMA == 0 {
					b.Skip("no sm_90a module (compute capability 9.0 only)")
				}
				p := &plan.Plan{Name: "gemm"}
				wb := p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: int64(len(w)), Data: w})
				xb := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: int64(4 * len(x))})
				ob := p.AddBuffer(plan.Buffer{Name: "out", Kind: plan.IO, Size: 4 * m * n})
				ps, pass := p.AddPass("gemm")
				ps.Add(plan.MatMulArgs{Type: typ, W: plan.Binding{Buf: wb}, X: plan.Binding{Buf: xb}, Out: plan.Binding{Buf: ob},
					Bias: plan.None, Res: plan.None, N: n, K: k, M: m, Ldx: k, Ldo: n, Ldr: n}.Dispatch())
				ex, err := be.Load(p)
				require.NoError(b, err)
				defer ex.Close()
				require.NoError(b, ex.Write(xb, 0, ggml.F32Bytes(x)))
				vars := make([]plan.Vars, steps)
				for range 3 { // the kernel-by-kernel batch, the recording one, then graphs
					require.NoError(b, ex.RunSeq(pass, vars))
				}
				b.ResetTimer()
				t0 := time.Now()
				for range b.N {
					require.NoError(b, ex.RunSeq(pass, vars))
				}
				sec := time.Since(t0).Seconds()
				b.ReportMetric(2*float64(n)*k*m*steps*float64(b.N)/sec/1e12, "TFLOP/s")
				b.ReportMetric(sec/float64(b.N*steps)*1e3, "ms/product")
			})
		}
	}
}

// TestGPUMatMulWGMMALayout: mat_mul_wgmma_f16 reads every operand element
// where it belongs. With x[i, e] = 1 where e = i mod k (else 0), out[i, j]
// is W[j, i mod k] exactly; weights holding their own row index, then
// their own column index, say which weight element each output read, so a
// wrong swizzle, descriptor or fragment shows as the coordinates it came
// from. 256×128×192: two k steps, a partial second activation tile.
// Skips without the sm_90a module.
func TestGPUMatMulWGMMALayout(t *testing.T) {
	const n, k, m = 256, 128, 192
	b := gpuWith(t, Options{Tune: "MatMulBig=1"})
	if b.tuning.MatMulWGMMA == 0 {
		t.Skipf("%s loads no sm_90a module", b.Info().Name)
	}
	x := make([]float32, m*k)
	for i := range m {
		x[i*k+i%k] = 1
	}
	for _, coord := range []string{"row", "column"} {
		wf := make([]float32, n*k)
		for j := range n {
			for e := range k {
				wf[j*k+e] = float32(j)
				if coord == "column" {
					wf[j*k+e] = float32(e)
				}
			}
		}
		w := make([]byte, 2*n*k)
		require.NoError(t, ggml.Quantize(ggml.F16, wf, w))
		p := &plan.Plan{Name: "wgmma"}
		wb := p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: int64(len(w)), Data: w})
		xb := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: int64(4 * len(x))})
		ob := p.AddBuffer(plan.Buffer{Name: "out", Kind: plan.IO, Size: 4 * m * n})
		ps, pass := p.AddPass("gemm")
		ps.Add(plan.MatMulArgs{Type: ggml.F16, W: plan.Binding{Buf: wb}, X: plan.Binding{Buf: xb}, Out: plan.Binding{Buf: ob},
			Bias: plan.None, Res: plan.None, N: n, K: k, M: m, Ldx: k, Ldo: n, Ldr: n}.Dispatch())
		ex, err := b.Load(p)
		require.NoError(t, err)
		require.NoError(t, ex.Write(xb, 0, ggml.F32Bytes(x)))
		require.NoError(t, ex.Run(pass, &plan.Vars{}))
		ob32 := make([]byte, 4*m*n)
		require.NoError(t, ex.Read(ob, 0, ob32))
		ex.Close()
		got := ggml.BytesF32(ob32)
		bad := 0
		for i := range m {
			for j := range n {
				want := float32(j)
				if coord == "column" {
					want = float32(i % k)
				}
				if got[i*n+j] != want {
					if bad < 12 {
						t.Logf("out[%d, %d] read weight %s %v, want %v", i, j, coord, got[i*n+j], want)
					}
					bad++
				}
			}
		}
		require.Zero(t, bad, "outputs that read the wrong weight %s", coord)
	}
}
