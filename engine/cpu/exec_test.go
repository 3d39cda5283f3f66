package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// decodePlan is a small decoder step that uses every kernel once, with the
// per-step fields patched from Vars like model code does.
func decodePlan(t testing.TB) (*harness, plan.BufID) {
	r := rand.New(rand.NewPCG(40, 41))
	const (
		dim, hd, nHead, nKV, ff, vocab, ctx = 64, 16, 4, 2, 96, 301, 32
		qkvW                                = (nHead + 2*nKV) * hd
	)
	h := newHarness(t)
	scratch := func(name string, floats int) plan.BufID {
		return h.p.AddBuffer(plan.Buffer{Name: name, Kind: plan.Scratch, Size: int64(4 * floats)})
	}
	w := func(name string, typ ggml.Type, n, k int) plan.BufID {
		b, _ := weightsOf(t, r, typ, n, k)
		return h.weights(name, b)
	}
	f := func(name string, n int) plan.BufID { return h.weights(name, f32Bytes(randVec(r, n, 1))) }
	tokEmb := w("tok", ggml.F16, vocab, dim)
	wqkv, wo := w("wqkv", ggml.Q8_0, qkvW, dim), w("wo", ggml.F32, dim, nHead*hd)
	wup, wdown := w("wup", ggml.Q4_0, 2*ff, dim), w("wdown", ggml.F16, dim, ff)
	conv := w("conv", ggml.F16, dim, dim*3)
	gAttn, gFFN, lnW, lnB := f("g_attn", dim), f("g_ffn", dim), f("ln_w", dim), f("ln_b", dim)
	freqs := h.weights("freqs", f32Bytes(ropeFreqs(hd/2, 10000)))
	lay := cacheLayout{seqs: 1, heads: nKV, ctx: ctx, hd: hd}
	hs, ps, ss := lay.strides()
	kc := h.p.AddBuffer(plan.Buffer{Name: "k", Kind: plan.State, Size: int64(2 * lay.size())})
	vc := h.p.AddBuffer(plan.Buffer{Name: "v", Kind: plan.State, Size: int64(2 * lay.size())})
	toks := h.p.AddBuffer(plan.Buffer{Name: "tokens", Kind: plan.State, Size: 4 * ctx})
	x, qkv, att, gu := scratch("x", dim), scratch("qkv", qkvW), scratch("att", nHead*hd), scratch("gu", 2*ff)
	tmp, tmp2 := scratch("tmp", 3*dim), scratch("tmp2", 3*dim)
	logits := h.p.AddBuffer(plan.Buffer{Name: "logits", Kind: plan.IO, Size: 4 * vocab})
	probs := scratch("probs", vocab)
	half := h.p.AddBuffer(plan.Buffer{Name: "half", Kind: plan.Scratch, Size: 2 * dim})
	samp := scratch("sampler", 2*vocab)
	am := h.p.AddBuffer(plan.Buffer{Name: "argmax", Kind: plan.IO, Size: 4})

	slot := func(d plan.Dispatch, t plan.PatchTarget) plan.Dispatch { // binding offset t reads/writes token slot VarSlot
		d.Patch[d.NPatch] = plan.Patch{Target: t, Var: plan.VarSlot, Mul: 4}
		d.NPatch++
		return d
	}
	pos := func(d plan.Dispatch, t plan.PatchTarget) plan.Dispatch {
		d.Patch[d.NPatch] = plan.Patch{Target: t, Var: plan.VarPos, Mul: 1}
		d.NPatch++
		return d
	}
	h.add(slot(op(plan.Embed, ggml.F16, []plan.BufID{tokEmb, toks, x}, dim, 1, dim, 0), plan.PatchEmbedIdsOff))
	h.add(op(plan.RMSNormMatVec, ggml.Q8_0, []plan.BufID{wqkv, x, qkv, plan.NoBuf, plan.NoBuf, gAttn}, qkvW, dim, 1, dim, qkvW, 0, plan.F32(1e-5)))
	h.add(op(plan.RMSNorm, 0, []plan.BufID{qkv, plan.NoBuf, qkv}, hd, nHead, qkvW, qkvW, plan.F32(1e-6), nHead)) // per-head q norm
	h.add(pos(op(plan.RopeKV, ggml.F16, []plan.BufID{qkv, freqs, kc, vc}, hd, nHead, nKV, 1, qkvW, 0, plan.RopeNeoX, hd, uint32(hs), uint32(ps), uint32(ss), 0, 0), plan.PatchRopeKVPos0))
	a := pos(op(plan.Attention, ggml.F16, []plan.BufID{qkv, kc, vc, att}, hd, nHead, nKV, 1, qkvW, nHead*hd, 0, 0, plan.FlagCausal, plan.F32(0.25), uint32(hs), uint32(ps), uint32(ss)), plan.PatchAttentionPos0)
	a.Patch[a.NPatch] = plan.Patch{Target: plan.PatchAttentionKVLen, Var: plan.VarKVLen, Mul: 1}
	a.NPatch++
	h.add(a)
	h.add(op(plan.MatMul, ggml.F32, []plan.BufID{wo, att, x, plan.NoBuf, x}, dim, nHead*hd, 1, nHead*hd, dim, dim))
	h.add(op(plan.RMSNorm, 0, []plan.BufID{x, gFFN, tmp}, dim, 1, dim, dim, plan.F32(1e-5)))
	h.add(op(plan.MatVec, ggml.Q4_0, []plan.BufID{wup, tmp, gu}, 2*ff, dim, 1, dim, 2*ff, 0))
	sm := op(plan.SiLUMulMatVec, ggml.F16, []plan.BufID{wdown, gu, x, plan.NoBuf, x, gu}, dim, ff, 1, 2*ff, dim, dim, 2*ff)
	sm.Bind[5].Off = 4 * ff
	h.add(sm)
	h.add(op(plan.SiLUMul, 0, []plan.BufID{gu, gu, tmp}, dim, 1, 0, 0, 0))
	h.add(op(plan.LayerNorm, 0, []plan.BufID{x, lnW, lnB, tmp}, dim, 1, dim, dim, plan.F32(1e-5)))
	h.add(op(plan.GELU, 0, []plan.BufID{tmp, tmp}, dim, 1, dim, dim, 0))
	h.add(op(plan.Add, 0, []plan.BufID{tmp, x, tmp}, dim, 1, dim, 0, dim))
	h.add(op(plan.Scale, 0, []plan.BufID{tmp, tmp}, dim, 1, dim, dim, plan.F32(0.5)))
	h.add(pos(op(plan.Rope, 0, []plan.BufID{tmp, freqs}, hd, dim/hd, 1, dim, 0, plan.RopeNormal, hd, 0, 0), plan.PatchRopePos0))
	h.add(op(plan.Conv1D, ggml.F16, []plan.BufID{conv, tmp, plan.NoBuf, tmp2}, dim, dim, 1, 3, 1, 1, 0, dim, dim))
	h.add(op(plan.Copy, ggml.F16, []plan.BufID{tmp2, half}, dim, 1, dim, dim))
	h.add(op(plan.MatVec, ggml.F16, []plan.BufID{tokEmb, x, logits}, vocab, dim, 1, dim, vocab, 0))
	h.add(op(plan.Softmax, 0, []plan.BufID{logits, probs}, vocab, 1, vocab, vocab, plan.F32(1)))
	h.add(op(plan.Argmax, 0, []plan.BufID{logits, am}, vocab, 1, vocab))
	s := op(plan.Sample, 0, []plan.BufID{logits, toks, toks, samp}, vocab, 40, plan.F32(0.9), plan.F32(0.05), plan.F32(0.8), plan.F32(1.1), 1, 0, 8, 0, 0, 0)
	s.Patch[0] = plan.Patch{Target: plan.PatchSampleOutOff, Var: plan.VarSlot, Mul: 4, Base: 4} // writes the next slot
	s.Patch[1] = plan.Patch{Target: plan.PatchSampleStep, Var: plan.VarStep, Mul: 1}
	s.NPatch = 2
	h.add(s)
	return h, toks
}

func TestEveryKernelInOnePlanAllocatesNothing(t *testing.T) {
	h, toks := decodePlan(t)
	seen := map[plan.Kernel]bool{}
	for _, d := range h.pass.Ops {
		seen[d.Kernel] = true
	}
	require.Len(t, seen, len(plan.Kernels()), "the plan uses every kernel")
	ex := h.load()
	p := 0
	step := func() {
		v := plan.Vars{plan.VarPos: int64(p % 24), plan.VarKVLen: int64(p%24 + 1), plan.VarSlot: int64(p % 24), plan.VarStep: int64(p)}
		if err := ex.Run(0, &v); err != nil {
			t.Fatal(err)
		}
		p++
	}
	for i := 0; i < 3; i++ {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(20, step))
	// a generated chain of tokens stays in the vocabulary
	ids := h.readI32(toks)
	for _, id := range ids[:20] {
		require.True(t, id >= 0 && id < 301, "token %d", id)
	}

	// RunSeq does the same as Runs one by one
	h2, toks2 := decodePlan(t)
	ex2 := h2.load()
	ex, p = h.load(), 0
	var steps []plan.Vars
	for i := 0; i < 10; i++ {
		steps = append(steps, plan.Vars{plan.VarPos: int64(i), plan.VarKVLen: int64(i + 1), plan.VarSlot: int64(i), plan.VarStep: int64(i)})
		step()
	}
	require.NoError(t, ex2.RunSeq(0, steps))
	require.Equal(t, h.readI32(toks)[:11], h2.readI32(toks2)[:11])
}

func TestLoadRejectsBadPlans(t *testing.T) {
	be := New(Options{Pool: testPool})
	mk := func(mut func(p *plan.Plan, ps *plan.Pass)) error {
		var p plan.Plan
		p.Name = "bad"
		a := p.AddBuffer(plan.Buffer{Name: "a", Kind: plan.Scratch, Size: 64})
		p.AddBuffer(plan.Buffer{Name: "w", Kind: plan.BufWeights, Size: 64, Data: make([]byte, 64)})
		ps, _ := p.AddPass("step")
		ps.Add(op(plan.Scale, 0, []plan.BufID{a, a}, 16, 1, 16, 16, plan.F32(2)))
		mut(&p, ps)
		_, err := be.Load(&p)
		return err
	}
	require.NoError(t, mk(func(*plan.Plan, *plan.Pass) {}))
	cases := map[string]func(p *plan.Plan, ps *plan.Pass){
		"names buffer 9":              func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Bind[1].Buf = 9 },
		"unknown kernel":              func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Kernel = 200 },
		"writes to weights buffer":    func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Bind[1].Buf = 1 },
		"has 10 bytes of data":        func(p *plan.Plan, _ *plan.Pass) { p.Buffers[1].Data = make([]byte, 10) },
		"is not a weights buffer":     func(p *plan.Plan, _ *plan.Pass) { p.Buffers[0].Data = make([]byte, 64) },
		"negative size":               func(p *plan.Plan, _ *plan.Pass) { p.Buffers[0].Size = -1 },
		"too large":                   func(p *plan.Plan, _ *plan.Pass) { p.Buffers[0].Size = 1 << 50 },
		"destination type q4_0":       func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Kernel, ps.Ops[0].Type = plan.Copy, ggml.Q4_0 },
		"KV type q8_0":                func(_ *plan.Plan, ps *plan.Pass) { *ps = plan.Pass{}; ps.Add(attnOp(ggml.Q8_0)) },
		"embedding table type iq2_xs": func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0] = op(plan.Embed, ggml.IQ2_XS, []plan.BufID{1, 0, 0}) },
		"required binding 1 is empty": func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Bind[1].Buf = plan.NoBuf },
		"unknown GELU mode":           func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Kernel, ps.Ops[0].P[4] = plan.GELU, 7 },
		"unknown variable": func(_ *plan.Plan, ps *plan.Pass) {
			ps.Ops[0].NPatch, ps.Ops[0].Patch[0] = 1, plan.Patch{Target: plan.PatchParam0, Var: 99}
		},
		"empty binding 3": func(_ *plan.Plan, ps *plan.Pass) {
			ps.Ops[0].NPatch, ps.Ops[0].Patch[0] = 1, plan.Patch{Target: plan.PatchOffset0 + 3}
		},
	}
	for want, mut := range cases {
		require.ErrorContains(t, mk(mut), want)
	}
	require.ErrorContains(t, mk(func(p *plan.Plan, _ *plan.Pass) { p.Passes = append(p.Passes, nil) }), "nil pass")
	_, err := be.Load(nil)
	require.Error(t, err)
}

func attnOp(typ ggml.Type) plan.Dispatch {
	return op(plan.Attention, typ, []plan.BufID{0, 0, 0, 0}, 4, 1, 1, 1, 4, 4, 1, 0, 0, 0, 4, 4, 0)
}

func TestRunErrorsInsteadOfPanics(t *testing.T) {
	h := newHarness(t)
	x := h.f32("x", make([]float32, 16))
	o := h.nan("o", 16)
	d := op(plan.Scale, 0, []plan.BufID{x, o}, 4, 1, 4, 4, plan.F32(2))
	d.NPatch = 2
	d.Patch[0] = plan.Patch{Target: plan.PatchScaleM, Var: plan.VarNTok, Mul: 1, Base: 1}
	d.Patch[1] = plan.Patch{Target: plan.PatchScaleOutOff, Var: plan.VarPos, Mul: 4}
	h.add(d)
	ex := h.load()
	require.NoError(t, ex.Run(0, &plan.Vars{plan.VarNTok: 3}))
	require.ErrorContains(t, ex.Run(0, &plan.Vars{plan.VarNTok: 4}), "overrun buffer \"x\"")
	require.ErrorContains(t, ex.Run(0, &plan.Vars{plan.VarPos: 13}), "overrun buffer \"o\"")
	require.ErrorContains(t, ex.Run(0, &plan.Vars{plan.VarPos: -1}), "gives -4")
	require.ErrorContains(t, ex.Run(0, &plan.Vars{plan.VarNTok: 1 << 40}), "patch of field 1")
	require.ErrorContains(t, ex.RunSeq(0, []plan.Vars{{}, {plan.VarNTok: 9}}), "step 1")
	require.ErrorContains(t, ex.Run(1, nil), "pass 1 out of range")
	require.ErrorContains(t, ex.Run(-1, nil), "out of range")
	// rows that would overlap
	h.pass.Ops = []plan.Dispatch{op(plan.Scale, 0, []plan.BufID{x, o}, 4, 2, 4, 2, plan.F32(2))}
	h.ex = nil
	require.ErrorContains(t, h.load().Run(0, nil), "smaller than row length")
	// misaligned patched offset
	d2 := op(plan.Scale, 0, []plan.BufID{x, o}, 2, 1, 2, 2, plan.F32(2))
	d2.Bind[1].Off = 2
	h.pass.Ops = []plan.Dispatch{d2}
	h.ex = nil
	require.ErrorContains(t, h.load().Run(0, nil), "not 4-byte aligned")
}

func TestReadWriteBounds(t *testing.T) {
	h := newHarness(t)
	x := h.f32("x", make([]float32, 4))
	w := h.weights("w", make([]byte, 8))
	ex := h.load()
	require.NoError(t, ex.Write(x, 12, []byte{1, 2, 3, 4}))
	require.ErrorContains(t, ex.Write(x, 13, []byte{1, 2, 3, 4}), "outside buffer \"x\"")
	require.ErrorContains(t, ex.Write(x, -1, []byte{1}), "outside")
	require.ErrorContains(t, ex.Read(x, 0, make([]byte, 17)), "outside")
	require.ErrorContains(t, ex.Read(7, 0, nil), "unknown buffer 7")
	require.ErrorContains(t, ex.Write(w, 0, []byte{1}), "read-only")
	b := make([]byte, 4)
	require.NoError(t, ex.Read(x, 12, b))
	require.Equal(t, []byte{1, 2, 3, 4}, b)
	require.NoError(t, ex.Read(w, 0, b))
	require.NoError(t, ex.Close())
	require.ErrorContains(t, ex.Read(x, 0, b), "closed")
	require.ErrorContains(t, ex.Run(0, nil), "closed")
}

func TestBuffersAlignedAndWeightsZeroCopy(t *testing.T) {
	h := newHarness(t)
	data := make([]byte, 64)
	w := h.weights("w", data)
	var bufs []plan.BufID
	for _, n := range []int64{1, 3, 100, 4096} {
		bufs = append(bufs, h.p.AddBuffer(plan.Buffer{Name: "s", Kind: plan.Scratch, Size: n}))
	}
	ex := h.load()
	require.Same(t, &data[0], &ex.BufferBytes(w)[0], "weights are used in place")
	for _, b := range bufs {
		bb := ex.BufferBytes(b)
		require.Zero(t, uintptrOf(bb)%64)
	}
	// misaligned weight data is copied into aligned memory, not rejected
	h2 := newHarness(t)
	odd := make([]byte, 17)
	w2 := h2.weights("w", odd[1:])
	require.Zero(t, uintptrOf(h2.load().BufferBytes(w2))%4)
}
