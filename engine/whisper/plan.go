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
	PassEncode           = iota // mel window -> encoder output and cross-attention K/V of every layer
	PassPrompt                  // VarNTok tokens of one sequence from VarPos (matrix products); last row's logits
	PassStep                    // one token of one sequence at VarPos (matrix-vector products)
	PassBeams                   // one token for each of Beams sequences at VarPos
	PassAlign                   // VarNTok tokens from position 0: every row's logits and the cross-attention weights
	PassBeamCopy                // positions [VarPos, VarPos+VarNTok) of sequence beamSrc[d] copied to sequence d in every self-attention cache
	PassSelect                  // a chained greedy step: the logit filters on sequence 0's logits in place (VarUser0 tokens sampled, the track's, VarUser1 the initial-timestamp bound), its argmax into choice, then WhisperTrack (the log-probability, the stop rules, the token into tokens[0])
	PassSelectText              // as PassSelect without the timestamp rules
	PassBeamTop                 // a beam search step on the backend: the logit filters on every beam's logits in place (beam t's sampled tokens are row t of sampled, VarUser0 of them), each beam's top tokens and log-probabilities (plan.Sample's logprobs record) into beamTop, then WhisperBeams (the ranking: sampled, beamState, beamSrc and the tokens the next PassBeams embeds)
	PassBeamTopText             // as PassBeamTop without the timestamp rules
	PassTrackStart              // a window's start on the logits after <|startoftranscript|>: the track reset, the no-speech log-probability (VarUser0 the token limit, VarUser1 the end timestamp)
	PassBeamTopFirst            // PassBeamTop on sequence 0's candidates alone (a window's prompt, which every beam shares)
	PassBeamTopFirstText        // as PassBeamTopFirst without the timestamp rules
	PassAlignWords              // after PassAlign: word timing's path (plan.WhisperAlign: VarUser0 audio frames, VarUser1 the <|notimestamps|> row) and each row's next-token log-probability (plan.TokenLogprob) into alignOut
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
	alignOut  plan.BufID // IO: i32[alignRows] each path row's first frame, then f32[alignRows] each row's next-token log-probability (PassAlignWords)
	selfK     []plan.BufID
	selfV     []plan.BufID
	// State, per decoder layer: the cross-attention keys and values the
	// encode pass writes.
	crossK    []plan.BufID
	crossV    []plan.BufID
	beamSrc   plan.BufID // IO: i32[Beams], the source sequence of each beam for PassBeamCopy
	filter    plan.BufID // IO: f32[2][n_vocab], the logit filters' table (logitFilter.table)
	sampled   plan.BufID // IO: i32[Beams][n_text_ctx], each sequence's tokens sampled in the window
	choice    plan.BufID // IO: i32[Beams], the token each sequence's selection chose
	track     plan.BufID // IO: i32, a greedy window's state, tokens and log-probabilities (plan.WhisperTrack)
	beamTop   plan.BufID // IO: f32[Beams][plan.SampleLogprobWords], each beam's candidates (PassBeamTop)
	topSet    plan.BufID // IO: i32[plan.SampleSettingsWords], the Sample settings of PassBeamTop (argmax, logprobs of the top candidates)
	beamState plan.BufID // IO: i32, a beam search's state, sums and finished sequences (plan.WhisperBeams)
	beamFin   int        // finished sequences beamState holds
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
	at   = plan.F32At
	none = plan.None
)

// prodRows is how a pass's products run: the kernel (MatVec or MatMul) and m
// rows, patched from VarNTok at each step when ntok is set.
type prodRows struct {
	kern plan.Kernel
	m    int
	ntok bool
}

// lin is one Linear layer: out = x·Wᵀ + bias, plus out itself when
// resid is set (the residual stream).
type lin struct {
	prefix   string // weight names: prefix.weight, prefix.bias
	noBias   bool
	nOut     int
	nIn      int
	x        plan.Binding
	ldx      int
	out      plan.Binding
	ldo      int
	residual bool
	gelu     bool // MatVec only: out = gelu(x·Wᵀ + bias) (FlagGELUOut)
}

// linear emits a Linear layer.
func (b *builder) linear(ps *plan.Pass, r prodRows, l lin) {
	addProduct(ps, r, b.linearArgs(r, l))
}

// linearArgs is the product record of a Linear layer.
func (b *builder) linearArgs(r prodRows, l lin) plan.MatVecArgs {
	w, wt := b.weight(l.prefix+".weight", int64(l.nOut*l.nIn))
	a := plan.MatVecArgs{Type: wt, W: w, X: l.x, Out: l.out, Bias: none, Res: none,
		N: l.nOut, K: l.nIn, M: r.m, Ldx: l.ldx, Ldo: l.ldo}
	if !l.noBias {
		a.Bias = b.weightF32(l.prefix+".bias", int64(l.nOut))
	}
	if l.residual {
		a.Res, a.Ldr = l.out, l.ldo
	}
	if l.gelu {
		a.Flags = plan.FlagGELUOut
	}
	return a
}

// normedProduct emits product a of LayerNorm ln's output, the norm taken
// over x's rows (a.K wide) and written to a.X for the product to read.
// In a one-token step (MatVec over one row) whose weights' type has the
// fused form, it is one LayerNormMatVec over x instead: on a GPU a launch
// a norm fewer (issue #34: 47 → 35 graph nodes a tiny model's token,
// 0.309-0.312 → 0.292-0.299 ms a chained greedy token on the H200); the
// normalised rows were read by that one product only, and the residual
// stream reads x itself. The beams pass keeps the launches: each of its
// products would take the statistics of its five rows one after another
// in every SIMD-group (1.48 → 1.90 ms a beam-5 token measured), as would
// the logits product (decoderPass) in each of its ~26,000 SIMD-groups
// (0.306 → 0.365 ms a token with all 13 fused: bench/cuda/20261202-wd35).
func (b *builder) normedProduct(ps *plan.Pass, r prodRows, ln string, x plan.Binding, a plan.MatVecArgs) {
	if r.kern != plan.MatVec || r.m != 1 || !plan.LayerNormMatVecType(a.Type) {
		b.layerNorm(ps, ln, a.K, r.m, r.ntok, x, a.X)
		addProduct(ps, r, a)
		return
	}
	d := plan.LayerNormMatVecArgs{Type: a.Type, W: a.W, X: x, Out: a.Out, Bias: a.Bias, Res: a.Res,
		G: b.weightF32(ln+".weight", int64(a.K)), B: b.weightF32(ln+".bias", int64(a.K)),
		N: a.N, K: a.K, M: a.M, Ldx: a.Ldx, Ldo: a.Ldo, Ldr: a.Ldr, Flags: a.Flags, Eps: 1e-5}.Dispatch()
	if r.ntok {
		d.AddPatch(plan.PatchLayerNormMatVecM, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}

// addProduct emits a as the pass's product kernel, its rows patched from
// VarNTok where the pass's are.
func addProduct(ps *plan.Pass, r prodRows, a plan.MatVecArgs) {
	d := product(r.kern, a)
	if r.ntok {
		d.AddPatch(plan.PatchProductM, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}

// selfQKV projects attn_ln(x), through h, into the decoder's Q|K|V row
// (qkv, row stride 3·ns): one product over the query, key and value
// matrices stacked at load, with the query's and value's biases and zeros
// for the key, which has none (issue #34: two launches a layer fewer; the
// rows' dot products are the separate products'), the norm taken by
// normedProduct. Matrices of different types keep three products after
// the norm's own launch.
func (b *builder) selfQKV(ps *plan.Pass, r prodRows, pre string, x, h, qkv plan.Binding) {
	ns := b.h.NTextState
	names := [3]string{pre + "attn.query", pre + "attn.key", pre + "attn.value"}
	var parts [3][]byte
	var typ ggml.Type
	stack := true
	for i, n := range names {
		t, ok := b.w.Tensor(n + ".weight")
		if _, bt := b.weight(n+".weight", int64(ns*ns)); !ok || (i > 0 && bt != typ) {
			stack = false
		} else {
			typ, parts[i] = bt, t.Data
		}
	}
	if b.err != nil {
		return
	}
	if !stack {
		b.layerNorm(ps, pre+"attn_ln", ns, r.m, r.ntok, x, h)
		for i, n := range names {
			b.linear(ps, r, lin{prefix: n, noBias: i == 1, nOut: ns, nIn: ns, x: h, ldx: ns, out: plan.F32At(qkv.Buf, i*ns), ldo: 3 * ns})
		}
		return
	}
	qb, _ := b.w.Tensor(names[0] + ".bias")
	vb, _ := b.w.Tensor(names[2] + ".bias")
	b.weightF32(names[0]+".bias", int64(ns))
	b.weightF32(names[2]+".bias", int64(ns))
	if b.err != nil {
		return
	}
	w := b.wts.Stack(pre+"attn.qkv.weight", parts[:]...)
	bias := b.wts.Stack(pre+"attn.qkv.bias", qb.Data, make([]byte, 4*ns), vb.Data)
	b.normedProduct(ps, r, pre+"attn_ln", x, plan.MatVecArgs{Type: typ, W: w, X: h, Out: qkv, Bias: bias, Res: none,
		N: 3 * ns, K: ns, M: r.m, Ldx: ns, Ldo: 3 * ns})
}

// product encodes a matrix product as kernel k (MatVec or MatMul, which
// share one record).
func product(k plan.Kernel, a plan.MatVecArgs) plan.Dispatch {
	if k == plan.MatMul {
		return plan.MatMulArgs(a).Dispatch()
	}
	return a.Dispatch()
}

func (b *builder) layerNorm(ps *plan.Pass, prefix string, dim, rows int, ntok bool, x plan.Binding, out plan.Binding) {
	w := b.weightF32(prefix+".weight", int64(dim))
	bias := b.weightF32(prefix+".bias", int64(dim))
	d := plan.LayerNormArgs{X: x, W: w, B: bias, Out: out, Dim: dim, Rows: rows, Ldx: dim, Ldo: dim, Eps: 1e-5}.Dispatch()
	if ntok {
		d.AddPatch(plan.PatchLayerNormRows, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}

func gelu(ps *plan.Pass, n, m int, ntok bool, x plan.Binding) {
	d := plan.GELUArgs{X: x, Out: x, N: n, M: m, Ldx: n, Ldo: n, Mode: plan.ActGELUErf}.Dispatch()
	if ntok {
		d.AddPatch(plan.PatchGELUM, plan.VarNTok, 1, 0)
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
	flags := uint32(0)
	if a.causal {
		flags |= plan.FlagCausal
	}
	if a.perSeq {
		flags |= plan.FlagPerSeqRows
	}
	d := plan.AttentionArgs{Type: a.kvType, Q: a.q, K: a.k, V: a.v, Out: a.out, Probs: a.probs,
		HeadDim: hd, NHead: nHead, NKV: nHead, M: a.m, Ldq: a.ldq, Ldo: nState, KVLen: a.kvLen, Flags: flags,
		Scale: float32(1 / math.Sqrt(float64(hd))), HeadStride: hd, PosStride: a.posStride, SeqStride: a.seqStride,
		Ldp: a.probsStride}.Dispatch()
	if a.kvLen == 0 {
		d.AddPatch(plan.PatchAttentionKVLen, plan.VarKVLen, 1, 0)
	}
	if a.causal || a.perSeq {
		d.AddPatch(plan.PatchAttentionPos0, plan.VarPos, 1, 0)
	}
	if a.ntok {
		d.AddPatch(plan.PatchAttentionM, plan.VarNTok, 1, 0)
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
	p := &plan.Plan{Name: "whisper", FloatActivations: true} // held to the float-activation CPU (plan.Plan.FloatActivations)
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
	// A file's windows alternate with their tokens: on the CPU, the pass's
	// 16.6 MB of scratch given back after each window and faulted in again
	// by the next cost 5% of a 16-thread transcription (issue #37).
	ps.Recurring = true
	win := prodRows{kern: plan.MatMul, m: nctx}

	conv := func(name string, cin, T, stride int, flags uint32, in plan.Binding, ldx int, out plan.Binding) {
		w, wt := b.weight(name+".weight", int64(3*cin*ns))
		bias := b.weightF32(name+".bias", int64(ns))
		ps.Add(plan.Conv1DArgs{Type: wt, W: w, X: in, Bias: bias, Out: out,
			Cin: cin, Cout: ns, T: T, Kw: 3, Stride: stride, Pad: 1, Flags: flags, Ldx: ldx, Ldo: ns}.Dispatch())
		gelu(ps, ns, T/stride, false, out)
	}
	conv("encoder.conv1", h.NMels, nf, 1, plan.FlagChannelMaj, at(lay.mel, 0), nf, at(conv1, 0))
	conv("encoder.conv2", ns, nf, 2, 0, at(conv1, 0), ns, at(x, 0))

	pos := b.weightF32("encoder.positional_embedding", int64(nctx*ns))
	ps.Add(plan.AddArgs{A: at(x, 0), B: pos, Out: at(x, 0), N: ns, M: nctx, Lda: ns, Ldb: ns, Ldo: ns}.Dispatch())

	for l := 0; l < h.NAudioLayer; l++ {
		pre := fmt.Sprintf("encoder.blocks.%d.", l)
		b.layerNorm(ps, pre+"attn_ln", ns, nctx, false, at(x, 0), at(hb, 0))
		b.linear(ps, win, lin{prefix: pre + "attn.query", nOut: ns, nIn: ns, x: at(hb, 0), ldx: ns, out: at(qkv, 0), ldo: 3 * ns})
		b.linear(ps, win, lin{prefix: pre + "attn.key", noBias: true, nOut: ns, nIn: ns, x: at(hb, 0), ldx: ns, out: at(qkv, ns), ldo: 3 * ns})
		b.linear(ps, win, lin{prefix: pre + "attn.value", nOut: ns, nIn: ns, x: at(hb, 0), ldx: ns, out: at(qkv, 2*ns), ldo: 3 * ns})
		b.attention(ps, h.NAudioHead, ns, attn{q: at(qkv, 0), ldq: 3 * ns, k: at(qkv, ns), v: at(qkv, 2*ns), kvType: ggml.F32,
			posStride: 3 * ns, out: at(att, 0), m: nctx, kvLen: nctx, probs: none})
		b.linear(ps, win, lin{prefix: pre + "attn.out", nOut: ns, nIn: ns, x: at(att, 0), ldx: ns, out: at(x, 0), ldo: ns, residual: true})
		b.layerNorm(ps, pre+"mlp_ln", ns, nctx, false, at(x, 0), at(hb, 0))
		b.linear(ps, win, lin{prefix: pre + "mlp.0", nOut: 4 * ns, nIn: ns, x: at(hb, 0), ldx: ns, out: at(ff, 0), ldo: 4 * ns})
		gelu(ps, 4*ns, nctx, false, at(ff, 0))
		b.linear(ps, win, lin{prefix: pre + "mlp.2", nOut: ns, nIn: 4 * ns, x: at(ff, 0), ldx: 4 * ns, out: at(x, 0), ldo: ns, residual: true})
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
	win := prodRows{kern: plan.MatMul, m: nctx}
	for l := range h.NTextLayer {
		pre := fmt.Sprintf("decoder.blocks.%d.cross_attn.", l)
		crossK[l] = b.p.AddBuffer(plan.Buffer{Name: fmt.Sprintf("cross.k%d", l), Kind: plan.State, Size: int64(nctx*ns) * 4})
		crossV[l] = b.p.AddBuffer(plan.Buffer{Name: fmt.Sprintf("cross.v%d", l), Kind: plan.State, Size: int64(nctx*ns) * 4})
		b.linear(enc, win, lin{prefix: pre + "key", noBias: true, nOut: ns, nIn: ns, x: at(lay.encOut, 0), ldx: ns, out: at(crossK[l], 0), ldo: ns})
		b.linear(enc, win, lin{prefix: pre + "value", nOut: ns, nIn: ns, x: at(lay.encOut, 0), ldx: ns, out: at(crossV[l], 0), ldo: ns})
	}
	lay.crossK, lay.crossV = crossK, crossV
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
	b.beamCopy(lay, opt.Beams)
	b.selection(lay, opt.Beams)
	b.alignWords(lay)
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
	m, ntok, beams := pc.m, pc.ntok, pc.beams
	r := prodRows{kern: pc.kern, m: m, ntok: ntok}
	h := b.h
	ns, nctx, nv := h.NTextState, h.NAudioCtx, h.NVocab
	emb, et := b.weight("decoder.token_embedding.weight", int64(nv*ns))
	// x = token_embedding[ids] + positional_embedding[pos ...] in one launch:
	// consecutive rows for a prompt, the same row for every beam.
	pos := b.weightF32("decoder.positional_embedding", int64(h.NTextCtx*ns))
	lda := ns
	if beams {
		lda = 0
	}
	d := plan.EmbedArgs{Type: et, Table: emb, Ids: at(lay.tokens, 0), Out: at(x, 0), Add: pos, Dim: ns, N: m, Ldo: ns, Lda: lda}.Dispatch()
	// the ids from tokens[VarSlot]: a chained window's prompt after SOT
	d.AddPatch(plan.PatchEmbedIdsOff, plan.VarSlot, 4, 0)
	d.AddPatch(plan.PatchEmbedAddOff, plan.VarPos, int64(ns)*4, 0)
	if ntok {
		d.AddPatch(plan.PatchEmbedN, plan.VarNTok, 1, 0)
	}
	ps.Add(d)

	seqStride := 0
	if beams {
		seqStride = h.NTextCtx * ns
	}
	for l := range h.NTextLayer {
		pre := fmt.Sprintf("decoder.blocks.%d.", l)
		b.selfQKV(ps, r, pre, at(x, 0), at(hb, 0), at(qkv, 0))

		b.selfAttention(ps, lay, l, qkv, att, m, ntok, beams, seqStride)
		b.linear(ps, r, lin{prefix: pre + "attn.out", nOut: ns, nIn: ns, x: at(att, 0), ldx: ns, out: at(x, 0), ldo: ns, residual: true})

		b.normedProduct(ps, r, pre+"cross_attn_ln", at(x, 0),
			b.linearArgs(r, lin{prefix: pre + "cross_attn.query", nOut: ns, nIn: ns, x: at(hb, 0), ldx: ns, out: at(qkv, 0), ldo: ns}))
		probs := none
		if pc.align {
			probs = at(lay.alignment, l*h.NTextHead*alignRows(h)*nctx)
		}
		b.attention(ps, h.NTextHead, ns, attn{q: at(qkv, 0), ldq: ns, k: at(crossK[l], 0), v: at(crossV[l], 0),
			kvType: ggml.F32, posStride: ns, out: at(att, 0), m: m, kvLen: nctx, ntok: ntok,
			probs: probs, probsStride: nctx})
		b.linear(ps, r, lin{prefix: pre + "cross_attn.out", nOut: ns, nIn: ns, x: at(att, 0), ldx: ns, out: at(x, 0), ldo: ns, residual: true})

		// a step's or the beams' up product applies GELU itself (issue
		// #34: a launch a layer fewer); MatMul keeps the gelu launch
		fused := r.kern == plan.MatVec
		b.normedProduct(ps, r, pre+"mlp_ln", at(x, 0),
			b.linearArgs(r, lin{prefix: pre + "mlp.0", nOut: 4 * ns, nIn: ns, x: at(hb, 0), ldx: ns, out: at(ff, 0), ldo: 4 * ns, gelu: fused}))
		if !fused {
			gelu(ps, 4*ns, m, ntok, at(ff, 0))
		}
		b.linear(ps, r, lin{prefix: pre + "mlp.2", nOut: ns, nIn: 4 * ns, x: at(ff, 0), ldx: 4 * ns, out: at(x, 0), ldo: ns, residual: true})
	}

	// Logits: a prompt needs only its last row; beams and alignment need
	// every row.
	if pc.align {
		b.layerNorm(ps, "decoder.ln", ns, m, true, at(x, 0), at(hb, 0))
		b.logits(ps, emb, et, m, true, at(hb, 0), at(lay.alignLog, 0))
		return
	}
	if !ntok { // the logits' LayerNorm stays a launch (normedProduct)
		b.layerNorm(ps, "decoder.ln", ns, m, false, at(x, 0), at(hb, 0))
		b.logits(ps, emb, et, m, false, at(hb, 0), at(lay.logits, 0))
		return
	}
	last := plan.LayerNormArgs{X: at(x, 0), W: b.weightF32("decoder.ln.weight", int64(ns)), B: b.weightF32("decoder.ln.bias", int64(ns)),
		Out: at(hb, 0), Dim: ns, Rows: 1, Ldx: ns, Ldo: ns, Eps: 1e-5}.Dispatch()
	last.AddPatch(plan.PatchLayerNormXOff, plan.VarNTok, int64(ns)*4, -int64(ns)*4)
	ps.Add(last)
	b.logits(ps, emb, et, 1, false, at(hb, 0), at(lay.logits, 0))
}

// selfAttention stores K and V of the new rows in layer l's cache (no
// rotary embedding) and attends over it. A pass of one token a sequence
// (step, beams) does both in one RopeAttention launch (issue #34: a launch
// a layer fewer on a GPU); a prompt's rows of one sequence keep RopeKV and
// Attention, since a row would see a key written in the same launch.
func (b *builder) selfAttention(ps *plan.Pass, lay *layout, l int, qkv, att plan.BufID, m int, ntok, beams bool, seqStride int) {
	h := b.h
	ns := h.NTextState
	hd := ns / h.NTextHead
	flags := uint32(0)
	if beams {
		flags = plan.FlagPerSeqRows
	}
	if !ntok && (m == 1 || beams) {
		if !beams {
			flags = plan.FlagCausal
		}
		d := plan.RopeAttentionArgs{Type: ggml.F32, Q: at(qkv, 0), K: at(lay.selfK[l], 0), V: at(lay.selfV[l], 0), Out: at(att, 0),
			Freqs: none, HeadDim: hd, NHead: h.NTextHead, NKV: h.NTextHead, M: m, Ldq: 3 * ns, Ldo: ns, Flags: flags,
			Scale: float32(1 / math.Sqrt(float64(hd))), HeadStride: hd, PosStride: ns, SeqStride: seqStride,
			Mode: plan.RopeNormal}.Dispatch()
		d.AddPatch(plan.PatchRopeAttentionKVLen, plan.VarKVLen, 1, 0)
		d.AddPatch(plan.PatchRopeAttentionPos0, plan.VarPos, 1, 0)
		ps.Add(d)
		return
	}
	kv := plan.RopeKVArgs{Type: ggml.F32, QKV: at(qkv, 0), Freqs: none, KCache: at(lay.selfK[l], 0), VCache: at(lay.selfV[l], 0),
		HeadDim: hd, NHead: h.NTextHead, NKV: h.NTextHead, M: m, Ldqkv: 3 * ns, Mode: plan.RopeNormal,
		HeadStride: hd, PosStride: ns, SeqStride: seqStride, Flags: flags}.Dispatch()
	kv.AddPatch(plan.PatchRopeKVPos0, plan.VarPos, 1, 0)
	if ntok {
		kv.AddPatch(plan.PatchRopeKVM, plan.VarNTok, 1, 0)
	}
	ps.Add(kv)
	b.attention(ps, h.NTextHead, ns, attn{q: at(qkv, 0), ldq: 3 * ns, k: at(lay.selfK[l], 0), v: at(lay.selfV[l], 0),
		kvType: ggml.F32, posStride: ns, seqStride: seqStride, out: at(att, 0), m: m, causal: !beams, perSeq: beams,
		ntok: ntok, probs: none})
}

// logits projects m rows onto the (tied) token embedding.
func (b *builder) logits(ps *plan.Pass, emb plan.Binding, et ggml.Type, m int, ntok bool, x, out plan.Binding) {
	ns, nv := b.h.NTextState, b.h.NVocab
	k := plan.MatVec
	if ntok {
		k = plan.MatMul
	}
	d := product(k, plan.MatVecArgs{Type: et, W: emb, X: x, Out: out, Bias: none, Res: none, N: nv, K: ns, M: m, Ldx: ns, Ldo: nv})
	if ntok {
		d.AddPatch(plan.PatchProductM, plan.VarNTok, 1, 0)
	}
	ps.Add(d)
}

// beamCopy adds PassBeamCopy: beam search reorders the beams' caches on
// the backend (plan.BeamCopy), not through the host. With one beam there
// is nothing to reorder and the pass is empty.
func (b *builder) beamCopy(lay *layout, beams int) {
	h := b.h
	lay.beamSrc = b.p.AddBuffer(plan.Buffer{Name: "beam.src", Kind: plan.IO, Size: int64(beams) * 4})
	ps, _ := b.p.AddPass("beam copy")
	if beams < 2 {
		return
	}
	if beams > plan.BeamCopyMaxSeqs {
		b.fail("whisper: %d beams, at most %d", beams, plan.BeamCopyMaxSeqs)
		return
	}
	ns := h.NTextState
	for l := range h.NTextLayer {
		for _, c := range []plan.BufID{lay.selfK[l], lay.selfV[l]} {
			d := plan.BeamCopyArgs{Type: ggml.F32, Cache: at(c, 0), Src: at(lay.beamSrc, 0),
				Width: ns, Seqs: beams, PosStride: ns, SeqStride: h.NTextCtx * ns}.Dispatch()
			d.AddPatch(plan.PatchBeamCopyPos0, plan.VarPos, 1, 0)
			d.AddPatch(plan.PatchBeamCopyN, plan.VarNTok, 1, 0)
			ps.Add(d)
		}
	}
}
