// Package bench measures LLM prompt processing and generation speed the
// way llama.cpp's llama-bench reports it (pp: one batched prefill of N
// tokens; tg: N single-token decodes; tok/s averaged over repetitions) on a
// SmolLM2-135M-shaped model with random weights and the real SmolLM2
// tokenizer, written with Hark's own GGUF writer.
package bench

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
)

// Shape is a llama-architecture model's size.
type Shape struct {
	Name                                    string // the model it copies, in the file's general.name
	Stem                                    string // file name stem (hark bench llm --shape)
	Layers, Embd, FF, Heads, KVHeads, Vocab int
}

// SmolLM2 is SmolLM2-135M's shape (tied embeddings, head size 64).
var SmolLM2 = Shape{Name: "SmolLM2-135M", Stem: "smollm2-135m", Layers: 30, Embd: 576, FF: 1536, Heads: 9, KVHeads: 3, Vocab: 49152}

// Llama1B is Llama-3.2-1B's shape (16 layers, 2048 wide, FFN 8192, 32
// heads of 64 with 8 KV heads, tied embeddings) with SmolLM2's vocabulary
// (49,152 tokens where Llama 3 has 128,256), so the same tokenizer serves:
// the layers are the 1B model's, the embedding/output a 0.4 of its size.
var Llama1B = Shape{Name: "Llama-3.2-1B", Stem: "llama-1b", Layers: 16, Embd: 2048, FF: 8192, Heads: 32, KVHeads: 8, Vocab: 49152}

// Shapes are the shapes hark bench llm writes, by --shape name.
var Shapes = map[string]Shape{SmolLM2.Stem: SmolLM2, Llama1B.Stem: Llama1B}

// Params is the number of weights.
func (s Shape) Params() int64 {
	e, hd := int64(s.Embd), int64(s.Embd/s.Heads)
	kv := int64(s.KVHeads) * hd
	layer := e*e*2 + 2*e*kv + 3*e*int64(s.FF) + 2*e
	return int64(s.Vocab)*e + int64(s.Layers)*layer + e
}

// Types are the file types llama-bench numbers are quoted for.
var Types = map[string]ggml.Type{"f16": ggml.F16, "q8_0": ggml.Q8_0, "q4_0": ggml.Q4_0}

// tensorType follows llama.cpp's quantize for these file types: norms stay
// f32; the tied token embedding (which is also the output projection) gets
// Q6_K in a q4_0 file, which falls back to Q8_0 because 576 is not a
// multiple of 256. Where the width is a multiple of 256 (Llama1B) the
// writer keeps Q8_0 too (OutputNote says so): the output projection is
// then the same type in every quantized file.
func tensorType(name string, dims int, ftype ggml.Type) ggml.Type {
	if dims == 1 {
		return ggml.F32
	}
	if ftype == ggml.Q4_0 && name == "token_embd.weight" {
		return ggml.Q8_0
	}
	return ftype
}

// OutputNote says where the file's output tensor differs from what
// llama.cpp's quantize would pick ("" where it does not).
func (s Shape) OutputNote(ftype ggml.Type) string {
	if ftype == ggml.Q4_0 && s.Embd%256 == 0 {
		return "token_embd.weight (the tied output projection) is q8_0, where llama.cpp's quantize would pick Q6_K"
	}
	return ""
}

// Write writes a model of shape s with random weights in file type ftype
// (F16, Q8_0 or Q4_0) and the Hugging Face tokenizer in tokDir (vocab.json,
// merges.txt, tokenizer_config.json) as GGUF tokenizer metadata.
func Write(w io.Writer, s Shape, ftype ggml.Type, tokDir string, seed uint64) error {
	if ftype != ggml.F16 && ftype != ggml.Q8_0 && ftype != ggml.Q4_0 {
		return fmt.Errorf("bench: unsupported file type %s (f16, q8_0 or q4_0)", ftype)
	}
	if s.Layers <= 0 || s.Heads <= 0 || s.KVHeads <= 0 || s.Embd%s.Heads != 0 || s.Heads%s.KVHeads != 0 {
		return fmt.Errorf("bench: bad shape %+v", s)
	}
	tok, err := readHFTokenizer(tokDir)
	if err != nil {
		return err
	}
	if len(tok.tokens) != s.Vocab {
		return fmt.Errorf("bench: the tokenizer has %d tokens, the shape %d", len(tok.tokens), s.Vocab)
	}
	hd := s.Embd / s.Heads
	gw := gguf.NewWriter(w)
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "general.name", Value: gguf.String("hark-bench " + s.Name + "-shaped (random weights)")},
		{Key: "general.file_type", Value: gguf.Uint32(fileType(ftype))},
		{Key: "llama.block_count", Value: gguf.Uint32(uint32(s.Layers))},
		{Key: "llama.context_length", Value: gguf.Uint32(8192)},
		{Key: "llama.embedding_length", Value: gguf.Uint32(uint32(s.Embd))},
		{Key: "llama.feed_forward_length", Value: gguf.Uint32(uint32(s.FF))},
		{Key: "llama.attention.head_count", Value: gguf.Uint32(uint32(s.Heads))},
		{Key: "llama.attention.head_count_kv", Value: gguf.Uint32(uint32(s.KVHeads))},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-5)},
		{Key: "llama.rope.freq_base", Value: gguf.Float32(100000)},
		{Key: "llama.rope.dimension_count", Value: gguf.Uint32(uint32(hd))},
		{Key: "llama.vocab_size", Value: gguf.Uint32(uint32(s.Vocab))},
		{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.String("smollm")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.ArrayValue(gguf.NewArray(tok.tokens))},
		{Key: "tokenizer.ggml.token_type", Value: gguf.ArrayValue(gguf.NewArray(tok.types))},
		{Key: "tokenizer.ggml.merges", Value: gguf.ArrayValue(gguf.NewArray(tok.merges))},
		{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Bool(false)},
	}
	for name, id := range map[string]int32{"bos": tok.bos, "eos": tok.eos, "unknown": tok.unk, "padding": tok.pad} {
		if id >= 0 {
			kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml." + name + "_token_id", Value: gguf.Uint32(uint32(id))})
		}
	}
	if tok.template != "" {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.chat_template", Value: gguf.String(tok.template)})
	}
	for _, kv := range kvs {
		if err := gw.AddKV(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	ts := s.tensors()
	for _, t := range ts {
		if err := gw.AddTensor(t.name, tensorType(t.name, len(t.shape), ftype), t.shape); err != nil {
			return err
		}
	}
	rng := seed | 1
	for _, t := range ts {
		b, err := t.data(tensorType(t.name, len(t.shape), ftype), &rng)
		if err != nil {
			return fmt.Errorf("bench: %s: %w", t.name, err)
		}
		if err := gw.WriteTensor(b); err != nil {
			return err
		}
	}
	return gw.Close()
}

// fileType is llama.cpp's general.file_type for the file types here.
func fileType(t ggml.Type) uint32 {
	switch t {
	case ggml.F16:
		return 1
	case ggml.Q4_0:
		return 2
	default:
		return 7 // Q8_0
	}
}

// WriteFile writes the model to path (see Write).
func WriteFile(path string, s Shape, ftype ggml.Type, tokDir string, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = Write(bw, s, ftype, tokDir, seed)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

type tensor struct {
	name  string
	shape []int64
	scale float32 // uniform half-width
	shift float32
}

func (s Shape) tensors() []tensor {
	e, ff := int64(s.Embd), int64(s.FF)
	kv := int64(s.KVHeads * (s.Embd / s.Heads))
	w := func(in int64) float32 { return float32(math.Sqrt(3 / float64(in))) }
	ts := []tensor{{"token_embd.weight", []int64{e, int64(s.Vocab)}, 0.05, 0}, {"output_norm.weight", []int64{e}, 0.1, 1}}
	for l := range s.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensor{p + "attn_norm.weight", []int64{e}, 0.1, 1},
			tensor{p + "attn_q.weight", []int64{e, e}, w(e), 0},
			tensor{p + "attn_k.weight", []int64{e, kv}, w(e), 0},
			tensor{p + "attn_v.weight", []int64{e, kv}, w(e), 0},
			tensor{p + "attn_output.weight", []int64{e, e}, w(e), 0},
			tensor{p + "ffn_norm.weight", []int64{e}, 0.1, 1},
			tensor{p + "ffn_gate.weight", []int64{e, ff}, w(e), 0},
			tensor{p + "ffn_up.weight", []int64{e, ff}, w(e), 0},
			tensor{p + "ffn_down.weight", []int64{ff, e}, w(ff), 0})
	}
	return ts
}

// data draws the tensor's values (xorshift64*, uniform) and encodes them.
func (t tensor) data(typ ggml.Type, rng *uint64) ([]byte, error) {
	n := int64(1)
	for _, d := range t.shape {
		n *= d
	}
	v := make([]float32, n)
	x := *rng
	for i := range v {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		u := float32((x*0x2545F4914F6CDD1D)>>40)/(1<<23) - 1
		v[i] = t.shift + t.scale*u
	}
	*rng = x
	switch typ {
	case ggml.F32:
		b := make([]byte, 4*n)
		for i, f := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
		}
		return b, nil
	case ggml.F16:
		b := make([]byte, 2*n)
		for i, f := range v {
			binary.LittleEndian.PutUint16(b[2*i:], ggml.FP32ToFP16(f))
		}
		return b, nil
	}
	rb, err := ggml.RowBytes(typ, n)
	if err != nil {
		return nil, err
	}
	b := make([]byte, rb)
	return b, ggml.Quantize(typ, v, b)
}

// hfTokenizer is a Hugging Face BPE tokenizer as GGUF metadata.
type hfTokenizer struct {
	tokens             []string
	types              []int32
	merges             []string
	bos, eos, unk, pad int32
	template           string
}

// readHFTokenizer reads vocab.json, merges.txt and tokenizer_config.json.
func readHFTokenizer(dir string) (*hfTokenizer, error) {
	vb, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("bench: tokenizer: %w", err)
	}
	var vocab map[string]int32
	if err := json.Unmarshal(vb, &vocab); err != nil {
		return nil, fmt.Errorf("bench: vocab.json: %w", err)
	}
	if len(vocab) == 0 || len(vocab) > 1<<22 {
		return nil, fmt.Errorf("bench: vocab.json has %d tokens", len(vocab))
	}
	t := &hfTokenizer{tokens: make([]string, len(vocab)), types: make([]int32, len(vocab)), bos: -1, eos: -1, unk: -1, pad: -1}
	seen := make([]bool, len(vocab))
	for tok, id := range vocab {
		if id < 0 || int(id) >= len(vocab) || seen[id] {
			return nil, fmt.Errorf("bench: vocab.json ids are not 0..%d", len(vocab)-1)
		}
		seen[id] = true
		t.tokens[id], t.types[id] = tok, 1 // normal
	}
	mb, err := os.ReadFile(filepath.Join(dir, "merges.txt"))
	if err != nil {
		return nil, fmt.Errorf("bench: tokenizer: %w", err)
	}
	for _, line := range strings.Split(string(mb), "\n") {
		if line == "" || strings.HasPrefix(line, "#version") {
			continue
		}
		t.merges = append(t.merges, line)
	}
	cb, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, fmt.Errorf("bench: tokenizer: %w", err)
	}
	var cfg struct {
		Added map[string]struct {
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens_decoder"`
		Template *string `json:"chat_template"`
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(cb, &raw); err != nil {
		return nil, fmt.Errorf("bench: tokenizer_config.json: %w", err)
	}
	if err := json.Unmarshal(cb, &cfg); err != nil {
		return nil, fmt.Errorf("bench: tokenizer_config.json: %w", err)
	}
	for k, a := range cfg.Added {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 || id >= len(t.tokens) || t.tokens[id] != a.Content {
			return nil, fmt.Errorf("bench: added token %s %q does not match vocab.json", k, a.Content)
		}
		if a.Special {
			t.types[id] = 3 // control
		} else {
			t.types[id] = 4 // user-defined
		}
	}
	name := func(key string) int32 {
		var s string
		if json.Unmarshal(raw[key], &s) == nil {
			if id, ok := vocab[s]; ok {
				return id
			}
		}
		return -1
	}
	t.bos, t.eos, t.unk, t.pad = name("bos_token"), name("eos_token"), name("unk_token"), name("pad_token")
	if cfg.Template != nil {
		t.template = *cfg.Template
	}
	return t, nil
}
