package cpu

import (
	"math"
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
	f := func(name string, n int) plan.BufID { return h.weights(name, ggml.F32Bytes(randVec(r, n, 1))) }
	tokEmb := w("tok", ggml.F16, vocab, dim)
	wqkv, wo := w("wqkv", ggml.Q8_0, qkvW, dim), w("wo", ggml.F32, dim, nHead*hd)
	wup, wdown := w("wup", ggml.Q4_0, 2*ff, dim), w("wdown", ggml.F16, dim, ff)
	wdown2 := w("wdown2", ggml.Q8_0, dim, ff)
	conv := w("conv", ggml.F16, dim, dim*3)
	gAttn, gFFN, lnW, lnB := f("g_attn", dim), f("g_ffn", dim), f("ln_w", dim), f("ln_b", dim)
	freqs := h.weights("freqs", ggml.F32Bytes(ropeFreqs(hd/2, 10000)))
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
	h.add(slot(plan.EmbedArgs{Type: ggml.F16, Table: bind(tokEmb), Ids: bind(toks), Out: bind(x), Add: plan.None, Dim: int(dim), N: 1, Ldo: int(dim)}.Dispatch(), plan.PatchEmbedIdsOff))
	h.add(plan.RMSNormMatVecArgs{Type: ggml.Q8_0, W: bind(wqkv), X: bind(x), Out: bind(qkv), Bias: plan.None, Res: plan.None, G: bind(gAttn), N: int(qkvW), K: int(dim), M: 1, Ldx: int(dim), Ldo: int(qkvW), Eps: 1e-5}.Dispatch())
	h.add(plan.RMSNormArgs{X: bind(qkv), W: plan.None, Out: bind(qkv), Dim: int(hd), Rows: int(nHead), Ldx: int(qkvW), Ldo: int(qkvW), Eps: 1e-6, Inner: int(nHead)}.Dispatch()) // per-head q norm
	h.add(pos(plan.RopeKVArgs{Type: ggml.F16, QKV: bind(qkv), Freqs: bind(freqs), KCache: bind(kc), VCache: bind(vc), HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: 1, Ldqkv: int(qkvW), Mode: plan.RopeNeoX, RopeDim: int(hd), HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss)}.Dispatch(), plan.PatchRopeKVPos0))
	a := pos(plan.AttentionArgs{Type: ggml.F16, Q: bind(qkv), K: bind(kc), V: bind(vc), Out: bind(att), Probs: plan.None, HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: 1, Ldq: int(qkvW), Ldo: int(nHead * hd), Flags: plan.FlagCausal, Scale: 0.25, HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss), Window: 5}.Dispatch(), plan.PatchAttentionPos0)
	a.Patch[a.NPatch] = plan.Patch{Target: plan.PatchAttentionKVLen, Var: plan.VarKVLen, Mul: 1}
	a.NPatch++
	h.add(a)
	ra := pos(plan.RopeAttentionArgs{Type: ggml.F16, Q: bind(qkv), K: bind(kc), V: bind(vc), Out: bind(att), Freqs: bind(freqs), HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: 1, Ldq: int(qkvW), Ldo: int(nHead * hd), Flags: plan.FlagCausal, Scale: 0.25, HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss), Window: 5, Mode: plan.RopeNeoX}.Dispatch(), plan.PatchRopeAttentionPos0)
	ra.Patch[ra.NPatch] = plan.Patch{Target: plan.PatchRopeAttentionKVLen, Var: plan.VarKVLen, Mul: 1}
	ra.NPatch++
	h.add(ra)
	// the same attention with the output product onto x (Wo square: nHead·hd = dim)
	ram := pos(plan.RopeAttentionMatVecArgs{Type: ggml.F32, Q: bind(qkv), K: bind(kc), V: bind(vc), Att: bind(att), Freqs: bind(freqs), W: bind(wo), Out: bind(x), Bias: bind(gAttn), HeadDim: int(hd), NHead: int(nHead), NKV: int(nKV), M: 1, Ldq: int(qkvW), Ldo: int(nHead * hd), Flags: plan.FlagCausal, Scale: 0.25, HeadStride: int(hs), PosStride: int(ps), SeqStride: int(ss), Window: 5, Mode: plan.RopeNeoX}.Dispatch(), plan.PatchRopeAttentionMatVecPos0)
	ram.Patch[ram.NPatch] = plan.Patch{Target: plan.PatchRopeAttentionMatVecKVLen, Var: plan.VarKVLen, Mul: 1}
	ram.NPatch++
	h.add(ram)
	// a sequence at its own position over a pool of 4 blocks of 4
	pool := nKV * 4 * hd
	pk := h.p.AddBuffer(plan.Buffer{Name: "pool.k", Kind: plan.State, Size: int64(2 * 4 * pool)})
	pv := h.p.AddBuffer(plan.Buffer{Name: "pool.v", Kind: plan.State, Size: int64(2 * 4 * pool)})
	ppos, ptab := h.i32("paged.pos", []int32{3, 6}), h.i32("paged.table", []int32{2, 0, 1, 3})
	h.add(plan.RopeKVPagedArgs{Type: ggml.F16, QKV: bind(qkv), Freqs: bind(freqs), KCache: bind(pk), VCache: bind(pv), Pos: bind(ppos), Table: bind(ptab),
		HeadDim: hd, NHead: nHead, NKV: nKV, M: 1, Ldqkv: qkvW, Mode: plan.RopeNeoX, HeadStride: 4 * hd, PosStride: hd,
		BlockSize: 4, BlockStride: pool, NBlocks: 4, TableStride: 2}.Dispatch())
	h.add(plan.AttentionPagedArgs{Type: ggml.F16, Q: bind(qkv), K: bind(pk), V: bind(pv), Out: bind(att), Pos: bind(ppos), Table: bind(ptab),
		HeadDim: hd, NHead: nHead, NKV: nKV, M: 1, Ldq: qkvW, Ldo: nHead * hd, Scale: 0.25, HeadStride: 4 * hd, PosStride: hd,
		BlockSize: 4, BlockStride: pool, NBlocks: 4, TableStride: 2}.Dispatch())
	h.add(plan.MatMulArgs{Type: ggml.F32, W: bind(wo), X: bind(att), Out: bind(x), Bias: plan.None, Res: bind(x), N: int(dim), K: int(nHead * hd), M: 1, Ldx: int(nHead * hd), Ldo: int(dim), Ldr: int(dim)}.Dispatch())
	h.add(plan.RMSNormArgs{X: bind(x), W: bind(gFFN), Out: bind(tmp), Dim: int(dim), Rows: 1, Ldx: int(dim), Ldo: int(dim), Eps: 1e-5}.Dispatch())
	h.add(plan.MatVecArgs{Type: ggml.Q4_0, W: bind(wup), X: bind(tmp), Out: bind(gu), Bias: plan.None, Res: plan.None, N: int(2 * ff), K: int(dim), M: 1, Ldx: int(dim), Ldo: int(2 * ff)}.Dispatch())
	sm := plan.SiLUMulMatVecArgs{Type: ggml.F16, W: bind(wdown), Gate: bind(gu), Out: bind(x), Bias: plan.None, Res: bind(x), Up: bind(gu), N: int(dim), K: int(ff), M: 1, Ldg: int(2 * ff), Ldo: int(dim), Ldr: int(dim), Ldu: int(2 * ff)}.Dispatch()
	sm.Bind[5].Off = 4 * ff
	h.add(sm)
	h.add(plan.SiLUMulArgs{Gate: bind(gu), Up: bind(gu), Out: bind(tmp), N: int(dim), M: 1}.Dispatch())
	gm := plan.GELUMulMatVecArgs{Type: ggml.Q8_0, W: bind(wdown2), Gate: bind(gu), Out: bind(x), Bias: plan.None, Res: bind(x), Up: bind(gu), N: dim, K: ff, M: 1, Ldg: 2 * ff, Ldo: dim, Ldr: dim, Ldu: 2 * ff}.Dispatch()
	gm.Bind[5].Off = 4 * ff
	h.add(gm)
	h.add(plan.GELUMulArgs{Gate: bind(gu), Up: bind(gu), Out: bind(tmp), N: dim, M: 1}.Dispatch())
	h.add(plan.LayerNormArgs{X: bind(x), W: bind(lnW), B: bind(lnB), Out: bind(tmp), Dim: int(dim), Rows: 1, Ldx: int(dim), Ldo: int(dim), Eps: 1e-5}.Dispatch())
	// the same norm in a product's prologue (Wo square), GELU on its output
	h.add(plan.LayerNormMatVecArgs{Type: ggml.F32, W: bind(wo), X: bind(x), Out: bind(tmp2), Bias: bind(lnB), Res: plan.None, G: bind(lnW), B: bind(lnB),
		N: int(dim), K: int(dim), M: 1, Ldx: int(dim), Ldo: int(dim), Flags: plan.FlagGELUOut, Eps: 1e-5}.Dispatch())
	h.add(plan.GELUArgs{X: bind(tmp), Out: bind(tmp), N: int(dim), M: 1, Ldx: int(dim), Ldo: int(dim)}.Dispatch())
	h.add(plan.AddArgs{A: bind(tmp), B: bind(x), Out: bind(tmp), N: int(dim), M: 1, Lda: int(dim), Ldo: int(dim)}.Dispatch())
	h.add(plan.ScaleArgs{X: bind(tmp), Out: bind(tmp), N: int(dim), M: 1, Ldx: int(dim), Ldo: int(dim), Scale: 0.5}.Dispatch())
	h.add(pos(plan.RopeArgs{X: bind(tmp), Freqs: bind(freqs), HeadDim: int(hd), NHead: int(dim / hd), M: 1, Ldx: int(dim), Mode: plan.RopeNormal, RopeDim: int(hd)}.Dispatch(), plan.PatchRopePos0))
	h.add(plan.Conv1DArgs{Type: ggml.F16, W: bind(conv), X: bind(tmp), Bias: plan.None, Out: bind(tmp2), Cin: int(dim), Cout: int(dim), T: 1, Kw: 3, Stride: 1, Pad: 1, Ldx: int(dim), Ldo: int(dim)}.Dispatch())
	h.add(plan.CopyArgs{Type: ggml.F16, Src: bind(tmp2), Dst: bind(half), N: int(dim), M: 1, Lds: int(dim), Ldd: int(dim)}.Dispatch())
	h.add(plan.MatVecArgs{Type: ggml.F16, W: bind(tokEmb), X: bind(x), Out: bind(logits), Bias: plan.None, Res: plan.None, N: int(vocab), K: int(dim), M: 1, Ldx: int(dim), Ldo: int(vocab)}.Dispatch())
	wf := plan.WhisperFilterArgs{X: bind(logits), Table: bind(h.f32("filter.table", make([]float32, 2*vocab))), Hist: bind(toks),
		N: int(vocab), M: 1, Ldx: int(vocab), Ldh: int(ctx), TsBegin: int(vocab) - 8, EOT: int(vocab) - 10, NoTs: int(vocab) - 9,
		Flags: plan.FlagTimestamps}.Dispatch()
	wf.AddPatch(plan.PatchWhisperFilterCount, plan.VarStep, 1, 0) // the timestamp rules read the sampled tokens
	wf.AddPatch(plan.PatchWhisperFilterMaxInitial, plan.VarUser1, 1, 0)
	h.add(wf)
	h.add(plan.SoftmaxArgs{X: bind(logits), Out: bind(probs), N: int(vocab), M: 1, Ldx: int(vocab), Ldo: int(vocab), Scale: 1}.Dispatch())
	h.add(plan.ArgmaxArgs{X: bind(logits), Out: bind(am), N: int(vocab), M: 1, Ldx: int(vocab)}.Dispatch())
	// a greedy Whisper window's state, one selection a step (past Cap it stops)
	tr := plan.WhisperTrackArgs{X: bind(logits), Choice: bind(am), Track: bind(h.i32("track", make([]int32, plan.TrackHeader+2*int(ctx)))),
		Next: plan.None, N: int(vocab), Cap: int(ctx), EOT: int(vocab) - 10, TsBegin: int(vocab) - 8, Token: int(vocab) - 7,
		RepUnit: 4, RepMin: 3, RepSpan: 8}.Dispatch()
	tr.AddPatch(plan.PatchWhisperTrackCount, plan.VarStep, 1, 0)
	h.add(tr)
	// a beam search step of 2 beams, one candidates row for both
	bst := make([]int32, plan.BeamsStateWords(2, 2, int(ctx)))
	bst[plan.BeamsN], bst[plan.BeamsLimit], bst[plan.BeamsMaxCand] = 2, int32(ctx), 2
	h.add(plan.WhisperBeamsArgs{Top: bind(h.f32("beams.top", make([]float32, plan.SampleLogprobWords))),
		Hist: bind(h.i32("beams.hist", make([]int32, 2*int(ctx)))), State: bind(h.i32("beams.state", bst)),
		Src: bind(h.i32("beams.from", make([]int32, 2))), Next: bind(h.i32("beams.next", make([]int32, 2))),
		Beams: 2, Cap: int(ctx), Fin: 2, EOT: int(vocab) - 10}.Dispatch())
	// word timing over the softmax's probabilities as 3 rows of 100
	// frames, and a token's log-probability
	h.add(plan.WhisperAlignArgs{W: bind(probs), Out: bind(h.i32("align.path", make([]int32, 1))), Heads: 1, Group: 1,
		HeadStride: 300, Ldw: 100, Rows: 3, Cols: 100, First: 1, Width: 7}.Dispatch())
	h.add(slot(plan.TokenLogprobArgs{X: bind(logits), Ids: bind(toks), Out: bind(h.f32("logprob", make([]float32, 1))), N: int(vocab), M: 1,
		Ldx: int(vocab)}.Dispatch(), plan.PatchTokenLogprobIdsOff))
	beams := h.p.AddBuffer(plan.Buffer{Name: "beams", Kind: plan.State, Size: int64(4 * 3 * ctx * dim)})
	bsrc := h.i32("beam.src", []int32{2, 0, 1}) // a cycle: every source is saved first
	h.add(pos(plan.BeamCopyArgs{Type: ggml.F32, Cache: bind(beams), Src: bind(bsrc), Width: int(dim), Seqs: 3, N: 1, PosStride: int(dim), SeqStride: int(ctx * dim)}.Dispatch(), plan.PatchBeamCopyPos0))
	settings := sampleParams{topK: 40, topP: 0.9, minP: 0.05, temp: 0.8, rep: 1.1, seed: 1, bias: map[int32]float32{3: 2, 7: -100}}.settings(true, 5)
	s := plan.SampleArgs{Draws: plan.None, X: bind(logits), Out: bind(toks), Settings: bind(h.i32("sample.settings", settings)),
		Counts: bind(h.i32("sample.counts", make([]int32, 2*vocab+1))), Scratch: bind(samp),
		Logprobs: bind(h.f32("sample.logprobs", make([]float32, plan.SampleLogprobWords))), N: int(vocab)}.Dispatch()
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
		ps.Add(plan.ScaleArgs{X: bind(a), Out: bind(a), N: 16, M: 1, Ldx: 16, Ldo: 16, Scale: 2}.Dispatch())
		mut(&p, ps)
		_, err := be.Load(&p)
		return err
	}
	require.NoError(t, mk(func(*plan.Plan, *plan.Pass) {}))
	cases := map[string]func(p *plan.Plan, ps *plan.Pass){
		"names buffer 9":           func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Bind[1].Buf = 9 },
		"unknown kernel":           func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Kernel = 200 },
		"writes to weights buffer": func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Bind[1].Buf = 1 },
		"has 10 bytes of data":     func(p *plan.Plan, _ *plan.Pass) { p.Buffers[1].Data = make([]byte, 10) },
		"is not a weights buffer":  func(p *plan.Plan, _ *plan.Pass) { p.Buffers[0].Data = make([]byte, 64) },
		"negative size":            func(p *plan.Plan, _ *plan.Pass) { p.Buffers[0].Size = -1 },
		"too large":                func(p *plan.Plan, _ *plan.Pass) { p.Buffers[0].Size = 1 << 50 },
		"destination type q4_0":    func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Kernel, ps.Ops[0].Type = plan.Copy, ggml.Q4_0 },
		"KV type q8_0":             func(_ *plan.Plan, ps *plan.Pass) { *ps = plan.Pass{}; ps.Add(attnOp(ggml.Q8_0)) },
		"embedding table type iq2_xs": func(_ *plan.Plan, ps *plan.Pass) {
			ps.Ops[0] = plan.EmbedArgs{Add: plan.None, Type: ggml.IQ2_XS, Table: bind(1), Ids: bind(0), Out: bind(0)}.Dispatch()
		},
		"required binding 1 is empty": func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Bind[1].Buf = plan.NoBuf },
		// raw words on purpose: a Scale record relabelled GELU, whose
		// word 4 (GELU's mode) then holds a value no builder writes
		"unknown GELU mode": func(_ *plan.Plan, ps *plan.Pass) { ps.Ops[0].Kernel, ps.Ops[0].P[4] = plan.GELU, 7 },
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
	return plan.AttentionArgs{Type: typ, Q: bind(0), K: bind(0), V: bind(0), Out: bind(0), Probs: plan.None, HeadDim: 4, NHead: 1, NKV: 1, M: 1, Ldq: 4, Ldo: 4, KVLen: 1, HeadStride: 4, PosStride: 4}.Dispatch()
}

func TestRunErrorsInsteadOfPanics(t *testing.T) {
	h := newHarness(t)
	x := h.f32("x", make([]float32, 16))
	o := h.nan("o", 16)
	d := plan.ScaleArgs{X: bind(x), Out: bind(o), N: 4, M: 1, Ldx: 4, Ldo: 4, Scale: 2}.Dispatch()
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
	h.pass.Ops = []plan.Dispatch{plan.ScaleArgs{X: bind(x), Out: bind(o), N: 4, M: 2, Ldx: 4, Ldo: 2, Scale: 2}.Dispatch()}
	h.ex = nil
	require.ErrorContains(t, h.load().Run(0, nil), "smaller than row length")
	// misaligned patched offset
	d2 := plan.ScaleArgs{X: bind(x), Out: bind(o), N: 2, M: 1, Ldx: 2, Ldo: 2, Scale: 2}.Dispatch()
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

// RunJoined runs its passes in order with each one's variables, as Runs
// one after the other would, as one pass of the pool (counted, not
// timed); a pass that cannot run fails the call before any runs.
func TestRunJoinedIsOnePoolPass(t *testing.T) {
	h := newHarness(t)
	h.be = New(Options{Threads: 2}) // a pool of its own: its passes are this test's
	t.Cleanup(h.be.Close)
	x := h.f32("x", []float32{1, 2, 3, 4})
	y := h.nan("y", 4)
	z := h.nan("z", 4)
	double := plan.ScaleArgs{X: bind(x), Out: bind(y), N: 2, M: 1, Ldx: 2, Ldo: 2, Scale: 2}.Dispatch()
	double.NPatch = 2
	double.Patch[0] = plan.Patch{Target: plan.PatchScaleM, Var: plan.VarNTok, Mul: 1}
	double.Patch[1] = plan.Patch{Target: plan.PatchScaleOutOff, Var: plan.VarPos, Mul: 4}
	h.add(double)
	second, _ := h.p.AddPass("second")
	second.Add(plan.ScaleArgs{X: bind(y), Out: bind(z), N: 4, M: 1, Ldx: 4, Ldo: 4, Scale: 3}.Dispatch())
	ex := h.load()
	var _ plan.Joiner = ex
	pool := h.be.Pool()
	before := pool.Passes()
	require.NoError(t, ex.RunJoined([]int{0, 0, 1}, []plan.Vars{{plan.VarNTok: 1}, {plan.VarNTok: 1, plan.VarPos: 2}, {}}))
	require.Equal(t, uint64(1), pool.Passes()-before, "three passes joined: one pool pass")
	require.Equal(t, []float32{2, 4, 2, 4}, h.readF32(y))
	require.Equal(t, []float32{6, 12, 6, 12}, h.readF32(z))
	require.NoError(t, ex.Run(1, nil))
	require.Equal(t, uint64(2), pool.Passes()-before, "a Run is a pool pass")

	require.NoError(t, ex.Write(z, 0, ggml.F32Bytes(nans(4))))
	require.ErrorContains(t, ex.RunJoined([]int{1, 2}, []plan.Vars{{}, {}}), "pass 2 out of range")
	require.True(t, math.IsNaN(float64(h.readF32(z)[0])), "nothing ran")
	require.ErrorContains(t, ex.RunJoined([]int{1}, nil), "1 passes for 0 step variables")
	require.ErrorContains(t, ex.RunJoined([]int{0, 1}, []plan.Vars{{plan.VarNTok: 9}, {}}), "joined pass 0")
	require.Equal(t, uint64(3), pool.Passes()-before, "only the joined run that started took the pool")
}
