package llm

import (
	"strings"

	"github.com/harkapp/hark/engine/gguf"
)

// Fused products. Q, K and V (and gate and up) multiply the same input, so
// on a GPU one launch over their rows stacked replaces three (two): decode
// is bound by launches, not bytes, on small models (issue #34). Where the
// file holds the matrices back to back, with one type, one width and no
// biases, the stacked matrix is that span of the file, bound as one weight
// buffer without a copy. Where they share type and width but lie apart
// (llama.cpp's converter writes a block's tensors in name order: attn_k,
// attn_output, attn_q, attn_v, ffn_down, ffn_gate, ffn_norm, ffn_up), the
// buffer is their slices stacked (plan.Buffer.Parts): a GPU backend copies
// each to its place in the upload it makes anyway, the CPU joins them once
// in place of reading the file's. Biases or mixed types keep the separate
// products. The outputs land where the separate products would have put
// them (Q|K|V in the qkv row; gate|up in one row, see scratch), so nothing
// downstream changes with the choice.

// fuse returns ts as one matrix bound under name, or the zero tensor when
// they cannot be fused.
func (b *binder) fuse(name string, ts ...tensor) tensor {
	srcs, ok := b.fusible(ts)
	if !ok {
		return tensor{}
	}
	t := tensor{typ: ts[0].typ, name: name}
	if data, ok := b.f.Adjacent(srcs...); ok {
		t.b = b.wts.Bind(name, data)
		return t
	}
	parts := make([][]byte, len(srcs))
	for i, s := range srcs {
		parts[i] = s.Data
	}
	t.b = b.wts.Stack(name, parts...)
	return t
}

// fusible returns the file tensors of ts when they share type and width,
// have no biases and the file so far has no errors.
func (b *binder) fusible(ts []tensor) ([]*gguf.Tensor, bool) {
	if len(b.errs) > 0 || len(ts) == 0 {
		return nil, false
	}
	srcs := make([]*gguf.Tensor, len(ts))
	for i, t := range ts {
		if !t.ok() || t.src == nil || t.typ != ts[0].typ || len(t.src.Shape) != 2 || t.src.Shape[0] != ts[0].src.Shape[0] {
			return nil, false
		}
		if _, biased := b.f.Tensor(strings.TrimSuffix(t.name, ".weight") + ".bias"); biased {
			return nil, false
		}
		srcs[i] = t.src
	}
	return srcs, true
}

// fusibleInEveryLayer reports whether the roles' tensors are fusible in
// every layer: the gate|up scratch row is shared by all layers, so the
// fused layout is taken only when each layer can use it.
func (b *binder) fusibleInEveryLayer(layers int, roles ...[]string) bool {
	for l := range layers {
		ts := make([]tensor, len(roles))
		for i, names := range roles {
			t, name, ok := b.find(names, l)
			if !ok {
				return false
			}
			ts[i] = tensor{typ: t.Type, name: name, src: t}
		}
		if _, ok := b.fusible(ts); !ok {
			return false
		}
	}
	return layers > 0
}
