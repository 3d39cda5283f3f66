package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/shaders"
)

// TestGPUMatVecRows: the native multi-row q8_0 mat-vec
// (cuda/native/mat_vec_rows.cu, Tuning.MatVecRowsNative: the batch plan's
// steps of 2 to 16 rows) against the exact product of the dequantized
// weights in float64 (within 1e-5 of the output's largest magnitude) and
// against mat_vec_impl on the same GPU (Tuning.MatVecRowsNative=1), within
// 1e-6, 4 and 8 activation rows a block (Tuning.MatVecRowsNativeBatch)
// and the tensor-core form (mat_vec_rows_mma, Tuning.MatVecRowsMMA, here
// from 2 rows; its activations enter as f16 hi + lo):
// 37 weight rows (the last pair ragged), k = 96 (six chunks: most
// lanes idle), 576 and 1,536 (the SmolLM2 shape's products: one and two
// chunk steps), 2 to 16 activation rows (one and two blocks of 8; the
// tensor-core form also 17, 40, 64, 100 and 128: columns of 16 rows, the
// last one ragged, Tuning.MatVecRowsMMAMax), row
// strides wider than k, bias and residual; weights repacked (the host's
// layout) and in the file's (a binding past the buffer's start, which
// shaders.Layouts leaves unrepacked). Run in the normal, permuted and
// poisoned modes by bench/cuda's scripts.
func TestGPUMatVecRows(t *testing.T) {
	off := gpuWith(t, Options{Tune: "MatVecRowsNative=1"})
	if off.tuning.MatVecRowsNative != 1 {
		t.Skipf("%s loads no sm_80 module", off.Info().Name)
	}
	for _, c := range []struct {
		name, tune, fn string
	}{
		{"rows4", "MatVecRowsNativeBatch=4,MatVecRowsMMA=1", "mat_vec_rows4_q8_0"},
		{"rows8", "MatVecRowsNativeBatch=8,MatVecRowsMMA=1", "mat_vec_rows8_q8_0"},
		{"mma", "MatVecRowsMMA=2,MatVecRowsMMAMax=128", "mat_vec_rows_mma_q8_0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := []int{2, 7, 8, 9, 16}
			if c.name == "mma" { // past 16 rows: columns of 16 (Tuning.MatVecRowsMMAMax)
				ms = append(ms, 17, 40, 64, 100, 128)
			}
			matVecRows(t, gpuWith(t, Options{Tune: c.tune}), off, c.fn, ms)
		})
	}
}

func matVecRows(t *testing.T, b, off *Backend, fn string, ms []int) {
	r := rand.New(rand.NewPCG(38, uint64(len(fn))))
	const n = 37
	for _, k := range []int{96, 576, 1536} {
		for _, m := range ms {
			for _, file := range []bool{false, true} {
				name := fmt.Sprintf("k=%d m=%d file=%v", k, m, file)
				ldx, ldo := k+16, n+3
				wf := make([]float32, (n+1)*k)
				for i := range wf {
					wf[i] = float32(r.NormFloat64())
				}
				w := make([]byte, (n+1)*k/32*34)
				require.NoError(t, ggml.Quantize(ggml.Q8_0, wf, w))
				wq := make([]float32, len(wf))
				require.NoError(t, ggml.Dequantize(ggml.Q8_0, w, wq))
				woff := 0
				if file { // the first row skipped: not at the buffer's start
					woff = k / 32 * 34
					wq = wq[k:]
				}
				x, bias, res := make([]float32, m*ldx), make([]float32, n), make([]float32, m*ldo)
				for _, v := range [][]float32{x, bias, res} {
					for i := range v {
						v[i] = float32(r.NormFloat64())
					}
				}
				p := &plan.Plan{Name: "mat_vec_rows"}
				wb := p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: int64(len(w)), Data: w})
				bb := p.AddBuffer(plan.Buffer{Name: "bias", Kind: plan.BufWeights, Size: int64(4 * n), Data: ggml.F32Bytes(bias)})
				xb := p.AddBuffer(plan.Buffer{Name: "x", Kind: plan.IO, Size: int64(4 * len(x))})
				rb := p.AddBuffer(plan.Buffer{Name: "res", Kind: plan.IO, Size: int64(4 * len(res))})
				ob := p.AddBuffer(plan.Buffer{Name: "out", Kind: plan.IO, Size: int64(4 * m * ldo)})
				ps, pass := p.AddPass("product")
				d := plan.MatVecArgs{Type: ggml.Q8_0, W: plan.Binding{Buf: wb, Off: uint64(woff)}, X: plan.Binding{Buf: xb}, Out: plan.Binding{Buf: ob},
					Bias: plan.Binding{Buf: bb}, Res: plan.Binding{Buf: rb}, N: n, K: k, M: m, Ldx: ldx, Ldo: ldo, Ldr: ldo}.Dispatch()
				ps.Add(d)
				ls, err := shaders.LaunchFor(&d, &b.tuning, nil)
				require.NoError(t, err, name)
				require.Equal(t, fn, ls[0].Function, name)
				run := func(be *Backend) []float32 {
					ex, err := be.Load(p)
					require.NoError(t, err, name)
					defer ex.Close()
					require.NoError(t, ex.Write(xb, 0, ggml.F32Bytes(x)))
					require.NoError(t, ex.Write(rb, 0, ggml.F32Bytes(res)))
					require.NoError(t, ex.Run(pass, &plan.Vars{}))
					o := make([]byte, 4*m*ldo)
					require.NoError(t, ex.Read(ob, 0, o))
					return ggml.BytesF32(o)
				}
				got, old := run(b), run(off)
				var scale, eExact, eOld float64
				for i := range m {
					for j := range n {
						s := float64(bias[j]) + float64(res[i*ldo+j])
						for e := range k {
							s += float64(wq[j*k+e]) * float64(x[i*ldx+e])
						}
						scale = max(scale, math.Abs(s))
						eExact = max(eExact, math.Abs(float64(got[i*ldo+j])-s))
						eOld = max(eOld, math.Abs(float64(got[i*ldo+j]-old[i*ldo+j])))
					}
				}
				t.Logf("%-24s exact %.2e  mat_vec %.2e (of %.1f)", name, eExact/scale, eOld/scale, scale)
				require.LessOrEqual(t, eExact/scale, 1e-5, "%s: against the exact product", name)
				require.LessOrEqual(t, eOld/scale, 1e-6, "%s: against mat_vec_impl", name)
			}
		}
	}
}
