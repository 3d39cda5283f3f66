package llm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/engine/plan"
)

// tensor is a weight bound into the plan; the zero tensor is an absent
// optional one.
type tensor struct {
	b    plan.Binding
	typ  ggml.Type
	name string
	src  *gguf.Tensor // the file's tensor (nil for a fused run)
}

func (t tensor) ok() bool { return t.name != "" }

// bind is the tensor's binding, plan.None when absent.
func (t tensor) bind() plan.Binding {
	if !t.ok() {
		return plan.None
	}
	return t.b
}

// layerWeights are one block's weights.
type layerWeights struct {
	attnNorm, q, k, v, o, qNorm, kNorm, attnPost tensor
	qBias, kBias, vBias, oBias                   tensor
	ffnNorm, gate, up, down, ffnPost             tensor
	// qkv and gateUp, when set, are Q|K|V and gate|up as one matrix (the
	// file's tensors stacked; fuse.go), and q, k, v or gate, up
	// are then left unbound: one product instead of three or two.
	qkv, gateUp tensor
}

// modelWeights are every weight the forward pass reads, bound and checked
// against the descriptor and the hyper-parameters before any dispatch is
// emitted.
type modelWeights struct {
	embd, outputNorm, output tensor
	layers                   []layerWeights
	// gateUpRow: gate and up share one scratch row (gate|up, 2·NFF wide)
	// because every layer's pair is fused (fuse.go)
	gateUpRow   bool
	ropeFactors []float32 // rope_freqs.weight (Llama 3.1), or nil
}

// binder resolves tensor names and collects every mismatch, so a bad file
// is reported once, whole.
type binder struct {
	f    *gguf.File
	wts  *plan.Weights
	p    *plan.Plan
	errs []error
}

func (b *binder) failf(format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf(format, args...))
}

// find returns the first of names (formatted with the layer) in the file.
func (b *binder) find(names []string, layer int) (*gguf.Tensor, string, bool) {
	for _, n := range names {
		if t, ok := b.f.Tensor(layerName(n, layer)); ok {
			return t, layerName(n, layer), true
		}
	}
	return nil, "", false
}

func layerName(n string, layer int) string {
	if strings.Contains(n, "%d") {
		return fmt.Sprintf(n, layer)
	}
	return n
}

// bind binds the tensor of a role with its ggml shape; optional roles may
// be absent. Vectors (one dimension) must be f32: kernels read them so.
func (b *binder) bind(names []string, layer int, optional bool, shape ...int) tensor {
	return b.bound(b.lookup(names, layer, optional, shape...))
}

// bound declares a checked tensor's buffer (the zero tensor stays absent).
func (b *binder) bound(t tensor) tensor {
	if t.ok() && t.src != nil {
		t.b = b.wts.Bind(t.name, t.src.Data)
	}
	return t
}

// lookup is bind without declaring the buffer, for tensors that may be
// fused with their neighbours.
func (b *binder) lookup(names []string, layer int, optional bool, shape ...int) tensor {
	t, name, ok := b.find(names, layer)
	if !ok {
		if !optional {
			alt := make([]string, len(names))
			for i, n := range names {
				alt[i] = layerName(n, layer)
			}
			b.failf("missing tensor %s", strings.Join(alt, " or "))
		}
		return tensor{}
	}
	return b.check(t, name, shape)
}

// check validates a tensor's shape and type (errors are collected) and
// returns it unbound.
func (b *binder) check(t *gguf.Tensor, name string, shape []int) tensor {
	okShape := len(t.Shape) >= len(shape)
	for i := range t.Shape {
		want := int64(1)
		if i < len(shape) {
			want = int64(shape[i])
		}
		okShape = okShape && t.Shape[i] == want
	}
	switch {
	case !okShape:
		b.failf("tensor %s has shape %v, want %v", name, t.Shape, shape)
	case !t.Type.Supported():
		b.errs = append(b.errs, &ggml.UnsupportedError{Tensor: name, Type: t.Type})
	case len(shape) == 1 && t.Type != ggml.F32:
		b.failf("tensor %s is %s, want f32", name, t.Type)
	}
	return tensor{typ: t.Type, name: name, src: t}
}

// bias binds the bias of weight w (required with need).
func (b *binder) bias(w tensor, n int, need bool) tensor {
	if !w.ok() {
		return tensor{}
	}
	name := strings.TrimSuffix(w.name, ".weight") + ".bias"
	return b.bind([]string{name}, 0, !need, n)
}

// bindWeights binds every weight of the model described by a and h.
func bindWeights(a Arch, h HParams, f *gguf.File, p *plan.Plan) (*modelWeights, error) {
	b := &binder{f: f, wts: plan.NewWeights(p), p: p}
	n := a.Tensors
	ne, qd, kvd, hd, ff := h.NEmbd, h.QDim(), h.KVDim(), h.HeadDim, h.NFF
	w := &modelWeights{
		embd:       b.bind(n.TokenEmbd, 0, false, ne, h.NVocab),
		outputNorm: b.bind(n.OutputNorm, 0, false, ne),
		output:     b.bind(n.Output, 0, false, ne, h.NVocab),
		layers:     make([]layerWeights, h.NLayer),
	}
	if t, ok := f.Tensor("rope_freqs.weight"); ok {
		if fb := b.bound(b.check(t, "rope_freqs.weight", []int{h.RopeDim / 2})); fb.ok() && len(b.errs) == 0 {
			w.ropeFactors = ggml.BytesF32(t.Data)
		}
	}
	w.gateUpRow = a.FFN != FFNGELU && b.fusibleInEveryLayer(h.NLayer, n.FFNGate, n.FFNUp)
	for l := range w.layers {
		lw := &w.layers[l]
		pre, post := a.NormAt.pre(), a.NormAt.post()
		lw.attnNorm = b.bind(n.AttnNorm, l, !pre, ne)
		lw.q = b.lookup(n.AttnQ, l, false, ne, qd)
		lw.k = b.lookup(n.AttnK, l, false, ne, kvd)
		lw.v = b.lookup(n.AttnV, l, false, ne, kvd)
		if lw.qkv = b.fuse(fmt.Sprintf("blk.%d.attn_qkv (fused)", l), lw.q, lw.k, lw.v); !lw.qkv.ok() {
			lw.q, lw.k, lw.v = b.bound(lw.q), b.bound(lw.k), b.bound(lw.v)
		}
		lw.o = b.bind(n.AttnOut, l, false, qd, ne)
		lw.qBias = b.bias(lw.q, qd, a.QKVBias)
		lw.kBias = b.bias(lw.k, kvd, a.QKVBias)
		lw.vBias = b.bias(lw.v, kvd, a.QKVBias)
		lw.oBias = b.bias(lw.o, ne, false)
		if a.QKNorm {
			lw.qNorm = b.bind(n.AttnQNorm, l, false, hd)
			lw.kNorm = b.bind(n.AttnKNorm, l, false, hd)
		}
		lw.ffnNorm = b.bind(n.FFNNorm, l, !pre, ne)
		if post {
			lw.attnPost = b.bind(n.AttnPost, l, false, ne)
			lw.ffnPost = b.bind(n.FFNPost, l, false, ne)
		}
		if a.FFN != FFNGELU {
			lw.gate = b.lookup(n.FFNGate, l, false, ne, ff)
		}
		lw.up = b.lookup(n.FFNUp, l, false, ne, ff)
		if w.gateUpRow {
			lw.gateUp = b.fuse(fmt.Sprintf("blk.%d.ffn_gate_up (fused)", l), lw.gate, lw.up)
		}
		if !lw.gateUp.ok() {
			lw.gate, lw.up = b.bound(lw.gate), b.bound(lw.up)
		}
		lw.down = b.bind(n.FFNDown, l, false, ff, ne)
	}
	if len(b.errs) > 0 {
		return nil, fmt.Errorf("llm: the %s weights do not match the file: %w", a.Name, errors.Join(b.errs...))
	}
	return w, nil
}
