package llm

import (
	"math"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/plan"
)

// forward emits one pass (prefill: m = batch rows with matrix-matrix
// products; decode: one row with matrix-vector products, norms fused into
// the products that follow them). The blocks are chosen by the descriptor.
type forward struct {
	*builder
	ps      *plan.Pass
	prefill bool
	m       int
	mat     plan.Kernel
	lay     *layout
	s       scratch
	w       *modelWeights
	rope    ropeTables
	kc, vc  []plan.BufID
	// paged (batch plans): rows are tokens of many sequences, each at its
	// own position over its own blocks of the KV pools kc, vc
	paged *pagedKV
	// fuse (a batch plan's mat-vec step with BatchOptions.FuseRows): the
	// m rows' norms fused into the products after them and the gated
	// activation into the down product, as decode's one row has them
	fuse bool
}

// emit: the embedding, the blocks, the final norm and the logits of the
// last token.
func (f *forward) emit() {
	f.embed()
	for l := range f.h.NLayer {
		f.attentionBlock(l)
		f.feedForwardBlock(l)
	}
	f.logits()
}

// attentionBlock is x += [norm](attention(h)·Wo) with h = [norm](x).
func (f *forward) attentionBlock(l int) {
	w := &f.w.layers[l]
	h, g := f.inputNorm(w.attnNorm) // h = norm(x)
	f.qkv(w, h, g)                  // q, k, v = h·Wq, h·Wk, h·Wv
	f.qkNorm(w)                     // q, k = norm(q), norm(k), per head
	switch {
	case f.prefill || f.paged != nil:
		f.ropeToCache(l) // rotate q and k; append k, v to the cache
		f.attend(l)      // a = softmax(q·Kᵀ/√d)·V
	case f.foldsO(w):
		f.ropeAttendO(l, w) // x += a·Wo with a as below, one kernel
		return
	default:
		f.ropeAttend(l) // both in one kernel: decode's one row
	}
	f.residual(w.o, f.s.att, f.h.QDim(), w.oBias, w.attnPost) // x += [norm](a·Wo)
}

// foldedOTypes are the output weights' types RopeAttentionMatVec is
// emitted for: those the GPU kernels have instances of (shaders'
// rope_attention_mat_vec: the bench files' and the common files' types).
var foldedOTypes = map[ggml.Type]bool{ggml.F32: true, ggml.F16: true, ggml.Q8_0: true, ggml.Q4_0: true}

// foldsO reports whether decode's attention and its output product are
// one RopeAttentionMatVec dispatch: f16 caches, a square output product
// straight onto x (no post-norm) of a type the GPUs have.
func (f *forward) foldsO(w *layerWeights) bool {
	return f.lay.kvType == ggml.F16 && !w.attnPost.ok() && w.o.ok() && foldedOTypes[w.o.typ] &&
		f.h.QDim() == f.h.NEmbd
}

// feedForwardBlock is x += [norm](down(act(gate(h)) ⊙ up(h))) with h =
// [norm](x), or x += [norm](down(gelu(up(h)))) for a plain FFN.
func (f *forward) feedForwardBlock(l int) {
	w := &f.w.layers[l]
	ff := f.h.NFF
	h, g := f.inputNorm(w.ffnNorm) // h = norm(x)
	if f.a.FFN == FFNGELU {
		f.project(w.up, h, g, f.s.up)                       // u = h·Wup
		f.gelu(f.at(f.s.up, 0))                             // u = gelu(u)
		f.residual(w.down, f.s.up, ff, tensor{}, w.ffnPost) // x += [norm](u·Wdown)
		return
	}
	gate, up, ld := f.gateUp()
	if w.gateUp.ok() {
		f.linear(w.gateUp, 2*ff, f.h.NEmbd, h, f.h.NEmbd, gate, ld, none, none, g) // gate|u = h·Wgate|up
	} else {
		f.linear(w.gate, ff, f.h.NEmbd, h, f.h.NEmbd, gate, ld, none, none, g) // gate = h·Wgate
		f.linear(w.up, ff, f.h.NEmbd, h, f.h.NEmbd, up, ld, none, none, g)     // u = h·Wup
	}
	f.gatedResidual(w.down, w.ffnPost) // x += [norm]((act(gate) ⊙ u)·Wdown)
}

// gateUp is where the gated FFN's gate and up rows live and their row
// stride: one gate|up row when the model's pairs are fused, else a
// buffer each.
func (f *forward) gateUp() (gate, up plan.Binding, ld int) {
	ff := f.h.NFF
	if f.w.gateUpRow {
		return f.at(f.s.gate, 0), f.at(f.s.gate, ff), 2 * ff
	}
	return f.at(f.s.gate, 0), f.at(f.s.up, 0), ff
}

// project is out = h·Wᵀ into a scratch buffer of NFF columns (the plain
// FFN's up projection).
func (f *forward) project(w tensor, h, g plan.Binding, out plan.BufID) {
	ne, ff := f.h.NEmbd, f.h.NFF
	f.linear(w, ff, ne, h, ne, f.at(out, 0), ff, none, none, g)
}

// residual is x += [norm](in·Wᵀ + bias) for a sublayer's last product
// (nIn columns of in): straight onto x, or through h when a post-norm
// follows.
func (f *forward) residual(w tensor, in plan.BufID, nIn int, bias, post tensor) {
	out, res := f.sublayerOut(post)
	f.linear(w, f.h.NEmbd, nIn, f.at(in, 0), nIn, out, f.h.NEmbd, bias.bind(), res, none)
	f.addNormed(post)
}

// gatedResidual is residual for a gated FFN: the activation a kernel of
// its own in prefill and fused into the down projection in decode.
func (f *forward) gatedResidual(down, post tensor) {
	out, res := f.sublayerOut(post)
	f.gatedDown(down, out, res)
	f.addNormed(post)
}

func (f *forward) at(id plan.BufID, col int) plan.Binding { return plan.F32At(id, col) }

// inputNorm is a sublayer's input: in prefill the rows of x normalised
// into h; in decode x itself with the norm weight g for the products to
// fuse. Without a pre-norm it is x.
func (f *forward) inputNorm(w tensor) (in, g plan.Binding) {
	x := f.at(f.s.x, 0)
	switch {
	case !w.ok():
		return x, none
	case f.prefill && !f.fuse:
		f.rmsNorm(w, f.h.NEmbd, f.m, 1, f.h.NEmbd, x, f.at(f.s.h, 0))
		return f.at(f.s.h, 0), none
	}
	return x, w.bind()
}

// sublayerOut is where a sublayer's last product writes and what it adds:
// straight onto x, or into h when a post-norm follows (addNormed).
func (f *forward) sublayerOut(post tensor) (out, res plan.Binding) {
	if post.ok() {
		return f.at(f.s.h, 0), none
	}
	return f.at(f.s.x, 0), f.at(f.s.x, 0)
}

// addNormed finishes a post-normed sublayer: x += norm(h).
func (f *forward) addNormed(post tensor) {
	if !post.ok() {
		return
	}
	ne := f.h.NEmbd
	h := f.at(f.s.h, 0)
	f.rmsNorm(post, ne, f.m, 1, ne, h, h)
	f.add(f.at(f.s.x, 0), h)
}

// embed: x = embedding(tokens) (· √d with Arch.EmbedScale).
func (f *forward) embed() {
	ne := f.h.NEmbd
	d := plan.EmbedArgs{Type: f.w.embd.typ, Table: f.w.embd.bind(), Ids: f.at(f.lay.tokens, 0), Out: f.at(f.s.x, 0), Add: plan.None, Dim: ne, N: f.m, Ldo: ne}.Dispatch()
	d.AddPatch(plan.PatchEmbedIdsOff, plan.VarPos, 4, 0)
	f.rows(&d, plan.PatchEmbedN, 1)
	f.ps.Add(d)
	if f.a.EmbedScale {
		f.scale(f.at(f.s.x, 0), float32(math.Sqrt(float64(ne))))
	}
}

// qkv projects the input into one fused row per token: Q, then K, then V.
func (f *forward) qkv(w *layerWeights, in, g plan.Binding) {
	ne, qd, kvd := f.h.NEmbd, f.h.QDim(), f.h.KVDim()
	ld := qd + 2*kvd
	if w.qkv.ok() { // one product over the stacked rows (fuse.go)
		f.linear(w.qkv, ld, ne, in, ne, f.at(f.s.qkv, 0), ld, none, none, g)
		return
	}
	f.linear(w.q, qd, ne, in, ne, f.at(f.s.qkv, 0), ld, w.qBias.bind(), none, g)
	f.linear(w.k, kvd, ne, in, ne, f.at(f.s.qkv, qd), ld, w.kBias.bind(), none, g)
	f.linear(w.v, kvd, ne, in, ne, f.at(f.s.qkv, qd+kvd), ld, w.vBias.bind(), none, g)
}

// qkNorm normalises each head of Q and K in the QKV rows (Arch.QKNorm).
func (f *forward) qkNorm(w *layerWeights) {
	if !f.a.QKNorm {
		return
	}
	h := f.h
	ld := h.QDim() + 2*h.KVDim()
	q, k := f.at(f.s.qkv, 0), f.at(f.s.qkv, h.QDim())
	f.rmsNorm(w.qNorm, h.HeadDim, f.m*h.NHead, h.NHead, ld, q, q)
	f.rmsNorm(w.kNorm, h.HeadDim, f.m*h.NKV, h.NKV, ld, k, k)
}

// ropeToCache rotates Q and K (local layers with their own frequencies)
// and appends K and V to layer l's cache.
func (f *forward) ropeToCache(l int) {
	h := f.h
	freqs := f.rope.global
	if f.a.Sliding(l) {
		freqs = f.rope.local
	}
	if pg := f.paged; pg != nil {
		d := plan.RopeKVPagedArgs{Type: f.lay.kvType, QKV: f.at(f.s.qkv, 0), Freqs: freqs, KCache: f.at(f.kc[l], 0), VCache: f.at(f.vc[l], 0),
			Pos: f.at(pg.pos, 0), Table: f.at(pg.table, 0), HeadDim: h.HeadDim, NHead: h.NHead, NKV: h.NKV, M: f.m, Ldqkv: h.QDim() + 2*h.KVDim(),
			Mode: f.a.RopeMode, RopeDim: h.RopeDim, HeadStride: pg.headStride(h), PosStride: h.HeadDim, BlockSize: pg.blockSize,
			BlockStride: pg.blockStride(h), NBlocks: pg.blocks, TableStride: pg.tableStride}.Dispatch()
		f.rows(&d, plan.PatchRopeKVPagedM, 1)
		f.ps.Add(d)
		return
	}
	d := plan.RopeKVArgs{Type: f.lay.kvType, QKV: f.at(f.s.qkv, 0), Freqs: freqs, KCache: f.at(f.kc[l], 0), VCache: f.at(f.vc[l], 0),
		HeadDim: h.HeadDim, NHead: h.NHead, NKV: h.NKV, M: f.m, Ldqkv: h.QDim() + 2*h.KVDim(), Mode: f.a.RopeMode, RopeDim: h.RopeDim,
		HeadStride: f.lay.ctx * h.HeadDim, PosStride: h.HeadDim}.Dispatch()
	d.AddPatch(plan.PatchRopeKVPos0, plan.VarPos, 1, 0)
	f.rows(&d, plan.PatchRopeKVM, 1)
	f.ps.Add(d)
}

// attend: causal softmax(q·Kᵀ/√hd)·V over layer l's cache (the last
// Window positions in a sliding-window layer).
func (f *forward) attend(l int) {
	h := f.h
	window := 0
	if f.a.Sliding(l) {
		window = h.Window
	}
	scale := float32(1 / math.Sqrt(float64(h.HeadDim)))
	if pg := f.paged; pg != nil {
		d := plan.AttentionPagedArgs{Type: f.lay.kvType, Q: f.at(f.s.qkv, 0), K: f.at(f.kc[l], 0), V: f.at(f.vc[l], 0), Out: f.at(f.s.att, 0),
			Pos: f.at(pg.pos, 0), Table: f.at(pg.table, 0), HeadDim: h.HeadDim, NHead: h.NHead, NKV: h.NKV, M: f.m, Ldq: h.QDim() + 2*h.KVDim(),
			Ldo: h.QDim(), Scale: scale, HeadStride: pg.headStride(h), PosStride: h.HeadDim, BlockSize: pg.blockSize,
			BlockStride: pg.blockStride(h), NBlocks: pg.blocks, TableStride: pg.tableStride, Window: window}.Dispatch()
		f.rows(&d, plan.PatchAttentionPagedM, 1)
		f.ps.Add(d)
		return
	}
	d := plan.AttentionArgs{Type: f.lay.kvType, Q: f.at(f.s.qkv, 0), K: f.at(f.kc[l], 0), V: f.at(f.vc[l], 0),
		Out: f.at(f.s.att, 0), Probs: none, HeadDim: h.HeadDim, NHead: h.NHead, NKV: h.NKV, M: f.m, Ldq: h.QDim() + 2*h.KVDim(), Ldo: h.QDim(),
		Flags: plan.FlagCausal, Scale: scale, HeadStride: f.lay.ctx * h.HeadDim, PosStride: h.HeadDim,
		Window: window}.Dispatch()
	d.AddPatch(plan.PatchAttentionKVLen, plan.VarKVLen, 1, 0)
	d.AddPatch(plan.PatchAttentionPos0, plan.VarPos, 1, 0)
	f.rows(&d, plan.PatchAttentionM, 1)
	f.ps.Add(d)
}

// ropeAttend is ropeToCache then attend as one dispatch (RopeAttention),
// for decode's one row: one launch a layer fewer on a GPU (issue #34).
func (f *forward) ropeAttend(l int) {
	h := f.h
	freqs, window := f.rope.global, 0
	if f.a.Sliding(l) {
		freqs, window = f.rope.local, h.Window
	}
	d := plan.RopeAttentionArgs{Type: f.lay.kvType, Q: f.at(f.s.qkv, 0), K: f.at(f.kc[l], 0), V: f.at(f.vc[l], 0),
		Out: f.at(f.s.att, 0), Freqs: freqs, HeadDim: h.HeadDim, NHead: h.NHead, NKV: h.NKV, M: f.m,
		Ldq: h.QDim() + 2*h.KVDim(), Ldo: h.QDim(), Flags: plan.FlagCausal, Scale: float32(1 / math.Sqrt(float64(h.HeadDim))),
		HeadStride: f.lay.ctx * h.HeadDim, PosStride: h.HeadDim, Window: window, Mode: f.a.RopeMode, RopeDim: h.RopeDim}.Dispatch()
	d.AddPatch(plan.PatchRopeAttentionKVLen, plan.VarKVLen, 1, 0)
	d.AddPatch(plan.PatchRopeAttentionPos0, plan.VarPos, 1, 0)
	f.ps.Add(d)
}

// ropeAttendO is ropeAttend then x += a·Wo + bias as one dispatch
// (RopeAttentionMatVec): a GPU folds the product into the attention
// launch (issue #34: 4 launches a layer).
func (f *forward) ropeAttendO(l int, w *layerWeights) {
	h := f.h
	freqs, window := f.rope.global, 0
	if f.a.Sliding(l) {
		freqs, window = f.rope.local, h.Window
	}
	d := plan.RopeAttentionMatVecArgs{Type: w.o.typ, Q: f.at(f.s.qkv, 0), K: f.at(f.kc[l], 0), V: f.at(f.vc[l], 0),
		Att: f.at(f.s.att, 0), Freqs: freqs, W: w.o.bind(), Out: f.at(f.s.x, 0), Bias: w.oBias.bind(), HeadDim: h.HeadDim,
		NHead: h.NHead, NKV: h.NKV, M: f.m, Ldq: h.QDim() + 2*h.KVDim(), Ldo: h.QDim(), Flags: plan.FlagCausal,
		Scale: float32(1 / math.Sqrt(float64(h.HeadDim))), HeadStride: f.lay.ctx * h.HeadDim, PosStride: h.HeadDim,
		Window: window, Mode: f.a.RopeMode, RopeDim: h.RopeDim}.Dispatch()
	d.AddPatch(plan.PatchRopeAttentionMatVecKVLen, plan.VarKVLen, 1, 0)
	d.AddPatch(plan.PatchRopeAttentionMatVecPos0, plan.VarPos, 1, 0)
	f.ps.Add(d)
}

// gatedDown: out = (act(gate) ⊙ up)·downᵀ + res, the activation a kernel
// of its own in prefill and fused into the product in decode (and in a
// fused batch step, over its m rows).
func (f *forward) gatedDown(down tensor, out, res plan.Binding) {
	ne, ff := f.h.NEmbd, f.h.NFF
	gate, up, ld := f.gateUp()
	if f.prefill && !f.fuse {
		a := plan.SiLUMulArgs{Gate: gate, Up: up, Out: gate, N: ff, M: f.m, Ldg: ld, Ldu: ld, Ldo: ld}
		d, rows := a.Dispatch(), plan.PatchSiLUMulM
		if f.a.FFN == FFNGELUGated {
			d, rows = plan.GELUMulArgs(a).Dispatch(), plan.PatchGELUMulM
		}
		f.rows(&d, rows, 1)
		f.ps.Add(d)
		f.linear(down, ne, ff, gate, ld, out, ne, none, res, none)
		return
	}
	a := plan.SiLUMulMatVecArgs{Type: down.typ, W: down.bind(), Gate: gate, Out: out, Bias: none, Res: res, Up: up,
		N: ne, K: ff, M: f.m, Ldg: ld, Ldo: ne, Ldr: ne, Ldu: ld}
	d := a.Dispatch()
	if f.a.FFN == FFNGELUGated {
		d = plan.GELUMulMatVecArgs(a).Dispatch()
	}
	f.rows(&d, plan.PatchGatedM, 1)
	f.ps.Add(d)
}

// logits of the last token only, after the final norm: its row is found
// by patching the input offset from VarNTok in prefill.
func (f *forward) logits() {
	h := f.h
	ne := h.NEmbd
	if f.paged != nil {
		// every row's logits: each row may end its sequence's chunk
		if f.fuse && f.w.outputNorm.ok() {
			f.linear(f.w.output, h.NVocab, ne, f.at(f.s.x, 0), ne, f.at(f.lay.logits, 0), h.NVocab, none, none, f.w.outputNorm.bind())
			return
		}
		f.rmsNorm(f.w.outputNorm, ne, f.m, 1, ne, f.at(f.s.x, 0), f.at(f.s.h, 0))
		f.linear(f.w.output, h.NVocab, ne, f.at(f.s.h, 0), ne, f.at(f.lay.logits, 0), h.NVocab, none, none, none)
		return
	}
	d := plan.RMSNormMatVecArgs{Type: f.w.output.typ, W: f.w.output.bind(), X: f.at(f.s.x, 0), Out: f.at(f.lay.logits, 0), Bias: none, Res: none,
		G: f.w.outputNorm.bind(), N: h.NVocab, K: ne, M: 1, Ldx: ne, Ldo: h.NVocab, Eps: h.Eps}.Dispatch()
	if f.prefill {
		d.AddPatch(plan.PatchRMSNormMatVecXOff, plan.VarNTok, int64(4*ne), -int64(4*ne))
	}
	f.ps.Add(d)
}

// Kernel emitters. rows patches a row count (target) from VarNTok (times
// mul) in prefill.
func (f *forward) rows(d *plan.Dispatch, target plan.PatchTarget, mul int64) {
	if f.prefill {
		d.AddPatch(target, plan.VarNTok, mul, 0)
	}
}

// linear emits out = in·Wᵀ + bias (+ res); with g set (decode) the
// RMSNorm of in is fused in.
func (f *forward) linear(w tensor, nOut, nIn int, in plan.Binding, ldi int, out plan.Binding, ldo int, bias, res, g plan.Binding) {
	a := plan.MatVecArgs{Type: w.typ, W: w.bind(), X: in, Out: out, Bias: bias, Res: res, N: nOut, K: nIn, M: f.m, Ldx: ldi, Ldo: ldo, Ldr: ldo}
	var d plan.Dispatch
	switch {
	case g != none:
		d = plan.RMSNormMatVecArgs{Type: w.typ, W: w.bind(), X: in, Out: out, Bias: bias, Res: res, G: g,
			N: nOut, K: nIn, M: f.m, Ldx: ldi, Ldo: ldo, Ldr: ldo, Eps: f.h.Eps}.Dispatch()
	case f.mat == plan.MatMul:
		d = plan.MatMulArgs(a).Dispatch()
	default:
		d = a.Dispatch()
	}
	f.rows(&d, plan.PatchProductM, 1)
	f.ps.Add(d)
}

// rmsNorm normalises rows of dim values; inner > 1 groups rows inside a
// wider row (per-head norms in the QKV row).
func (f *forward) rmsNorm(w tensor, dim, rows, inner, ld int, x, out plan.Binding) {
	d := plan.RMSNormArgs{X: x, W: w.bind(), Out: out, Dim: dim, Rows: rows, Ldx: ld, Ldo: ld, Eps: f.h.Eps, Inner: inner}.Dispatch()
	f.rows(&d, plan.PatchRMSNormRows, int64(max(inner, 1)))
	f.ps.Add(d)
}

// add: x += y over the pass's rows of NEmbd.
func (f *forward) add(x, y plan.Binding) {
	ne := f.h.NEmbd
	d := plan.AddArgs{A: x, B: y, Out: x, N: ne, M: f.m, Lda: ne, Ldb: ne, Ldo: ne}.Dispatch()
	f.rows(&d, plan.PatchAddM, 1)
	f.ps.Add(d)
}

// scale: x *= s over the pass's rows of NEmbd.
func (f *forward) scale(x plan.Binding, s float32) {
	ne := f.h.NEmbd
	d := plan.ScaleArgs{X: x, Out: x, N: ne, M: f.m, Ldx: ne, Ldo: ne, Scale: s}.Dispatch()
	f.rows(&d, plan.PatchScaleM, 1)
	f.ps.Add(d)
}

// gelu: x = gelu_tanh(x) over the pass's rows of NFF.
func (f *forward) gelu(x plan.Binding) {
	ff := f.h.NFF
	d := plan.GELUArgs{X: x, Out: x, N: ff, M: f.m, Ldx: ff, Ldo: ff, Mode: plan.ActGELUTanh}.Dispatch()
	f.rows(&d, plan.PatchGELUM, 1)
	f.ps.Add(d)
}
