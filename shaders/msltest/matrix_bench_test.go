package msltest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// BenchmarkMatrixExecutor times the matrix kernels on the executor at
// Whisper-tiny and stories260K sizes, to keep whole-model runs through the
// executor practical (not a GPU benchmark).
func BenchmarkMatrixExecutor(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, bc := range []struct {
		kern    plan.Kernel
		typ     ggml.Type
		n, k, m int
	}{
		{plan.MatMul, ggml.Q8_0, 384, 384, 1500},   // tiny encoder projection
		{plan.MatMul, ggml.F16, 384, 384, 1500},    // f16 encoder projection
		{plan.MatVec, ggml.Q8_0, 1536, 384, 5},     // tiny decoder FFN, 5 beams
		{plan.MatVec, ggml.Q4_K, 4096, 4096, 1},    // 7B-class projection
		{plan.RMSNormMatVec, ggml.Q8_0, 64, 64, 1}, // stories260K
	} {
		b.Run(fmt.Sprintf("%s_%s_%dx%dx%d", bc.kern, bc.typ, bc.n, bc.k, bc.m), func(b *testing.B) {
			k := bc.k
			q, _ := randWeightsK(b, r, bc.typ, bc.n, k)
			c := &mxCase{d: plan.Dispatch{Kernel: bc.kern, Type: bc.typ}}
			c.bind(0, c.add(q, true), 0)
			c.bind(1, c.add(ggml.F32Bytes(randF32(r, bc.m*k, 1)), false), 0)
			ob := c.add(make([]byte, 4*bc.m*bc.n), false)
			c.bind(2, ob, 0)
			c.out = int(ob)
			c.noBind(3)
			c.noBind(4)
			c.d.P = plan.MatVecArgs{N: bc.n, K: k, M: bc.m, Ldx: k, Ldo: bc.n, Ldr: bc.n}.Dispatch().P
			if bc.kern == plan.RMSNormMatVec {
				c.bind(5, c.add(ggml.F32Bytes(randF32(r, k, 1)), false), 0)
				c.d.P = plan.RMSNormMatVecArgs{N: bc.n, K: k, M: bc.m, Ldx: k, Ldo: bc.n, Ldr: bc.n, Eps: 1e-5}.Dispatch().P
			}
			be := TestBackend(b)
			p := &plan.Plan{Name: "bench"}
			for i, bb := range c.bufs {
				bd := plan.Buffer{Name: fmt.Sprint("b", i), Kind: plan.IO, Size: int64(len(bb.data))}
				if bb.weights {
					bd.Kind, bd.Data = plan.BufWeights, bb.data
				}
				p.AddBuffer(bd)
			}
			ps, idx := p.AddPass("run")
			ps.Add(c.d)
			ex, err := be.Load(p)
			require.NoError(b, err)
			defer ex.Close()
			b.ResetTimer()
			for range b.N {
				require.NoError(b, ex.Run(idx, &plan.Vars{}))
			}
			flops := 2 * float64(bc.n) * float64(k) * float64(bc.m)
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
