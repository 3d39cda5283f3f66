package cpu

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
	"github.com/harkapp/hark/internal/shared"
)

// layerShape sizes independentPlan.
type layerShape struct{ dim, q, kv, ff, layers int }

// independentPlan is a decoder layer's product pattern, repeated: q, k and
// v products of one normalised input (independent), a product reading all
// three (dependent), gate and up products (independent), and a down
// product adding onto the input (dependent).
func independentPlan(t testing.TB, pool *Pool, s layerShape) (*harness, []plan.BufID) {
	r := rand.New(rand.NewPCG(7, 8))
	h := newHarness(t)
	h.be = New(Options{Pool: pool})
	w := func(name string, typ ggml.Type, n, k int) plan.BufID {
		b, _ := weightsOf(t, r, typ, n, k)
		return h.weights(name, b)
	}
	qkvW := s.q + 2*s.kv
	x := h.f32("x", randVec(r, s.dim, 1))
	g := h.weights("g", ggml.F32Bytes(randVec(r, s.dim, 1)))
	qkv := h.f32("qkv", make([]float32, qkvW)) // q, k, v side by side in one buffer
	o, gu := h.f32("o", make([]float32, s.dim)), h.f32("gu", make([]float32, 2*s.ff))
	at := func(b plan.BufID, floats int) plan.Binding { return plan.Binding{Buf: b, Off: uint64(4 * floats)} }
	norm := func(wt plan.BufID, typ ggml.Type, n int, out plan.Binding) {
		h.add(plan.RMSNormMatVecArgs{Type: typ, W: bind(wt), X: bind(x), Out: out, Bias: plan.None, Res: plan.None, G: bind(g), N: n, K: s.dim, M: 1, Ldx: s.dim, Ldo: n, Eps: 1e-5}.Dispatch())
	}
	mv := func(wt plan.BufID, typ ggml.Type, n, k int, in, out plan.Binding) {
		h.add(plan.MatVecArgs{Type: typ, W: bind(wt), X: in, Out: out, Bias: plan.None, Res: plan.None, N: n, K: k, M: 1, Ldx: k, Ldo: n}.Dispatch())
	}
	for range s.layers {
		norm(w("wq", ggml.Q8_0, s.q, s.dim), ggml.Q8_0, s.q, at(qkv, 0))
		norm(w("wk", ggml.Q4_0, s.kv, s.dim), ggml.Q4_0, s.kv, at(qkv, s.q))
		norm(w("wv", ggml.Q8_0, s.kv, s.dim), ggml.Q8_0, s.kv, at(qkv, s.q+s.kv))
		mv(w("wo", ggml.Q8_0, s.dim, qkvW), ggml.Q8_0, s.dim, qkvW, bind(qkv), bind(o))
		mv(w("wg", ggml.Q8_0, s.ff, s.dim), ggml.Q8_0, s.ff, s.dim, bind(o), at(gu, 0))
		mv(w("wu", ggml.Q4_0, s.ff, s.dim), ggml.Q4_0, s.ff, s.dim, bind(o), at(gu, s.ff))
		h.add(plan.SiLUMulMatVecArgs{Type: ggml.Q8_0, W: bind(w("wd", ggml.Q8_0, s.dim, s.ff)), Gate: bind(gu), Out: bind(x), Bias: plan.None, Res: bind(x), Up: at(gu, s.ff), N: s.dim, K: s.ff, M: 1, Ldg: s.ff, Ldo: s.dim, Ldr: s.dim, Ldu: s.ff}.Dispatch())
	}
	return h, []plan.BufID{x, qkv, o, gu}
}

// testLayer is large enough to split every product over the workers.
var testLayer = layerShape{dim: 256, q: 1024, kv: 512, ff: 1024, layers: 2}

// smolLM2Layers is SmolLM2-135M's decoder (576 wide, 3 KV heads of 64,
// FFN 1536, 30 layers) without attention.
var smolLM2Layers = layerShape{dim: 576, q: 576, kv: 192, ff: 1536, layers: 30}

func TestFencesOnlyBetweenDependentDispatches(t *testing.T) {
	h, _ := independentPlan(t, testPool, testLayer)
	ex := h.load()
	layer := []bool{true, false, false, true, true, false, true}
	require.Equal(t, append(layer, layer...), ex.passes[0].fence)

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
			h, bufs := independentPlan(t, pool, testLayer)
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
// holds, then a fence: every item of every job ran once; then the pool
// goes idle.
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
		// after a pass of asynchronous jobs the helpers park and the idle
		// pool uses no CPU
		waitParked(t, p, workers-1)
		before := cpuTime(t)
		time.Sleep(200 * time.Millisecond)
		require.Less(t, cpuTime(t)-before, 50*time.Millisecond, "CPU used by a pool idle after asynchronous jobs")
		p.Close()
	}
}

// BenchmarkDecodeBarriers times SmolLM2's decoder products with a barrier
// after every dispatch (serial) and only before dependent ones (fenced),
// on DefaultThreads workers (set with -cpu, or taskset), twice each,
// alternating.
func BenchmarkDecodeBarriers(b *testing.B) {
	pool := NewPool(0)
	defer pool.Close()
	h, _ := independentPlan(b, pool, smolLM2Layers)
	ex := h.load()
	for _, serial := range []bool{true, false, true, false} {
		name := "fenced"
		if serial {
			name = "serial"
		}
		b.Run(fmt.Sprintf("%s/workers=%d", name, pool.Workers()), func(b *testing.B) {
			ex.serial = serial
			require.NoError(b, ex.Run(0, nil))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := ex.Run(0, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// TestPoolAsyncStress mixes asynchronous and synchronous jobs, waits,
// fences and quiet sections in and out of passes: every item runs once
// and no fence waits for a job that never ends.
func TestPoolAsyncStress(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, workers := range []int{2, 3} {
		for _, spin := range []time.Duration{0, spinHold} {
			p := newPool(workers, spin)
			jobs := make([]countTask, 64)
			for i := range jobs {
				jobs[i].hits = make([]atomic.Int32, 1+r.IntN(200))
			}
			want := make([]int32, len(jobs))
			var gens []uint64
			done := make(chan struct{})
			go func() {
				defer close(done)
				next := 0
				for range 5000 {
					switch k := r.IntN(10); {
					case k == 0:
						p.Begin()
					case k == 1:
						if p.passes.Load() > 0 {
							p.End()
						}
					case k == 2:
						p.quiet()
						p.Fence()
						p.loud()
					case k == 3 && len(gens) > 0:
						p.WaitGen(gens[r.IntN(len(gens))])
					default:
						j := next % len(jobs) // up to len(jobs) in flight, more than the ring holds
						if j == 0 {
							p.Fence() // a job is not rerun while in flight
						}
						next++
						want[j]++
						if k < 7 {
							gens = append(gens, p.RunAsync(len(jobs[j].hits), 1+r.IntN(20), &jobs[j]))
						} else {
							p.Run(len(jobs[j].hits), 1+r.IntN(20), &jobs[j])
						}
					}
				}
				for p.passes.Load() > 0 {
					p.End()
				}
				p.Fence()
			}()
			select {
			case <-done:
			case <-time.After(shared.Wait(t, 2*time.Minute)):
				t.Fatalf("workers=%d spin=%v: stuck, %d helpers outstanding", workers, spin, p.inFlight())
			}
			for j := range jobs {
				for i := range jobs[j].hits {
					require.Equal(t, want[j], jobs[j].hits[i].Load(), "job %d item %d", j, i)
				}
			}
			p.Close()
		}
	}
}
