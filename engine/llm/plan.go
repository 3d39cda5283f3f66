package llm

import (
	"fmt"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
)

var none = plan.None

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
	// PassSample draws from the logits with the generation's sampler
	// settings (the sample.settings buffer) into tokens[VarKVLen], counting
	// the token in sample.counts and writing its logprobs record at
	// sample.logprobs[VarKVLen] when asked; VarStep is the draw counter.
	PassSample
)

// layout records the buffers of a built plan that the host touches.
type layout struct {
	tokens plan.BufID // IO: i32[ctx+1], the whole token sequence
	logits plan.BufID // IO: f32[nVocab]
	// the Sample pass's step data (IO): settings, the sequence's token
	// counts, a logprobs record per position
	settings, counts, logprobs plan.BufID
	ctx                        int
	batch                      int
	kvType                     ggml.Type
}

type builder struct {
	a Arch
	h HParams
	p *plan.Plan
}

func (b *builder) buffer(name string, kind plan.BufKind, bytes int) plan.BufID {
	return b.p.AddBuffer(plan.Buffer{Name: name, Kind: kind, Size: int64(bytes)})
}

// scratch holds the activation buffers shared by the passes; rows is the
// prefill batch.
type scratch struct {
	x, h, qkv, att, gate, up plan.BufID
}

// newBuilder starts a plan named name for the model: its weights bound.
func newBuilder(a Arch, h HParams, f *gguf.File, name string) (*builder, *modelWeights, error) {
	if a.Norm != NormRMS {
		return nil, nil, fmt.Errorf("llm: %s: norm kind %d is not supported", a.Name, a.Norm)
	}
	b := &builder{a: a, h: h, p: &plan.Plan{Name: name}}
	w, err := bindWeights(a, h, f, b.p)
	if err != nil {
		return nil, nil, err
	}
	if err := checkScaling(h.Scaling, w.ropeFactors != nil); err != nil {
		return nil, nil, err
	}
	return b, w, nil
}

// buildPlan lays out prefill, decode and token selection for one model.
func buildPlan(a Arch, h HParams, f *gguf.File, ctx, batch int, kvt ggml.Type) (*plan.Plan, *layout, error) {
	b, w, err := newBuilder(a, h, f, "llm-"+a.Name)
	if err != nil {
		return nil, nil, err
	}
	lay := &layout{ctx: ctx, batch: batch}
	lay.tokens = b.buffer("tokens", plan.IO, 4*(ctx+1))
	lay.logits = b.buffer("logits", plan.IO, 4*h.NVocab)
	s := b.scratch(batch, w.gateUpRow)
	rope, err := b.ropeTables(w)
	if err != nil {
		return nil, nil, err
	}

	// KV caches, [kv head][position][head dim] per layer, so one head's
	// keys are contiguous for attention.
	lay.kvType = kvt
	kc, vc := b.kvBuffers("cache", kvt, h.NKV*ctx*h.HeadDim)
	for _, prefill := range []bool{true, false} {
		name := map[bool]string{true: "prefill", false: "decode"}[prefill]
		ps, _ := b.p.AddPass(name)
		fw := &forward{builder: b, ps: ps, prefill: prefill, lay: lay, s: s, w: w, rope: rope, kc: kc, vc: vc, m: 1, mat: plan.MatVec}
		if prefill {
			fw.m, fw.mat = batch, plan.MatMul
		}
		fw.emit()
	}
	am, _ := b.p.AddPass("argmax")
	d := plan.ArgmaxArgs{X: plan.F32At(lay.logits, 0), Out: plan.F32At(lay.tokens, 0), N: h.NVocab, M: 1, Ldx: h.NVocab}.Dispatch()
	d.AddPatch(plan.PatchArgmaxOutOff, plan.VarKVLen, 4, 0)
	am.Add(d)
	b.samplePass(lay)
	if err := b.p.Validate(); err != nil {
		return nil, nil, err
	}
	return b.p, lay, nil
}

// kvBuffers declares each layer's K and V buffers (<prefix>.k<l>,
// <prefix>.v<l>) of elems elements of kvt.
func (b *builder) kvBuffers(prefix string, kvt ggml.Type, elems int) (kc, vc []plan.BufID) {
	es := 2
	if kvt == ggml.F32 {
		es = 4
	}
	kc = make([]plan.BufID, b.h.NLayer)
	vc = make([]plan.BufID, b.h.NLayer)
	for l := range b.h.NLayer {
		kc[l] = b.buffer(fmt.Sprintf("%s.k%d", prefix, l), plan.State, es*elems)
		vc[l] = b.buffer(fmt.Sprintf("%s.v%d", prefix, l), plan.State, es*elems)
	}
	return kc, vc
}

// scratch declares the activation buffers for passes of up to rows rows.
func (b *builder) scratch(rows int, gateUpRow bool) scratch {
	h := b.h
	qkvW := h.QDim() + 2*h.KVDim()
	s := scratch{
		x:   b.buffer("x", plan.Scratch, 4*rows*h.NEmbd),
		h:   b.buffer("h", plan.Scratch, 4*rows*h.NEmbd),
		qkv: b.buffer("qkv", plan.Scratch, 4*rows*qkvW),
		att: b.buffer("attn", plan.Scratch, 4*rows*h.QDim()),
	}
	if gateUpRow {
		// gate|up in one row, so one product fills both (fuse.go)
		s.gate = b.buffer("ffn.gate_up", plan.Scratch, 4*rows*2*h.NFF)
		s.up = s.gate
	} else {
		s.gate = b.buffer("ffn.gate", plan.Scratch, 4*rows*h.NFF)
		s.up = b.buffer("ffn.up", plan.Scratch, 4*rows*h.NFF)
	}
	return s
}

// ropeTables declares the rotation frequencies of global and (with a
// sliding pattern) local layers.
func (b *builder) ropeTables(w *modelWeights) (ropeTables, error) {
	h := b.h
	rope := ropeTables{}
	var err error
	if rope.global, err = b.ropeBuffer("rope.freqs", h, w.ropeFactors); err != nil {
		return rope, err
	}
	rope.local = rope.global
	if b.a.SlidingPattern > 0 {
		// local layers rotate with their own base, unscaled
		lh := h
		lh.RopeBase, lh.Scaling = b.a.LocalRopeBase, RopeScaling{}
		if rope.local, err = b.ropeBuffer("rope.freqs.local", lh, nil); err != nil {
			return rope, err
		}
	}
	return rope, nil
}

// ropeTables are the inverse-frequency buffers of global and
// sliding-window layers (the same buffer without a sliding window).
type ropeTables struct{ global, local plan.Binding }

func (b *builder) ropeBuffer(name string, h HParams, factors []float32) (plan.Binding, error) {
	freqs, err := ropeFreqs(h, factors)
	if err != nil {
		return none, err
	}
	id := b.p.AddBuffer(plan.Buffer{Name: name, Kind: plan.BufWeights, Size: int64(4 * len(freqs)), Data: ggml.F32Bytes(freqs)})
	return plan.Binding{Buf: id}, nil
}

func (b *builder) samplePass(lay *layout) {
	n := b.h.NVocab
	scr := b.buffer("sample.scratch", plan.Scratch, 4*2*n)
	lay.settings = b.buffer("sample.settings", plan.IO, 4*plan.SampleSettingsWords)
	lay.counts = b.buffer("sample.counts", plan.IO, 4*(2*n+1))
	lay.logprobs = b.buffer("sample.logprobs", plan.IO, 4*plan.SampleLogprobWords*(lay.ctx+1))
	ps, _ := b.p.AddPass("sample")
	d := plan.SampleArgs{Draws: plan.None, X: plan.F32At(lay.logits, 0), Out: plan.F32At(lay.tokens, 0), Settings: plan.F32At(lay.settings, 0),
		Counts: plan.F32At(lay.counts, 0), Scratch: plan.F32At(scr, 0), Logprobs: plan.F32At(lay.logprobs, 0), N: n}.Dispatch()
	d.AddPatch(plan.PatchSampleOutOff, plan.VarKVLen, 4, 0)
	d.AddPatch(plan.PatchSampleLogprobsOff, plan.VarKVLen, 4*plan.SampleLogprobWords, 0)
	d.AddPatch(plan.PatchSampleStep, plan.VarStep, 1, 0)
	ps.Add(d)
}
