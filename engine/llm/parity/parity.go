// Package parity defines synthetic Llama, Qwen2 and Qwen3 models (real head
// layouts, a few layers, a 49152-token vocabulary) whose logits are checked
// against Hugging Face transformers: tools/parity/llm_hf.py computes the
// references on a machine with PyTorch from the GGUF files this package
// writes with Hark's own GGUF writer; the Go test regenerates them.
//
// Gemma 3 goes the other way round (gemma3.go): transformers makes a small
// random checkpoint with its references (tools/parity/gemma3_hf.py, kept
// in testdata/gemma3), and WriteGemma3 converts it with Hark's writer.
package parity

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strings"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
)

// Config is one synthetic model.
type Config struct {
	Name             string
	Arch             string
	Seed             uint64
	Vocab, Embd, FF  int
	Heads, KVHeads   int
	HeadDim, Layers  int
	Tied             bool
	RopeBase, RMSEps float32
}

// Configs: SmolLM2-135M's attention layout (9 heads over 3 KV heads, llama
// rope), Qwen2.5-0.5B's (14 over 2, Q/K/V biases, NeoX rope) and
// Qwen3-0.6B's (16 over 8, head size 128 wider than the embedding allows,
// Q/K norms).
var Configs = []Config{
	{Name: "llama", Arch: "llama", Seed: 11, Vocab: 49152, Embd: 576, FF: 1536, Heads: 9, KVHeads: 3, HeadDim: 64, Layers: 2,
		RopeBase: 100000, RMSEps: 1e-5},
	{Name: "qwen2", Arch: "qwen2", Seed: 22, Vocab: 49152, Embd: 896, FF: 4864, Heads: 14, KVHeads: 2, HeadDim: 64, Layers: 2,
		Tied: true, RopeBase: 1000000, RMSEps: 1e-6},
	{Name: "qwen3", Arch: "qwen3", Seed: 33, Vocab: 49152, Embd: 1024, FF: 3072, Heads: 16, KVHeads: 8, HeadDim: 128, Layers: 2,
		Tied: true, RopeBase: 1000000, RMSEps: 1e-6},
}

// Prompts are the token sequences the references feed.
var Prompts = [][]int32{
	{1, 9038, 2501, 253, 655, 30},
	{42, 7, 31000, 12, 12, 12, 49151, 0, 5, 640},
}

type tensor struct {
	name  string
	shape []int64 // ggml order: shape[0] is the input dimension
	scale float32 // std of the uniform draw
	shift float32
}

func (c Config) tensors() []tensor {
	e, q, kv, ff := int64(c.Embd), int64(c.Heads*c.HeadDim), int64(c.KVHeads*c.HeadDim), int64(c.FF)
	w := func(in int64) float32 { return float32(1 / math.Sqrt(float64(in))) }
	ts := []tensor{{"token_embd.weight", []int64{e, int64(c.Vocab)}, 1, 0}, {"output_norm.weight", []int64{e}, 0.1, 1}}
	if !c.Tied {
		ts = append(ts, tensor{"output.weight", []int64{e, int64(c.Vocab)}, 3 * w(e), 0})
	}
	for l := range c.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensor{p + "attn_norm.weight", []int64{e}, 0.1, 1},
			tensor{p + "attn_q.weight", []int64{e, q}, w(e), 0},
			tensor{p + "attn_k.weight", []int64{e, kv}, w(e), 0},
			tensor{p + "attn_v.weight", []int64{e, kv}, w(e), 0})
		if c.Arch == "qwen2" {
			ts = append(ts, tensor{p + "attn_q.bias", []int64{q}, 0.5, 0}, tensor{p + "attn_k.bias", []int64{kv}, 0.5, 0},
				tensor{p + "attn_v.bias", []int64{kv}, 0.5, 0})
		}
		if c.Arch == "qwen3" {
			ts = append(ts, tensor{p + "attn_q_norm.weight", []int64{int64(c.HeadDim)}, 0.1, 1},
				tensor{p + "attn_k_norm.weight", []int64{int64(c.HeadDim)}, 0.1, 1})
		}
		ts = append(ts,
			tensor{p + "attn_output.weight", []int64{q, e}, w(q), 0},
			tensor{p + "ffn_norm.weight", []int64{e}, 0.1, 1},
			tensor{p + "ffn_gate.weight", []int64{e, ff}, w(e), 0},
			tensor{p + "ffn_up.weight", []int64{e, ff}, w(e), 0},
			tensor{p + "ffn_down.weight", []int64{ff, e}, w(ff), 0})
	}
	return ts
}

// values draws a tensor from its own splitmix64 stream (seed ^ FNV(name)):
// uniform with the given std around shift.
func (t tensor) values(seed uint64) []float32 {
	n := int64(1)
	for _, d := range t.shape {
		n *= d
	}
	h := fnv.New64a()
	h.Write([]byte(t.name))
	s := seed ^ h.Sum64()
	out := make([]float32, n)
	a := t.scale * float32(math.Sqrt(3))
	for i := range out {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		u := float32(z>>40)/(1<<23) - 1
		out[i] = t.shift + a*u
	}
	return out
}

// Schemes of tensor types, as llama.cpp's quantize assigns them.
const (
	F32    = "f32"
	Q8_0   = "q8_0"
	Q4_K_M = "q4_k_m"
)

// tensorType picks a tensor's type under scheme: norms and biases stay f32;
// Q4_K_M puts attn_v, ffn_down and the output projection in Q6_K and the
// rest in Q4_K; a K-quant whose rows are not whole 256-blocks falls back as
// llama.cpp does (Q4_K -> Q5_0, Q6_K -> Q8_0).
func tensorType(c Config, t tensor, scheme string) ggml.Type {
	if len(t.shape) == 1 || scheme == F32 {
		return ggml.F32
	}
	if scheme == Q8_0 {
		return ggml.Q8_0
	}
	typ := ggml.Q4_K
	switch {
	case strings.HasSuffix(t.name, "attn_v.weight"), strings.HasSuffix(t.name, "ffn_down.weight"),
		t.name == "output.weight", t.name == "token_embd.weight" && c.Tied:
		typ = ggml.Q6_K
	}
	if t.shape[0]%ggml.QK_K != 0 {
		if typ == ggml.Q6_K {
			return ggml.Q8_0
		}
		return ggml.Q5_0
	}
	return typ
}

// Write writes config c as a GGUF file with tensor types from scheme.
func Write(c Config, w io.Writer, scheme string) error {
	if scheme != F32 && scheme != Q8_0 && scheme != Q4_K_M {
		return fmt.Errorf("parity: unknown scheme %q", scheme)
	}
	gw := gguf.NewWriter(w)
	a := c.Arch
	kvs := append(shapeKVs(a, c.Name, hparams{
		layers: c.Layers, ctx: 2048, embd: c.Embd, ff: c.FF, heads: c.Heads,
		kvHeads: c.KVHeads, headDim: c.HeadDim, rmsEps: c.RMSEps, ropeBase: c.RopeBase,
	}), kv{a + ".rope.dimension_count", gguf.Uint32(uint32(c.HeadDim))})
	if err := addKVs(gw, kvs); err != nil {
		return err
	}
	ts := c.tensors()
	for _, t := range ts {
		if err := gw.AddTensor(t.name, tensorType(c, t, scheme), t.shape); err != nil {
			return err
		}
	}
	for _, t := range ts {
		v := t.values(c.Seed)
		var b []byte
		if typ := tensorType(c, t, scheme); typ == ggml.F32 {
			b = ggml.F32Bytes(v)
		} else {
			n, err := ggml.RowBytes(typ, int64(len(v)))
			if err != nil {
				return err
			}
			b = make([]byte, n)
			if err := ggml.Quantize(typ, v, b); err != nil {
				return fmt.Errorf("parity: %s: %w", t.name, err)
			}
		}
		if err := gw.WriteTensor(b); err != nil {
			return err
		}
	}
	return gw.Close()
}

// kv is one metadata pair of a written file.
type kv struct {
	k string
	v gguf.Value
}

// hparams are the shape keys every parity architecture writes.
type hparams struct {
	layers, ctx, embd, ff, heads, kvHeads, headDim int
	rmsEps, ropeBase                               float32
}

// shapeKVs returns the GGUF metadata common to the parity writers, in
// llama.cpp's key names for architecture a.
func shapeKVs(a, name string, h hparams) []kv {
	return []kv{
		{"general.architecture", gguf.String(a)},
		{"general.name", gguf.String("hark-parity-" + name)},
		{a + ".block_count", gguf.Uint32(uint32(h.layers))},
		{a + ".context_length", gguf.Uint32(uint32(h.ctx))},
		{a + ".embedding_length", gguf.Uint32(uint32(h.embd))},
		{a + ".feed_forward_length", gguf.Uint32(uint32(h.ff))},
		{a + ".attention.head_count", gguf.Uint32(uint32(h.heads))},
		{a + ".attention.head_count_kv", gguf.Uint32(uint32(h.kvHeads))},
		{a + ".attention.key_length", gguf.Uint32(uint32(h.headDim))},
		{a + ".attention.value_length", gguf.Uint32(uint32(h.headDim))},
		{a + ".attention.layer_norm_rms_epsilon", gguf.Float32(h.rmsEps)},
		{a + ".rope.freq_base", gguf.Float32(h.ropeBase)},
	}
}

func addKVs(gw *gguf.Writer, kvs []kv) error {
	for _, x := range kvs {
		if err := gw.AddKV(x.k, x.v); err != nil {
			return err
		}
	}
	return nil
}
