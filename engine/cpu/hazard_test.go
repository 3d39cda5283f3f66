package cpu

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// independentPlan is a decoder layer's product pattern: q, k and v
// products of one normalised input (independent), a product reading q and
// k (dependent), gate and up products (independent), and a down product
// adding onto the input (dependent), large enough to split over workers.
func independentPlan(t *testing.T, pool *Pool) (*harness, []plan.BufID) {
	r := rand.New(rand.NewPCG(7, 8))
	const dim, n = 256, 1024
	h := newHarness(t)
	h.be = New(Options{Pool: pool})
	w := func(name string, typ ggml.Type, n, k int) plan.BufID {
		b, _ := weightsOf(t, r, typ, n, k)
		return h.weights(name, b)
	}
	x := h.f32("x", randVec(r, dim, 1))
	g := h.weights("g", f32Bytes(randVec(r, dim, 1)))
	qkv := h.f32("qkv", make([]float32, 3*n)) // q, k, v side by side in one buffer
	o, gu := h.f32("o", make([]float32, dim)), h.f32("gu", make([]float32, 2*n))
	at := func(b plan.BufID, floats int) plan.Binding { return plan.Binding{Buf: b, Off: uint64(4 * floats)} }
	norm := func(wt plan.BufID, typ ggml.Type, out plan.Binding) {
		h.add(plan.RMSNormMatVecArgs{Type: typ, W: bind(wt), X: bind(x), Out: out, Bias: plan.None, Res: plan.None, G: bind(g), N: n, K: dim, M: 1, Ldx: dim, Ldo: n, Eps: 1e-5}.Dispatch())
	}
	norm(w("wq", ggml.Q8_0, n, dim), ggml.Q8_0, at(qkv, 0))
	norm(w("wk", ggml.Q4_0, n, dim), ggml.Q4_0, at(qkv, n))
	norm(w("wv", ggml.Q8_0, n, dim), ggml.Q8_0, at(qkv, 2*n))
	h.add(plan.MatVecArgs{Type: ggml.Q8_0, W: bind(w("wo", ggml.Q8_0, dim, 2*n)), X: bind(qkv), Out: bind(o), Bias: plan.None, Res: plan.None, N: dim, K: 2 * n, M: 1, Ldx: 2 * n, Ldo: dim}.Dispatch())
	h.add(plan.MatVecArgs{Type: ggml.Q8_0, W: bind(w("wg", ggml.Q8_0, n, dim)), X: bind(o), Out: at(gu, 0), Bias: plan.None, Res: plan.None, N: n, K: dim, M: 1, Ldx: dim, Ldo: n}.Dispatch())
	h.add(plan.MatVecArgs{Type: ggml.Q4_0, W: bind(w("wu", ggml.Q4_0, n, dim)), X: bind(o), Out: at(gu, n), Bias: plan.None, Res: plan.None, N: n, K: dim, M: 1, Ldx: dim, Ldo: n}.Dispatch())
	sm := plan.SiLUMulMatVecArgs{Type: ggml.Q8_0, W: bind(w("wd", ggml.Q8_0, dim, n)), Gate: bind(gu), Out: bind(x), Bias: plan.None, Res: bind(x), Up: at(gu, n), N: dim, K: n, M: 1, Ldg: n, Ldo: dim, Ldr: dim, Ldu: n}.Dispatch()
	h.add(sm)
	return h, []plan.BufID{x, qkv, o, gu}
}

func TestFencesOnlyBetweenDependentDispatches(t *testing.T) {
	h, _ := independentPlan(t, testPool)
	ex := h.load()
	require.Equal(t, []bool{true, false, false, true, true, false, true}, ex.passes[0].fence)

	// a patched dispatch counts as its buffers' whole range: the beam copy
	// of the decoder step (alone on its buffer) needs no fence, the
	// attention after RopeKV (same caches) does
	h2, _ := decodePlan(t)
	ex2 := h2.load()
	for i, d := range ex2.passes[0].ops {
		switch d.Kernel {
		case plan.BeamCopy:
			require.False(t, ex2.passes[0].fence[i], "op %d (%s)", i, d.Kernel)
		case plan.Attention:
			require.True(t, ex2.passes[0].fence[i], "op %d (%s)", i, d.Kernel)
		}
	}
}

// TestUnfencedDispatchesMatchSerial: running the independent products
// without a barrier between them gives the same bits as a barrier after
// every dispatch, step after step (x feeds back), on a pool with more
// workers than the products have chunks for some of them.
func TestUnfencedDispatchesMatchSerial(t *testing.T) {
	for _, workers := range []int{2, 5} {
		pool := NewPool(workers)
		run := func(serial bool) [][]byte {
			h, bufs := independentPlan(t, pool)
			ex := h.load()
			ex.serial = serial
			for range 20 {
				require.NoError(t, ex.Run(0, nil))
			}
			var out [][]byte
			for _, b := range bufs {
				out = append(out, h.read(b))
			}
			return out
		}
		want := run(true)
		for range 5 {
			require.Equal(t, want, run(false), "workers=%d", workers)
		}
		pool.Close()
	}
	// and the decoder step of every kernel, token by token
	run := func(serial bool) []int32 {
		h, toks := decodePlan(t)
		ex := h.load()
		ex.serial = serial
		for p := range 20 {
			v := plan.Vars{plan.VarPos: int64(p), plan.VarKVLen: int64(p + 1), plan.VarSlot: int64(p), plan.VarStep: int64(p)}
			require.NoError(t, ex.Run(0, &v))
		}
		return h.readI32(toks)
	}
	require.Equal(t, run(true), run(false))
}

// TestPoolAsyncJobsInOrder: more asynchronous jobs in a row than the ring
// holds, then a fence: every item of every job ran once.
func TestPoolAsyncJobsInOrder(t *testing.T) {
	for _, workers := range []int{2, 5} {
		p := newPool(workers, spinHold)
		p.Begin()
		jobs := make([]countTask, 3*ringSize)
		gens := make([]uint64, len(jobs))
		for i := range jobs {
			jobs[i].hits = make([]atomic.Int32, 100+i)
			gens[i] = p.RunAsync(len(jobs[i].hits), 7, &jobs[i])
			if i >= 2 {
				p.WaitGen(gens[i-2])
				for j := range jobs[i-2].hits {
					require.Equal(t, int32(1), jobs[i-2].hits[j].Load(), "job %d item %d after WaitGen", i-2, j)
				}
			}
		}
		p.Fence()
		for i := range jobs {
			for j := range jobs[i].hits {
				require.Equal(t, int32(1), jobs[i].hits[j].Load(), "workers=%d job %d item %d", workers, i, j)
			}
		}
		p.End()
		p.Close()
	}
}
