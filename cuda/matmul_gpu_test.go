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
// activations rounded to f16, Tuning.MatMulBigHalf), and the q8_0 and
// q4_0 weights the same way: 64 products per RunSeq (one wait; a graph
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
		variants := []variant{{"mma", Options{Tune: "MatMulBig=1000000"}}, {"msl", Options{NoNative: true}}}
		if typ == ggml.F16 {
			variants = append(variants, variant{"big", Options{}}, variant{"big_h", Options{Tune: "MatMulBigHalf=1"}})
		}
		for _, v := range variants {
			b.Run(typ.String()+"/"+v.name, func(b *testing.B) {
				be, err := New(v.o)
				if err != nil {
					b.Skipf("no GPU: %v", err)
				}
				defer be.Close()
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
