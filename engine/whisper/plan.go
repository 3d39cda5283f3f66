package whisper

import (
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// Tensor is one weight as the model file holds it.
type Tensor struct {
	Type  ggml.Type
	Shape []int64 // ggml order: Shape[0] is contiguous
	Data  []byte
}

// Weights looks tensors up by their whisper.cpp names.
type Weights interface {
	Tensor(name string) (Tensor, bool)
}

// Options size the plan.
type Options struct {
	// MaxTokens is the most tokens one decoder step feeds (the prompt of a
	// window: previous-text prompt plus start sequence). Defaults to
	// n_text_ctx.
	MaxTokens int
	// Beams is the number of sequences a beam-search step decodes at once.
	Beams int
}

// Pass indices of a whisper plan.
const (
	PassEncode = iota // mel window -> encoder output and cross-attention K/V of every layer
	PassPrompt        // VarNTok tokens of one sequence from VarPos (matrix products); last row's logits
	PassStep          // one token of one sequence at VarPos (matrix-vector products)
	PassBeams         // one token for each of Beams sequences at VarPos
	PassAlign         // VarNTok tokens from position 0: every row's logits and the cross-attention weights
)

// alignRows bounds the tokens of an alignment pass: a window's text
// tokens (at most n_text_ctx/2) plus the start sequence and EOT.
func alignRows(h HParams) int { return min(h.NTextCtx, h.NTextCtx/2+8) }

// layout records the buffers of a built plan that the host touches.
type layout struct {
	mel       plan.BufID // IO: [n_mels][n_frames] f32, channel-major
	encOut    plan.BufID // State: [n_audio_ctx][n_audio_state] encoder output
	tokens    plan.BufID // IO: i32[max(MaxTokens, Beams)]
	logits    plan.BufID // IO: f32[max(1,Beams)][n_vocab]
	alignment plan.BufID // IO: f32 cross-attention weights [layer][head][tokens][n_audio_ctx]
	alignLog  plan.BufID // IO: f32 logits of every row of an alignment pass
	selfK     []plan.BufID
	selfV     []plan.BufID
	maxTokens int
	beams     int
}

type builder struct {
	h   HParams
	w   Weights
	p   *plan.Plan
	err error
	wts *plan.Weights
}

func (b *builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

// weight returns the binding of a tensor, checking its element count.
func (b *builder) weight(name string, elems int64) (plan.Binding, ggml.Type) {
	t, ok := b.w.Tensor(name)
	if !ok {
		b.fail("whisper: the model has no tensor %q", name)
		return plan.Binding{Buf: plan.NoBuf}, ggml.F32
	}
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	if n != elems {
		b.fail("whisper: tensor %q has %d elements, want %d (shape %v)", name, n, elems, t.Shape)
	}
	if !t.Type.Supported() {
		b.fail("%v", &ggml.UnsupportedError{Tensor: name, Type: t.Type})
	}
	return b.wts.Bind(name, t.Data), t.Type
}

// f32 weights (biases, norms, positional embeddings) must be f32 because
// the kernels read them as f32.
func (b *builder) weightF32(name string, elems int64) plan.Binding {
	bind, t := b.weight(name, elems)
	if b.err == nil && t != ggml.F32 {
		b.fail("whisper: tensor %q is %s, want f32", name, t)
	}
	return bind
}

func (b *builder) scratch(name string, floats int) plan.BufID {
	return b.p.AddBuffer(plan.Buffer{Name: name, Kind: plan.Scratch, Size: int64(floats) * 4})
}

var (
	at    = plan.F32At
	binds = plan.Binds
	none  = plan.None
)

// linear emits out = x·Wᵀ + bias (+ res) for a Linear layer named prefix.
// m rows; when ntok is set, m is patched from VarNTok at each step.
func (b *builder) linear(ps *plan.Pass, k plan.Kernel, prefix string, hasBias bool, nOut, nIn, m int, ntok bool,
	x plan.Binding, ldx int, out plan.Binding, ldo int, res plan.Binding, ldr int) {
	w, wt := b.weight(prefix+".weight", int64(nOut*nIn))
	bias := none
	if hasBias {
		bias = b.weightF32(prefix+".bias", int64(nOut))
	}
	d := plan.Dispatch{Kernel: k, Type: wt, Grid: [3]uint32{uint32(nOut), uint32(m), 1}}
	d.Bind, d.NBind = binds(w, x, out, bias, res)
	d.P[0], d.P[1], d.P[2], d.P[3], d.P[4], d.P[5] = uint32(nOut), uint32(nIn), uint32(m), uint32(ldx), uint32(ldo), uint32(ldr)
	if ntok {
		d.AddPatch(plan.PatchParam0+2, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}

func (b *builder) layerNorm(ps *plan.Pass, prefix string, dim, rows int, ntok bool, x plan.Binding, out plan.Binding) {
	w := b.weightF32(prefix+".weight", int64(dim))
	bias := b.weightF32(prefix+".bias", int64(dim))
	d := plan.Dispatch{Kernel: plan.LayerNorm, Grid: [3]uint32{uint32(rows), 1, 1}}
	d.Bind, d.NBind = binds(x, w, bias, out)
	d.P[0], d.P[1], d.P[2], d.P[3], d.P[4] = uint32(dim), uint32(rows), uint32(dim), uint32(dim), plan.F32(1e-5)
	if ntok {
		d.AddPatch(plan.PatchParam0+1, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}

func gelu(ps *plan.Pass, n, m int, ntok bool, x plan.Binding) {
	d := plan.Dispatch{Kernel: plan.GELU, Grid: [3]uint32{uint32(n), uint32(m), 1}}
	d.Bind, d.NBind = binds(x, x)
	d.P[0], d.P[1], d.P[2], d.P[3], d.P[4] = uint32(n), uint32(m), uint32(n), uint32(n), 0
	if ntok {
		d.AddPatch(plan.PatchParam0+1, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}

// attention emits one multi-head attention over K/V laid out as rows of
// posStride floats with heads side by side.
type attn struct {
	q           plan.Binding
	ldq         int
	k, v        plan.Binding
	kvType      ggml.Type
	posStride   int
	seqStride   int
	out         plan.Binding
	m           int
	kvLen       int // static length; 0 = patched from VarKVLen
	causal      bool
	perSeq      bool
	ntok        bool
	probs       plan.Binding
	probsStride int
}

func (b *builder) attention(ps *plan.Pass, nHead, nState int, a attn) {
	hd := nState / nHead
	d := plan.Dispatch{Kernel: plan.Attention, Type: a.kvType, Grid: [3]uint32{uint32(nHead), uint32(a.m), 1}}
	d.Bind, d.NBind = binds(a.q, a.k, a.v, a.out, a.probs)
	flags := uint32(0)
	if a.causal {
		flags |= plan.FlagCausal
	}
	if a.perSeq {
		flags |= plan.FlagPerSeqRows
	}
	d.P = [plan.MaxParams]uint32{uint32(hd), uint32(nHead), uint32(nHead), uint32(a.m), uint32(a.ldq), uint32(nState),
		uint32(a.kvLen), 0, flags, plan.F32(float32(1 / math.Sqrt(float64(hd)))), uint32(hd), uint32(a.posStride),
		uint32(a.seqStride), uint32(a.probsStride)}
	if a.kvLen == 0 {
		d.AddPatch(plan.PatchParam0+6, plan.VarKVLen, 1, 0)
	}
	if a.causal || a.perSeq {
		d.AddPatch(plan.PatchParam0+7, plan.VarPos, 1, 0)
	}
	if a.ntok {
		d.AddPatch(plan.PatchParam0+3, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}

// buildPlan lays out the encoder and decoder of a Whisper model.
func buildPlan(h HParams, w Weights, opt Options) (*plan.Plan, *layout, error) {
	if err := h.Validate(); err != nil {
		return nil, nil, err
	}
	if opt.MaxTokens <= 0 || opt.MaxTokens > h.NTextCtx {
		opt.MaxTokens = h.NTextCtx
	}
	if opt.Beams <= 0 {
		opt.Beams = 1
	}
	p := &plan.Plan{Name: "whisper"}
	b := &builder{h: h, w: w, p: p, wts: plan.NewWeights(p)}
	lay := &layout{maxTokens: opt.MaxTokens, beams: opt.Beams}
	b.encoder(lay)
	b.decoder(lay, opt)
	if b.err != nil {
		return nil, nil, b.err
	}
	if err := b.p.Validate(); err != nil {
		return nil, nil, err
	}
	return b.p, lay, nil
}

func (b *builder) encoder(lay *layout) {
	h := b.h
	ns, nf, nctx := h.NAudioState, h.NFrames(), h.NAudioCtx
	lay.mel = b.p.AddBuffer(plan.Buffer{Name: "mel", Kind: plan.IO, Size: int64(h.NMels*nf) * 4})
	conv1 := b.scratch("enc.conv1", nf*ns)
	x := b.scratch("enc.x", nctx*ns)
	hb := b.scratch("enc.h", nctx*ns)
	qkv := b.scratch("enc.qkv", nctx*3*ns)
	att := b.scratch("enc.attn", nctx*ns)
	ff := b.scratch("enc.ff", nctx*4*ns)
	lay.encOut = b.p.AddBuffer(plan.Buffer{Name: "enc.out", Kind: plan.State, Size: int64(nctx*ns) * 4})
	ps, _ := b.p.AddPass("encode")

	conv := func(name string, cin, T, stride int, flags uint32, in plan.Binding, ldx int, out plan.Binding) {
		w, wt := b.weight(name+".weight", int64(3*cin*ns))
		bias := b.weightF32(name+".bias", int64(ns))
		d := plan.Dispatch{Kernel: plan.Conv1D, Type: wt, Grid: [3]uint32{uint32(ns), uint32(T / stride), 1}}
		d.Bind, d.NBind = binds(w, in, bias, out)
		d.P[0], d.P[1], d.P[2], d.P[3], d.P[4], d.P[5], d.P[6], d.P[7], d.P[8] =
			uint32(cin), uint32(ns), uint32(T), 3, uint32(stride), 1, flags, uint32(ldx), uint32(ns)
		ps.Add(d)
		gelu(ps, ns, T/stride, false, out)
	}
	conv("encoder.conv1", h.NMels, nf, 1, plan.FlagChannelMaj, at(lay.mel, 0), nf, at(conv1, 0))
	conv("encoder.conv2", ns, nf, 2, 0, at(conv1, 0), ns, at(x, 0))

	pos := b.weightF32("encoder.positional_embedding", int64(nctx*ns))
	add := plan.Dispatch{Kernel: plan.Add, Grid: [3]uint32{uint32(ns), uint32(nctx), 1}}
	add.Bind, add.NBind = binds(at(x, 0), pos, at(x, 0))
	add.P[0], add.P[1], add.P[2], add.P[3], add.P[4] = uint32(ns), uint32(nctx), uint32(ns), uint32(ns), uint32(ns)
	ps.Add(add)

	for l := 0; l < h.NAudioLayer; l++ {
		pre := fmt.Sprintf("encoder.blocks.%d.", l)
		b.layerNorm(ps, pre+"attn_ln", ns, nctx, false, at(x, 0), at(hb, 0))
		b.linear(ps, plan.MatMul, pre+"attn.query", true, ns, ns, nctx, false, at(hb, 0), ns, at(qkv, 0), 3*ns, none, 0)
		b.linear(ps, plan.MatMul, pre+"attn.key", false, ns, ns, nctx, false, at(hb, 0), ns, at(qkv, ns), 3*ns, none, 0)
		b.linear(ps, plan.MatMul, pre+"attn.value", true, ns, ns, nctx, false, at(hb, 0), ns, at(qkv, 2*ns), 3*ns, none, 0)
		b.attention(ps, h.NAudioHead, ns, attn{q: at(qkv, 0), ldq: 3 * ns, k: at(qkv, ns), v: at(qkv, 2*ns), kvType: ggml.F32,
			posStride: 3 * ns, out: at(att, 0), m: nctx, kvLen: nctx, probs: none})
		b.linear(ps, plan.MatMul, pre+"attn.out", true, ns, ns, nctx, false, at(att, 0), ns, at(x, 0), ns, at(x, 0), ns)
		b.layerNorm(ps, pre+"mlp_ln", ns, nctx, false, at(x, 0), at(hb, 0))
		b.linear(ps, plan.MatMul, pre+"mlp.0", true, 4*ns, ns, nctx, false, at(hb, 0), ns, at(ff, 0), 4*ns, none, 0)
		gelu(ps, 4*ns, nctx, false, at(ff, 0))
		b.linear(ps, plan.MatMul, pre+"mlp.2", true, ns, 4*ns, nctx, false, at(ff, 0), 4*ns, at(x, 0), ns, at(x, 0), ns)
	}
	b.layerNorm(ps, "encoder.ln_post", ns, nctx, false, at(x, 0), at(lay.encOut, 0))
}

func (b *builder) decoder(lay *layout, opt Options) {
	h := b.h
	ns, nctx, nv := h.NTextState, h.NAudioCtx, h.NVocab
	if h.NAudioState != ns {
		b.fail("whisper: audio state %d differs from text state %d", h.NAudioState, ns)
		return
	}
	rows := max(opt.MaxTokens, opt.Beams)
	lay.tokens = b.p.AddBuffer(plan.Buffer{Name: "tokens", Kind: plan.IO, Size: int64(rows) * 4})
	lay.logits = b.p.AddBuffer(plan.Buffer{Name: "logits", Kind: plan.IO, Size: int64(opt.Beams*nv) * 4})
	ar := alignRows(h)
	lay.alignment = b.p.AddBuffer(plan.Buffer{Name: "alignment", Kind: plan.IO,
		Size: int64(h.NTextLayer*h.NTextHead*ar*nctx) * 4})
	lay.alignLog = b.p.AddBuffer(plan.Buffer{Name: "align.logits", Kind: plan.IO, Size: int64(ar*nv) * 4})
	x := b.scratch("dec.x", rows*ns)
	hb := b.scratch("dec.h", rows*ns)
	qkv := b.scratch("dec.qkv", rows*3*ns)
	att := b.scratch("dec.attn", rows*ns)
	ff := b.scratch("dec.ff", rows*4*ns)
	// Cross-attention K/V are computed once per window by the encode pass.
	crossK := make([]plan.BufID, h.NTextLayer)
	crossV := make([]plan.BufID, h.NTextLayer)
	enc := b.p.Passes[PassEncode]
	for l := range h.NTextLayer {
		pre := fmt.Sprintf("decoder.blocks.%d.cross_attn.", l)
		crossK[l] = b.p.AddBuffer(plan.Buffer{Name: fmt.Sprintf("cross.k%d", l), Kind: plan.State, Size: int64(nctx*ns) * 4})
		crossV[l] = b.p.AddBuffer(plan.Buffer{Name: fmt.Sprintf("cross.v%d", l), Kind: plan.State, Size: int64(nctx*ns) * 4})
		b.linear(enc, plan.MatMul, pre+"key", false, ns, ns, nctx, false, at(lay.encOut, 0), ns, at(crossK[l], 0), ns, none, 0)
		b.linear(enc, plan.MatMul, pre+"value", true, ns, ns, nctx, false, at(lay.encOut, 0), ns, at(crossV[l], 0), ns, none, 0)
	}
	// Self-attention caches, one region per beam: [seq][pos][state] f32.
	lay.selfK = make([]plan.BufID, h.NTextLayer)
	lay.selfV = make([]plan.BufID, h.NTextLayer)
	cacheFloats := opt.Beams * h.NTextCtx * ns
	for l := range h.NTextLayer {
		lay.selfK[l] = b.p.AddBuffer(plan.Buffer{Name: fmt.Sprintf("self.k%d", l), Kind: plan.State, Size: int64(cacheFloats) * 4})
		lay.selfV[l] = b.p.AddBuffer(plan.Buffer{Name: fmt.Sprintf("self.v%d", l), Kind: plan.State, Size: int64(cacheFloats) * 4})
	}

	for _, pc := range []decPass{
		{name: "prompt", kern: plan.MatMul, m: opt.MaxTokens, ntok: true},
		{name: "step", kern: plan.MatVec, m: 1},
		{name: "beams", kern: plan.MatVec, m: opt.Beams, beams: true},
		{name: "align", kern: plan.MatMul, m: alignRows(h), ntok: true, align: true},
	} {
		ps, _ := b.p.AddPass(pc.name)
		b.decoderPass(ps, lay, crossK, crossV, x, hb, qkv, att, ff, pc)
	}
}

// decPass configures one decoder pass.
type decPass struct {
	name  string
	kern  plan.Kernel
	m     int
	ntok  bool // m is patched from VarNTok
	beams bool // row t is beam t (one token each)
	align bool // every row's logits plus cross-attention weights
}

func (b *builder) decoderPass(ps *plan.Pass, lay *layout, crossK, crossV []plan.BufID, x, hb, qkv, att, ff plan.BufID, pc decPass) {
	kern, m, ntok, beams := pc.kern, pc.m, pc.ntok, pc.beams
	h := b.h
	ns, nctx, nv := h.NTextState, h.NAudioCtx, h.NVocab
	emb, et := b.weight("decoder.token_embedding.weight", int64(nv*ns))
	d := plan.Dispatch{Kernel: plan.Embed, Type: et, Grid: [3]uint32{uint32(m), 1, 1}}
	d.Bind, d.NBind = binds(emb, at(lay.tokens, 0), at(x, 0))
	d.P[0], d.P[1], d.P[2] = uint32(ns), uint32(m), uint32(ns)
	if ntok {
		d.AddPatch(plan.PatchParam0+1, plan.VarNTok, 1, 0)
	}
	ps.Add(d)

	// x += positional_embedding[pos ...]: consecutive rows for a prompt,
	// the same row for every beam.
	pos := b.weightF32("decoder.positional_embedding", int64(h.NTextCtx*ns))
	add := plan.Dispatch{Kernel: plan.Add, Grid: [3]uint32{uint32(ns), uint32(m), 1}}
	add.Bind, add.NBind = binds(at(x, 0), pos, at(x, 0))
	ldb := ns
	if beams {
		ldb = 0
	}
	add.P[0], add.P[1], add.P[2], add.P[3], add.P[4] = uint32(ns), uint32(m), uint32(ns), uint32(ldb), uint32(ns)
	add.AddPatch(plan.PatchOffset0+1, plan.VarPos, int64(ns)*4, 0)
	if ntok {
		add.AddPatch(plan.PatchParam0+1, plan.VarNTok, 1, 0)
	}
	ps.Add(add)

	seqStride := 0
	if beams {
		seqStride = h.NTextCtx * ns
	}
	for l := range h.NTextLayer {
		pre := fmt.Sprintf("decoder.blocks.%d.", l)
		b.layerNorm(ps, pre+"attn_ln", ns, m, ntok, at(x, 0), at(hb, 0))
		b.linear(ps, kern, pre+"attn.query", true, ns, ns, m, ntok, at(hb, 0), ns, at(qkv, 0), 3*ns, none, 0)
		b.linear(ps, kern, pre+"attn.key", false, ns, ns, m, ntok, at(hb, 0), ns, at(qkv, ns), 3*ns, none, 0)
		b.linear(ps, kern, pre+"attn.value", true, ns, ns, m, ntok, at(hb, 0), ns, at(qkv, 2*ns), 3*ns, none, 0)

		// Store K and V of the new rows in the cache (no rotary embedding).
		kv := plan.Dispatch{Kernel: plan.RopeKV, Type: ggml.F32, Grid: [3]uint32{uint32(m), 1, 1}}
		kv.Bind, kv.NBind = binds(at(qkv, 0), none, at(lay.selfK[l], 0), at(lay.selfV[l], 0))
		flags := uint32(0)
		if beams {
			flags = plan.FlagPerSeqRows
		}
		hd := ns / h.NTextHead
		kv.P = [plan.MaxParams]uint32{uint32(hd), uint32(h.NTextHead), uint32(h.NTextHead), uint32(m), uint32(3 * ns), 0,
			plan.RopeNormal, 0, uint32(hd), uint32(ns), uint32(seqStride), flags, 0}
		kv.AddPatch(plan.PatchParam0+5, plan.VarPos, 1, 0)
		if ntok {
			kv.AddPatch(plan.PatchParam0+3, plan.VarNTok, 1, 0)
		}
		ps.Add(kv)

		b.attention(ps, h.NTextHead, ns, attn{q: at(qkv, 0), ldq: 3 * ns, k: at(lay.selfK[l], 0), v: at(lay.selfV[l], 0),
			kvType: ggml.F32, posStride: ns, seqStride: seqStride, out: at(att, 0), m: m, causal: !beams, perSeq: beams,
			ntok: ntok, probs: none})
		b.linear(ps, kern, pre+"attn.out", true, ns, ns, m, ntok, at(att, 0), ns, at(x, 0), ns, at(x, 0), ns)

		b.layerNorm(ps, pre+"cross_attn_ln", ns, m, ntok, at(x, 0), at(hb, 0))
		b.linear(ps, kern, pre+"cross_attn.query", true, ns, ns, m, ntok, at(hb, 0), ns, at(qkv, 0), ns, none, 0)
		probs := none
		if pc.align {
			probs = at(lay.alignment, l*h.NTextHead*alignRows(h)*nctx)
		}
		b.attention(ps, h.NTextHead, ns, attn{q: at(qkv, 0), ldq: ns, k: at(crossK[l], 0), v: at(crossV[l], 0),
			kvType: ggml.F32, posStride: ns, out: at(att, 0), m: m, kvLen: nctx, ntok: ntok,
			probs: probs, probsStride: nctx})
		b.linear(ps, kern, pre+"cross_attn.out", true, ns, ns, m, ntok, at(att, 0), ns, at(x, 0), ns, at(x, 0), ns)

		b.layerNorm(ps, pre+"mlp_ln", ns, m, ntok, at(x, 0), at(hb, 0))
		b.linear(ps, kern, pre+"mlp.0", true, 4*ns, ns, m, ntok, at(hb, 0), ns, at(ff, 0), 4*ns, none, 0)
		gelu(ps, 4*ns, m, ntok, at(ff, 0))
		b.linear(ps, kern, pre+"mlp.2", true, ns, 4*ns, m, ntok, at(ff, 0), 4*ns, at(x, 0), ns, at(x, 0), ns)
	}

	// Logits: a prompt needs only its last row; beams and alignment need
	// every row.
	if pc.align {
		b.layerNorm(ps, "decoder.ln", ns, m, true, at(x, 0), at(hb, 0))
		b.logits(ps, emb, et, m, true, at(hb, 0), at(lay.alignLog, 0))
		return
	}
	if !ntok {
		b.layerNorm(ps, "decoder.ln", ns, m, false, at(x, 0), at(hb, 0))
		b.logits(ps, emb, et, m, false, at(hb, 0), at(lay.logits, 0))
		return
	}
	last := plan.Dispatch{Kernel: plan.LayerNorm, Grid: [3]uint32{1, 1, 1}}
	last.Bind, last.NBind = binds(at(x, 0), b.weightF32("decoder.ln.weight", int64(ns)), b.weightF32("decoder.ln.bias", int64(ns)), at(hb, 0))
	last.P[0], last.P[1], last.P[2], last.P[3], last.P[4] = uint32(ns), 1, uint32(ns), uint32(ns), plan.F32(1e-5)
	last.AddPatch(plan.PatchOffset0+0, plan.VarNTok, int64(ns)*4, -int64(ns)*4)
	ps.Add(last)
	b.logits(ps, emb, et, 1, false, at(hb, 0), at(lay.logits, 0))
}

// logits projects m rows onto the (tied) token embedding.
func (b *builder) logits(ps *plan.Pass, emb plan.Binding, et ggml.Type, m int, ntok bool, x, out plan.Binding) {
	ns, nv := b.h.NTextState, b.h.NVocab
	k := plan.MatVec
	if ntok {
		k = plan.MatMul
	}
	d := plan.Dispatch{Kernel: k, Type: et, Grid: [3]uint32{uint32(nv), uint32(m), 1}}
	d.Bind, d.NBind = binds(emb, x, out, none, none)
	d.P[0], d.P[1], d.P[2], d.P[3], d.P[4] = uint32(nv), uint32(ns), uint32(m), uint32(ns), uint32(nv)
	if ntok {
		d.AddPatch(plan.PatchParam0+2, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}
