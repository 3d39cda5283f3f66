package llm

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
)

// Pass indices of an LLM plan.
const (
	// PassPrefill feeds VarNTok tokens from VarPos (tokens[VarPos...]) with
	// matrix-matrix products and writes the last token's logits.
	PassPrefill = iota
	// PassDecode feeds the one token tokens[VarPos] with matrix-vector
	// products and writes its logits.
	PassDecode
	// PassArgmax writes the argmax of the logits to tokens[VarKVLen], where
	// the next decode step reads it.
	PassArgmax
	// PassSample draws from the logits with the sampler the plan was built
	// with into tokens[VarKVLen]; penalties look at VarUser0 tokens from
	// tokens[VarUser1]; VarStep is the draw counter. Present only when
	// Options.Sampler is set.
	PassSample
)

// layout records the buffers of a built plan that the host touches.
type layout struct {
	tokens plan.BufID // IO: i32[ctx+1], the whole token sequence
	logits plan.BufID // IO: f32[nVocab]
	ctx    int
	batch  int
	sample bool
	kvType ggml.Type
}

type builder struct {
	a   Arch
	h   HParams
	f   *gguf.File
	p   *plan.Plan
	err error
	wts *plan.Weights
}

func (b *builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

var none = plan.None

func (b *builder) has(name string) bool { _, ok := b.f.Tensor(name); return ok }

// weight binds a tensor of the file, checking its shape (ggml order).
func (b *builder) weight(name string, shape ...int) (plan.Binding, ggml.Type) {
	t, ok := b.f.Tensor(name)
	if !ok {
		b.fail("llm: the model has no tensor %q", name)
		return none, ggml.F32
	}
	okShape := len(t.Shape) >= len(shape)
	for i := range t.Shape {
		want := int64(1)
		if i < len(shape) {
			want = int64(shape[i])
		}
		okShape = okShape && t.Shape[i] == want
	}
	if !okShape {
		b.fail("llm: tensor %q has shape %v, want %v", name, t.Shape, shape)
	}
	if !t.Type.Supported() {
		b.fail("%v", &ggml.UnsupportedError{Tensor: name, Type: t.Type})
	}
	return b.wts.Bind(name, t.Data), t.Type
}

// vector binds a 1-D f32 tensor (norm weights, biases): kernels read them
// as f32.
func (b *builder) vector(name string, n int) plan.Binding {
	bind, t := b.weight(name, n)
	if b.err == nil && t != ggml.F32 {
		b.fail("llm: tensor %q is %s, want f32", name, t)
	}
	return bind
}

// optVector is vector for a tensor that may be absent.
func (b *builder) optVector(name string, n int) plan.Binding {
	if !b.has(name) {
		return none
	}
	return b.vector(name, n)
}

func (b *builder) buffer(name string, kind plan.BufKind, bytes int) plan.BufID {
	return b.p.AddBuffer(plan.Buffer{Name: name, Kind: kind, Size: int64(bytes)})
}

// ntok patches a row count (target) from VarNTok (times mul) in prefill.
func ntok(d *plan.Dispatch, prefill bool, target plan.PatchTarget, mul int64) {
	if prefill {
		d.AddPatch(target, plan.VarNTok, mul, 0)
	}
}

// scratch holds the activation buffers shared by the passes; rows is the
// prefill batch.
type scratch struct {
	x, h, qkv, att, gate, up plan.BufID
}

// buildPlan lays out prefill, decode and token selection for one model.
func buildPlan(a Arch, h HParams, f *gguf.File, ctx, batch int, kvt ggml.Type, smp *Sampler) (*plan.Plan, *layout, error) {
	p := &plan.Plan{Name: "llm-" + a.Name}
	b := &builder{a: a, h: h, f: f, p: p, wts: plan.NewWeights(p)}
	lay := &layout{ctx: ctx, batch: batch, sample: smp != nil}
	lay.tokens = b.buffer("tokens", plan.IO, 4*(ctx+1))
	lay.logits = b.buffer("logits", plan.IO, 4*h.NVocab)
	qkvW := h.QDim() + 2*h.KVDim()
	s := scratch{
		x:    b.buffer("x", plan.Scratch, 4*batch*h.NEmbd),
		h:    b.buffer("h", plan.Scratch, 4*batch*h.NEmbd),
		qkv:  b.buffer("qkv", plan.Scratch, 4*batch*qkvW),
		att:  b.buffer("attn", plan.Scratch, 4*batch*h.QDim()),
		gate: b.buffer("ffn.gate", plan.Scratch, 4*batch*h.NFF),
		up:   b.buffer("ffn.up", plan.Scratch, 4*batch*h.NFF),
	}
	var factors []float32
	if b.has("rope_freqs.weight") {
		fb := b.vector("rope_freqs.weight", h.RopeDim/2)
		if b.err == nil {
			factors = bytesF32(b.p.Buffers[fb.Buf].Data)
		}
	}
	if b.err == nil {
		if err := checkScaling(h.Scaling, factors != nil); err != nil {
			return nil, nil, err
		}
	}
	freqs, err := ropeFreqs(h, factors)
	if err != nil {
		return nil, nil, err
	}
	freqBuf := b.p.AddBuffer(plan.Buffer{Name: "rope.freqs", Kind: plan.BufWeights, Size: int64(4 * len(freqs)), Data: f32Bytes(freqs)})

	// KV caches, [kv head][position][head dim] per layer, so one head's
	// keys are contiguous for attention.
	lay.kvType = kvt
	es := 2
	if kvt == ggml.F32 {
		es = 4
	}
	kc := make([]plan.BufID, h.NLayer)
	vc := make([]plan.BufID, h.NLayer)
	for l := range h.NLayer {
		kc[l] = b.buffer(fmt.Sprintf("cache.k%d", l), plan.State, es*h.NKV*ctx*h.HeadDim)
		vc[l] = b.buffer(fmt.Sprintf("cache.v%d", l), plan.State, es*h.NKV*ctx*h.HeadDim)
	}
	pre, _ := b.p.AddPass("prefill")
	b.forward(pre, true, lay, s, plan.Binding{Buf: freqBuf}, kc, vc)
	dec, _ := b.p.AddPass("decode")
	b.forward(dec, false, lay, s, plan.Binding{Buf: freqBuf}, kc, vc)
	am, _ := b.p.AddPass("argmax")
	d := plan.ArgmaxArgs{X: plan.F32At(lay.logits, 0), Out: plan.F32At(lay.tokens, 0), N: h.NVocab, M: 1, Ldx: h.NVocab}.Dispatch()
	d.AddPatch(plan.PatchArgmaxOutOff, plan.VarKVLen, 4, 0)
	am.Add(d)
	if smp != nil {
		b.samplePass(lay, *smp)
	}
	if b.err != nil {
		return nil, nil, b.err
	}
	if err := b.p.Validate(); err != nil {
		return nil, nil, err
	}
	return b.p, lay, nil
}

func (b *builder) samplePass(lay *layout, smp Sampler) {
	n := b.h.NVocab
	scr := b.buffer("sample.scratch", plan.Scratch, 4*2*n)
	ps, _ := b.p.AddPass("sample")
	a := smp.kernelArgs()
	a.X, a.Out, a.Hist, a.Scratch = plan.F32At(lay.logits, 0), plan.F32At(lay.tokens, 0), plan.F32At(lay.tokens, 0), plan.F32At(scr, 0)
	a.N = n
	d := a.Dispatch()
	d.AddPatch(plan.PatchSampleOutOff, plan.VarKVLen, 4, 0)
	d.AddPatch(plan.PatchSampleHistOff, plan.VarUser1, 4, 0)
	d.AddPatch(plan.PatchSampleHistLen, plan.VarUser0, 1, 0)
	d.AddPatch(plan.PatchSampleStep, plan.VarStep, 1, 0)
	ps.Add(d)
}

// forward emits one pass: embedding, the blocks, the final norm and the
// logits of the last token.
func (b *builder) forward(ps *plan.Pass, prefill bool, lay *layout, s scratch, freqs plan.Binding, kc, vc []plan.BufID) {
	h := b.h
	m := 1
	mat := plan.MatVec
	if prefill {
		m, mat = lay.batch, plan.MatMul
	}
	ne, hd := h.NEmbd, h.HeadDim
	qd, kvd := h.QDim(), h.KVDim()
	qkvW := qd + 2*kvd

	emb, et := b.weight("token_embd.weight", ne, h.NVocab)
	d := plan.EmbedArgs{Type: et, Table: emb, Ids: plan.F32At(lay.tokens, 0), Out: plan.F32At(s.x, 0), Dim: ne, N: m, Ldo: ne}.Dispatch()
	d.AddPatch(plan.PatchEmbedIdsOff, plan.VarPos, 4, 0)
	ntok(&d, prefill, plan.PatchEmbedN, 1)
	ps.Add(d)

	// linear emits out = in·Wᵀ + bias (+ res); with g set (decode) the
	// RMSNorm of in is fused in.
	linear := func(name string, nOut, nIn int, in plan.Binding, ldi int, out plan.Binding, ldo int, bias, res, g plan.Binding) {
		w, wt := b.weight(name, nIn, nOut)
		k := mat
		if g != none {
			k = plan.RMSNormMatVec
		}
		a := plan.MatVecArgs{Type: wt, W: w, X: in, Out: out, Bias: bias, Res: res, N: nOut, K: nIn, M: m, Ldx: ldi, Ldo: ldo, Ldr: ldo}
		var d plan.Dispatch
		switch k {
		case plan.RMSNormMatVec:
			d = plan.RMSNormMatVecArgs{Type: wt, W: w, X: in, Out: out, Bias: bias, Res: res, G: g,
				N: nOut, K: nIn, M: m, Ldx: ldi, Ldo: ldo, Ldr: ldo, Eps: h.Eps}.Dispatch()
		case plan.MatMul:
			d = plan.MatMulArgs(a).Dispatch()
		default:
			d = a.Dispatch()
		}
		ntok(&d, prefill, plan.PatchMatVecM, 1)
		ps.Add(d)
	}
	// rmsNorm normalises rows of dim values; inner > 1 groups rows inside
	// a wider row (per-head norms in the QKV row).
	rmsNorm := func(w plan.Binding, dim, rows, inner, ld int, x, out plan.Binding) {
		d := plan.RMSNormArgs{X: x, W: w, Out: out, Dim: dim, Rows: rows, Ldx: ld, Ldo: ld, Eps: h.Eps, Inner: inner}.Dispatch()
		ntok(&d, prefill, plan.PatchRMSNormRows, int64(max(inner, 1)))
		ps.Add(d)
	}

	for l := range h.NLayer {
		pre := fmt.Sprintf("blk.%d.", l)
		bias := func(n string, size int) plan.Binding {
			if b.a.QKVBias && n != "attn_output" {
				return b.vector(pre+n+".bias", size)
			}
			return b.optVector(pre+n+".bias", size)
		}
		attnNorm := b.vector(pre+"attn_norm.weight", ne)
		in, g := plan.F32At(s.h, 0), none
		if prefill {
			rmsNorm(attnNorm, ne, m, 1, ne, plan.F32At(s.x, 0), plan.F32At(s.h, 0))
		} else {
			in, g = plan.F32At(s.x, 0), attnNorm
		}
		linear(pre+"attn_q.weight", qd, ne, in, ne, plan.F32At(s.qkv, 0), qkvW, bias("attn_q", qd), none, g)
		linear(pre+"attn_k.weight", kvd, ne, in, ne, plan.F32At(s.qkv, qd), qkvW, bias("attn_k", kvd), none, g)
		linear(pre+"attn_v.weight", kvd, ne, in, ne, plan.F32At(s.qkv, qd+kvd), qkvW, bias("attn_v", kvd), none, g)
		if b.a.QKNorm {
			rmsNorm(b.vector(pre+"attn_q_norm.weight", hd), hd, m*h.NHead, h.NHead, qkvW, plan.F32At(s.qkv, 0), plan.F32At(s.qkv, 0))
			rmsNorm(b.vector(pre+"attn_k_norm.weight", hd), hd, m*h.NKV, h.NKV, qkvW, plan.F32At(s.qkv, qd), plan.F32At(s.qkv, qd))
		}

		rk := plan.RopeKVArgs{Type: lay.kvType, QKV: plan.F32At(s.qkv, 0), Freqs: freqs, KCache: plan.F32At(kc[l], 0), VCache: plan.F32At(vc[l], 0),
			HeadDim: hd, NHead: h.NHead, NKV: h.NKV, M: m, Ldqkv: qkvW, Mode: b.a.RopeMode, RopeDim: h.RopeDim,
			HeadStride: lay.ctx * hd, PosStride: hd}.Dispatch()
		rk.AddPatch(plan.PatchRopeKVPos0, plan.VarPos, 1, 0)
		ntok(&rk, prefill, plan.PatchRopeKVM, 1)
		ps.Add(rk)

		at1 := plan.AttentionArgs{Type: lay.kvType, Q: plan.F32At(s.qkv, 0), K: plan.F32At(kc[l], 0), V: plan.F32At(vc[l], 0),
			Out: plan.F32At(s.att, 0), Probs: none, HeadDim: hd, NHead: h.NHead, NKV: h.NKV, M: m, Ldq: qkvW, Ldo: qd,
			Flags: plan.FlagCausal, Scale: float32(1 / math.Sqrt(float64(hd))), HeadStride: lay.ctx * hd, PosStride: hd}.Dispatch()
		at1.AddPatch(plan.PatchAttentionKVLen, plan.VarKVLen, 1, 0)
		at1.AddPatch(plan.PatchAttentionPos0, plan.VarPos, 1, 0)
		ntok(&at1, prefill, plan.PatchAttentionM, 1)
		ps.Add(at1)

		linear(pre+"attn_output.weight", ne, qd, plan.F32At(s.att, 0), qd, plan.F32At(s.x, 0), ne, bias("attn_output", ne), plan.F32At(s.x, 0), none)

		ffnNorm := b.vector(pre+"ffn_norm.weight", ne)
		in, g = plan.F32At(s.h, 0), none
		if prefill {
			rmsNorm(ffnNorm, ne, m, 1, ne, plan.F32At(s.x, 0), plan.F32At(s.h, 0))
		} else {
			in, g = plan.F32At(s.x, 0), ffnNorm
		}
		linear(pre+"ffn_gate.weight", h.NFF, ne, in, ne, plan.F32At(s.gate, 0), h.NFF, none, none, g)
		linear(pre+"ffn_up.weight", h.NFF, ne, in, ne, plan.F32At(s.up, 0), h.NFF, none, none, g)
		w, wt := b.weight(pre+"ffn_down.weight", h.NFF, ne)
		if prefill {
			sm := plan.SiLUMulArgs{Gate: plan.F32At(s.gate, 0), Up: plan.F32At(s.up, 0), Out: plan.F32At(s.gate, 0),
				N: h.NFF, M: m, Ldg: h.NFF, Ldu: h.NFF, Ldo: h.NFF}.Dispatch()
			ntok(&sm, prefill, plan.PatchSiLUMulM, 1)
			ps.Add(sm)
			linear(pre+"ffn_down.weight", ne, h.NFF, plan.F32At(s.gate, 0), h.NFF, plan.F32At(s.x, 0), ne, none, plan.F32At(s.x, 0), none)
		} else {
			ps.Add(plan.SiLUMulMatVecArgs{Type: wt, W: w, Gate: plan.F32At(s.gate, 0), Out: plan.F32At(s.x, 0), Bias: none,
				Res: plan.F32At(s.x, 0), Up: plan.F32At(s.up, 0), N: ne, K: h.NFF, M: 1, Ldg: h.NFF, Ldo: ne, Ldr: ne, Ldu: h.NFF}.Dispatch())
		}
	}

	// Logits of the last token only: its row is found by patching the
	// input offset from VarNTok in prefill.
	outName := "output.weight"
	if !b.has(outName) {
		outName = "token_embd.weight" // tied embeddings
	}
	w, wt := b.weight(outName, ne, h.NVocab)
	d = plan.RMSNormMatVecArgs{Type: wt, W: w, X: plan.F32At(s.x, 0), Out: plan.F32At(lay.logits, 0), Bias: none, Res: none,
		G: b.vector("output_norm.weight", ne), N: h.NVocab, K: ne, M: 1, Ldx: ne, Ldo: h.NVocab, Eps: h.Eps}.Dispatch()
	if prefill {
		d.AddPatch(plan.PatchRMSNormMatVecXOff, plan.VarNTok, int64(4*ne), -int64(4*ne))
	}
	ps.Add(d)
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
