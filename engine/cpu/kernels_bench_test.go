package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"

	"github.com/harkapp/hark/engine/blas"
	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// benchOne loads a one-dispatch plan and times Run; flops per run, if
// given, are reported as GFLOP/s.
func benchOne(b *testing.B, h *harness, flops float64) {
	ex := h.load()
	v := plan.Vars{}
	if err := ex.Run(0, &v); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := ex.Run(0, &v); err != nil {
			b.Fatal(err)
		}
	}
	if flops > 0 {
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
}

// Whisper-tiny encoder self-attention: 1500 positions, 6 heads of 64, K/V
// as f32 projection rows.
func BenchmarkAttentionEncoder(b *testing.B) {
	const T, nHead, hd = 1500, 6, 64
	r := rand.New(rand.NewPCG(1, 1))
	h := newHarness(b)
	q, k, v := h.f32("q", randVec(r, T*nHead*hd, 1)), h.f32("k", randVec(r, T*nHead*hd, 1)), h.f32("v", randVec(r, T*nHead*hd, 1))
	o := h.nan("o", T*nHead*hd)
	h.add(plan.AttentionArgs{Type: ggml.F32, Q: bind(q), K: bind(k), V: bind(v), Out: bind(o), Probs: plan.None, HeadDim: int(hd), NHead: int(nHead), NKV: int(nHead), M: int(T), Ldq: int(nHead * hd), Ldo: int(nHead * hd), KVLen: int(T), Scale: 0.125, HeadStride: int(hd), PosStride: int(nHead * hd)}.Dispatch())
	benchOne(b, h, 4*T*T*hd*nHead)
}

// One decode step of SmolLM2-135M-like attention over 1024 cached f16 keys.
func BenchmarkAttentionDecode(b *testing.B) {
	const nHead, nKV, hd, ctx = 9, 3, 64, 1024
	r := rand.New(rand.NewPCG(2, 2))
	h := newHarness(b)
	q := h.f32("q", randVec(r, nHead*hd, 1))
	k, v := h.buf("k", f16Bytes(randVec(r, nKV*ctx*hd, 1))), h.buf("v", f16Bytes(randVec(r, nKV*ctx*hd, 1)))
	o := h.nan("o", nHead*hd)
	h.add(plan.AttentionArgs{Type: ggml.F16, Q: bind(q), K: bind(k), V: bind(v), Out: bind(o), Probs: plan.None, HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: 1, Ldq: int(nHead * hd), Ldo: int(nHead * hd), KVLen: int(ctx), Pos0: int(ctx - 1), Flags: plan.FlagCausal, Scale: 0.125, HeadStride: int(ctx * hd), PosStride: int(hd)}.Dispatch())
	benchOne(b, h, 4*ctx*hd*nHead)
}

func BenchmarkGELUEncoder(b *testing.B) {
	const n, m = 1536, 1500
	r := rand.New(rand.NewPCG(3, 3))
	h := newHarness(b)
	x := h.f32("x", randVec(r, n*m, 1))
	h.add(plan.GELUArgs{X: bind(x), Out: bind(x), N: int(n), M: int(m), Ldx: int(n), Ldo: int(n)}.Dispatch())
	benchOne(b, h, 0)
}

func BenchmarkLayerNormEncoder(b *testing.B) {
	const n, m = 384, 1500
	r := rand.New(rand.NewPCG(4, 4))
	h := newHarness(b)
	x, w, bb := h.f32("x", randVec(r, n*m, 1)), h.f32("w", randVec(r, n, 1)), h.f32("b", randVec(r, n, 1))
	h.add(plan.LayerNormArgs{X: bind(x), W: bind(w), B: bind(bb), Out: bind(x), Dim: int(n), Rows: int(m), Ldx: int(n), Ldo: int(n), Eps: 1e-5}.Dispatch())
	benchOne(b, h, 0)
}

// sampleVocabs are the vocabularies of SmolLM2, Qwen and Gemma 3.
var sampleVocabs = []int{49152, 152064, 262144}

// BenchmarkSample is issue 33's target at 152,064 (Qwen): logits from
// N(0, 3), temperature 0.7, top-k 40, top-p 0.95, on one thread; every
// iteration draws with the next step.
func BenchmarkSample(b *testing.B) {
	for _, n := range sampleVocabs {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			benchSample(b, n, 3, sampleParams{topK: 40, topP: 0.95, temp: 0.7, seed: 1})
		})
	}
}

// BenchmarkSampleNoTopK is what OpenAI requests cost (they carry no
// top-k): temperature 0.7 with top-p 0.95 and 1, over logits from N(0, 3)
// and a flat N(0, 0.3) (stories260K, random-weight files, real models at
// high temperature), on one thread.
func BenchmarkSampleNoTopK(b *testing.B) {
	for _, n := range sampleVocabs[:2] {
		for _, sd := range []float64{3, 0.3} {
			for _, topP := range []float32{0.95, 1} {
				b.Run(fmt.Sprintf("n=%d/sd=%g/top-p=%g", n, sd, topP), func(b *testing.B) {
					benchSample(b, n, sd, sampleParams{topP: topP, temp: 0.7, seed: 1})
				})
			}
		}
	}
}

// BenchmarkSampleSettings is one SmolLM2-sized draw (49,152 logits, flat
// N(0, 0.3) as the random-weight bench file's, and N(0, 3)) at the settings
// issue 33's serve comparison meets: greedy (the bench's argmax through
// the Sample kernel), the chat request's (temperature 0.7, nothing
// truncating: drawIndex), and a client's usual truncation (top-k 40,
// top-p 0.95, min-p 0.05), on one thread. Run under callgrind for
// instruction counts (bench/serve/20261203-a33s31).
func BenchmarkSampleSettings(b *testing.B) {
	for _, sd := range []float64{0.3, 3} {
		for _, c := range []struct {
			name string
			sp   sampleParams
		}{
			{"greedy", sampleParams{seed: 1}},
			{"chat", sampleParams{topP: 1, temp: 0.7, seed: 1}},
			{"topk40", sampleParams{topK: 40, topP: 0.95, minP: 0.05, temp: 0.7, seed: 1}},
		} {
			b.Run(fmt.Sprintf("sd=%g/%s", sd, c.name), func(b *testing.B) { benchSample(b, 49152, sd, c.sp) })
		}
	}
}

// benchSample draws from n logits of N(0, sd) with sp on one thread, the
// step advancing every iteration.
func benchSample(b *testing.B, n int, sd float64, sp sampleParams) {
	r := rand.New(rand.NewPCG(5, 5))
	h := newHarness(b)
	h.be = New(Options{Threads: 1})
	x, o, s := h.f32("x", randVec(r, n, sd)), h.i32("o", []int32{0}), h.nan("s", 2*n)
	st := h.i32("settings", sp.settings(false, 0))
	d := plan.SampleArgs{Draws: plan.None, X: bind(x), Out: bind(o), Settings: bind(st), Counts: plan.None, Scratch: bind(s), Logprobs: plan.None, N: n}.Dispatch()
	d.AddPatch(plan.PatchSampleStep, plan.VarStep, 1, 0)
	h.add(d)
	ex := h.load()
	b.ReportAllocs()
	v := plan.Vars{}
	for b.Loop() {
		v[plan.VarStep]++
		if err := ex.Run(0, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSampleTopPOnly(b *testing.B) {
	const n = 49152
	r := rand.New(rand.NewPCG(6, 6))
	h := newHarness(b)
	x, o, s := h.f32("x", randVec(r, n, 3)), h.i32("o", []int32{0}), h.nan("s", 2*n)
	st := h.i32("settings", sampleParams{topP: 0.95, temp: 1, seed: 1}.settings(false, 0))
	h.add(plan.SampleArgs{Draws: plan.None, X: bind(x), Out: bind(o), Settings: bind(st), Counts: plan.None, Scratch: bind(s), Logprobs: plan.None, N: int(n)}.Dispatch())
	benchOne(b, h, 0)
}

// BenchmarkToyDecodeStep replays the 23-dispatch toy decoder step of
// decodePlan: with tiny shapes it measures the executor's per-dispatch
// overhead (patching, checks, pool handoffs) more than the kernels.
func BenchmarkToyDecodeStep(b *testing.B) {
	h, _ := decodePlan(b)
	ex := h.load()
	p := 0
	b.ReportAllocs()
	for b.Loop() {
		v := plan.Vars{plan.VarPos: int64(p % 24), plan.VarKVLen: int64(p%24 + 1), plan.VarSlot: int64(p % 24), plan.VarStep: int64(p)}
		if err := ex.Run(0, &v); err != nil {
			b.Fatal(err)
		}
		p++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(h.pass.Ops)), "ns/dispatch")
}

// BenchmarkAttentionEncoderBlocks is BenchmarkAttentionEncoder on the
// blocked path with the query rows of an item swept, on one worker (w1:
// ns/op is one thread's time) and on a pool of GOMAXPROCS workers (wN, as
// a transcription runs it). The default is attnBlockScores/1500 = 43 rows,
// and each item's two sgemm calls pack the head's 1,500 keys or values
// again, so larger blocks pack less a query row, but at 16 workers fewer,
// larger items balance worse (issue #37, round 7: the encoder's attention
// products were 20% of a 16-thread transcription's samples). cpuns/op is
// the process's CPU time an op (getrusage), steadier than the wall on a
// loaded machine, but on wN it counts the workers' spinning too.
func BenchmarkAttentionEncoderBlocks(b *testing.B) {
	const T, nHead, hd = 1500, 6, 64
	if !blas.Available() {
		b.Skip("no system BLAS: the blocked path needs one")
	}
	pools := []struct {
		name string
		p    *Pool
	}{{"w1", benchPool}, {"wN", NewPool(runtime.GOMAXPROCS(0))}}
	defer pools[1].p.Close()
	for _, pl := range pools {
		for _, rows := range []int{16, 43, 64, 86, 128, 172, 375} {
			b.Run(fmt.Sprintf("%s/rows%d", pl.name, rows), func(b *testing.B) {
				oldRows, oldScores := attnBlockRows, attnBlockScores
				attnBlockRows, attnBlockScores = rows, rows*T
				defer func() { attnBlockRows, attnBlockScores = oldRows, oldScores }()
				r := rand.New(rand.NewPCG(1, 1))
				h := &harness{t: b, be: New(Options{Pool: pl.p}), init: map[plan.BufID][]byte{}}
				h.p.Name = b.Name()
				h.pass, _ = h.p.AddPass("main")
				q, k, v := h.f32("q", randVec(r, T*nHead*hd, 1)), h.f32("k", randVec(r, T*nHead*hd, 1)), h.f32("v", randVec(r, T*nHead*hd, 1))
				o := h.nan("o", T*nHead*hd)
				h.add(plan.AttentionArgs{Type: ggml.F32, Q: bind(q), K: bind(k), V: bind(v), Out: bind(o), Probs: plan.None, HeadDim: hd, NHead: nHead, NKV: nHead, M: T, Ldq: nHead * hd, Ldo: nHead * hd, KVLen: T, Scale: 0.125, HeadStride: hd, PosStride: nHead * hd}.Dispatch())
				ex := h.load()
				vars := plan.Vars{}
				if err := ex.Run(0, &vars); err != nil {
					b.Fatal(err)
				}
				c0 := processCPU()
				for b.Loop() {
					if err := ex.Run(0, &vars); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpuns/op")
				b.ReportMetric(4*T*T*hd*nHead*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// processCPU is the process's user and system CPU time so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
