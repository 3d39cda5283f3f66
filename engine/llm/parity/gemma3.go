package parity

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
)

// Gemma3Config is the part of a transformers Gemma3TextConfig
// (config.json) the conversion reads.
type Gemma3Config struct {
	Vocab        int      `json:"vocab_size"`
	Embd         int      `json:"hidden_size"`
	FF           int      `json:"intermediate_size"`
	Layers       int      `json:"num_hidden_layers"`
	Heads        int      `json:"num_attention_heads"`
	KVHeads      int      `json:"num_key_value_heads"`
	HeadDim      int      `json:"head_dim"`
	MaxPos       int      `json:"max_position_embeddings"`
	RMSEps       float64  `json:"rms_norm_eps"`
	Window       int      `json:"sliding_window"`
	LayerTypes   []string `json:"layer_types"`
	QueryScalar  float64  `json:"query_pre_attn_scalar"`
	Activation   string   `json:"hidden_activation"`
	FinalSoftcap *float64 `json:"final_logit_softcapping"`
	AttnSoftcap  *float64 `json:"attn_logit_softcapping"`
	Tied         bool     `json:"tie_word_embeddings"`
	Rope         map[string]struct {
		Type  string  `json:"rope_type"`
		Theta float64 `json:"rope_theta"`
	} `json:"rope_parameters"`
}

// ReadGemma3Config reads dir/config.json.
func ReadGemma3Config(dir string) (Gemma3Config, error) {
	var c Gemma3Config
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("parity: %s/config.json: %w", dir, err)
	}
	return c, nil
}

// gemma3Names maps transformers' Gemma 3 names to llama.cpp's; norms
// (their weights w scale by 1+w) are stored as 1+w, as llama.cpp's
// converter does.
type gemma3Tensor struct {
	gguf string
	norm bool
}

var gemma3Names = map[string]gemma3Tensor{
	"input_layernorm":            {"attn_norm", true},
	"self_attn.q_proj":           {"attn_q", false},
	"self_attn.k_proj":           {"attn_k", false},
	"self_attn.v_proj":           {"attn_v", false},
	"self_attn.o_proj":           {"attn_output", false},
	"self_attn.q_norm":           {"attn_q_norm", true},
	"self_attn.k_norm":           {"attn_k_norm", true},
	"post_attention_layernorm":   {"post_attention_norm", true},
	"pre_feedforward_layernorm":  {"ffn_norm", true},
	"post_feedforward_layernorm": {"post_ffw_norm", true},
	"mlp.gate_proj":              {"ffn_gate", false},
	"mlp.up_proj":                {"ffn_up", false},
	"mlp.down_proj":              {"ffn_down", false},
}

// WriteGemma3 converts the f32 transformers checkpoint in dir
// (model.safetensors + config.json) into an f32 GGUF file with Hark's
// writer, as llama.cpp's convert_hf_to_gguf.py lays Gemma 3 out.
//
// With vocab (tokenizer metadata, e.g. Gemma3Vocab's) the file also
// carries a tokenizer, and the embedding table grows to its size, row r
// repeating the checkpoint's row r mod its vocabulary: a model whose
// numbers mean nothing past the checkpoint's vocabulary but that runs
// the real tokenizer and chat template end to end.
func WriteGemma3(dir string, w io.Writer, vocab map[string]gguf.Value) error {
	c, err := ReadGemma3Config(dir)
	if err != nil {
		return err
	}
	full, ok := c.Rope["full_attention"]
	if !ok {
		return fmt.Errorf("parity: %s: no full_attention rope parameters", dir)
	}
	ts, err := readSafetensors(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return err
	}
	gw := gguf.NewWriter(w)
	const a = "gemma3"
	kvs := append(shapeKVs(a, "gemma3-tiny", hparams{
		layers: c.Layers, ctx: c.MaxPos, embd: c.Embd, ff: c.FF, heads: c.Heads,
		kvHeads: c.KVHeads, headDim: c.HeadDim, rmsEps: float32(c.RMSEps), ropeBase: float32(full.Theta),
	}), kv{a + ".attention.sliding_window", gguf.Uint32(uint32(c.Window))})
	for _, k := range slices.Sorted(maps.Keys(vocab)) {
		kvs = append(kvs, kv{k, vocab[k]})
	}
	if err := addKVs(gw, kvs); err != nil {
		return err
	}
	type out struct {
		name  string
		shape []int64
		data  []float32
	}
	var outs []out
	for name, t := range ts {
		g, ok := gemma3Name(name)
		if !ok {
			return fmt.Errorf("parity: unexpected tensor %s", name)
		}
		if g.norm {
			for i := range t.data {
				t.data[i]++
			}
		}
		shape := slices.Clone(t.shape)
		slices.Reverse(shape) // ggml order
		if g.gguf == "token_embd.weight" && vocab != nil {
			if shape, t.data, err = widenEmbedding(shape, t.data, vocab); err != nil {
				return err
			}
		}
		outs = append(outs, out{g.gguf, shape, t.data})
	}
	slices.SortFunc(outs, func(x, y out) int { return strings.Compare(x.name, y.name) })
	for _, o := range outs {
		if err := gw.AddTensor(o.name, ggml.F32, o.shape); err != nil {
			return err
		}
	}
	for _, o := range outs {
		if err := gw.WriteTensor(ggml.F32Bytes(o.data)); err != nil {
			return err
		}
	}
	return gw.Close()
}

// widenEmbedding repeats the rows of the embedding table (ggml shape
// [width, rows]) up to the vocabulary's size.
func widenEmbedding(shape []int64, data []float32, vocab map[string]gguf.Value) ([]int64, []float32, error) {
	arr, ok := vocab["tokenizer.ggml.tokens"].Array()
	if !ok || arr == nil {
		return nil, nil, fmt.Errorf("parity: the vocabulary has no tokenizer.ggml.tokens")
	}
	n, width, rows := int64(arr.Len()), shape[0], shape[1]
	if n < rows {
		return nil, nil, fmt.Errorf("parity: %d tokens for an embedding of %d rows", n, rows)
	}
	out := make([]float32, n*width)
	for r := range n {
		copy(out[r*width:(r+1)*width], data[(r%rows)*width:])
	}
	return []int64{width, n}, out, nil
}

func gemma3Name(hf string) (gemma3Tensor, bool) {
	type r = gemma3Tensor
	switch hf {
	case "model.embed_tokens.weight":
		return r{"token_embd.weight", false}, true
	case "model.norm.weight":
		return r{"output_norm.weight", true}, true
	}
	var l int
	var rest string
	if _, err := fmt.Sscanf(hf, "model.layers.%d.%s", &l, &rest); err != nil {
		return r{}, false
	}
	part, ok := strings.CutSuffix(rest, ".weight")
	g, known := gemma3Names[part]
	if !ok || !known {
		return r{}, false
	}
	return r{fmt.Sprintf("blk.%d.%s.weight", l, g.gguf), g.norm}, true
}

type stTensor struct {
	shape []int64
	data  []float32
}

// readSafetensors reads an all-F32 safetensors file: an 8-byte header
// length, the JSON header, then the data.
func readSafetensors(path string) (map[string]stTensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("parity: %s: too short", path)
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		return nil, fmt.Errorf("parity: %s: header of %d bytes", path, n)
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &hdr); err != nil {
		return nil, fmt.Errorf("parity: %s: %w", path, err)
	}
	data := b[8+n:]
	out := map[string]stTensor{}
	for name, raw := range hdr {
		if name == "__metadata__" {
			continue
		}
		var e struct {
			Dtype   string   `json:"dtype"`
			Shape   []int64  `json:"shape"`
			Offsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("parity: %s: %s: %w", path, name, err)
		}
		count := int64(1)
		for _, d := range e.Shape {
			count *= d
		}
		if e.Dtype != "F32" || e.Offsets[0] < 0 || e.Offsets[1] > int64(len(data)) || e.Offsets[1]-e.Offsets[0] != 4*count {
			return nil, fmt.Errorf("parity: %s: %s is %s %v at %v, want F32 in the file", path, name, e.Dtype, e.Shape, e.Offsets)
		}
		v := make([]float32, count)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[e.Offsets[0]+4*int64(i):]))
		}
		out[name] = stTensor{e.Shape, v}
	}
	return out, nil
}
