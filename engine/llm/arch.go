// Package llm runs decoder-only language models (Llama, Qwen2, Qwen3,
// Gemma 3 and the families that share their layout) from GGUF files
// through the engine's plans. An architecture is a descriptor (Arch): the
// plan builder assembles the forward pass from the blocks it names and
// binds the weights through its tensor-name table, so a new family is a
// new descriptor, not a new forward pass.
package llm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/harkapp/hark/engine/plan"
)

// NormKind is the normalisation a block applies.
type NormKind uint8

const (
	// NormRMS is RMSNorm with a weight, no bias. Gemma's RMSNorm scales by
	// (1+w); its GGUF files store 1+w (llama.cpp's converter adds the 1),
	// so it is plain RMSNorm here.
	NormRMS NormKind = iota
)

// NormPlacement says where a block's norms sit around each sublayer f
// (attention, feed-forward).
type NormPlacement uint8

const (
	NormPre      NormPlacement = iota // x += f(norm(x)) (Llama, Qwen)
	NormPost                          // x += norm(f(x)) (OLMo 2)
	NormSandwich                      // x += norm(f(norm(x))) (Gemma 2 and 3)
)

func (p NormPlacement) pre() bool  { return p != NormPost }
func (p NormPlacement) post() bool { return p != NormPre }

// FFNKind is the feed-forward block.
type FFNKind uint8

const (
	FFNSiLUGated FFNKind = iota // down(silu(gate(x)) ⊙ up(x)) (SwiGLU)
	FFNGELUGated                // down(gelu_tanh(gate(x)) ⊙ up(x)) (GeGLU, Gemma)
	FFNGELU                     // down(gelu_tanh(up(x)))
)

// Arch describes one model family: everything the plan builder needs that
// is not a number in the file's metadata.
type Arch struct {
	Name   string
	Norm   NormKind
	NormAt NormPlacement
	FFN    FFNKind
	// RopeMode pairs dimensions as llama.cpp does for the family: GGUF
	// converters permute Llama's Q/K weights for the interleaved (normal)
	// mode, while Qwen's and Gemma's weights keep Hugging Face's
	// rotate-half (NeoX) layout.
	RopeMode plan.RopeMode
	// QKVBias: the Q, K and V projections have biases (required).
	// Biases of other families are used when a file has them.
	QKVBias bool
	// QKNorm: per-head RMSNorm of Q and K before RoPE (Qwen3, Gemma 3).
	QKNorm bool
	// SlidingPattern, when not 0, makes every layer but the last of each
	// group of SlidingPattern a sliding-window layer: it sees the last
	// <arch>.attention.sliding_window positions only and rotates with
	// LocalRopeBase (unscaled); the others attend globally with
	// rope.freq_base and the file's scaling.
	SlidingPattern int
	LocalRopeBase  float64
	// EmbedScale multiplies the token embeddings by √NEmbd (Gemma).
	EmbedScale bool
	// AddBOS is the default for files without tokenizer.ggml.add_bos_token.
	AddBOS bool
	// Tensors names the weights in the file.
	Tensors TensorNames
}

// TensorNames gives each weight role its GGUF tensor names, tried in
// order (the first present is bound); in per-layer names %d is the layer.
// A bias is its weight's name with ".bias" for ".weight". Roles the
// descriptor does not use are ignored.
type TensorNames struct {
	TokenEmbd, OutputNorm, Output                                          []string
	AttnNorm, AttnQ, AttnK, AttnV, AttnOut, AttnQNorm, AttnKNorm, AttnPost []string
	FFNNorm, FFNGate, FFNUp, FFNDown, FFNPost                              []string
}

// llamaCppNames are llama.cpp's names, which its converters give every
// family; a tied output reads the embedding table.
var llamaCppNames = TensorNames{
	TokenEmbd:  []string{"token_embd.weight"},
	OutputNorm: []string{"output_norm.weight"},
	Output:     []string{"output.weight", "token_embd.weight"},
	AttnNorm:   []string{"blk.%d.attn_norm.weight"},
	AttnQ:      []string{"blk.%d.attn_q.weight"},
	AttnK:      []string{"blk.%d.attn_k.weight"},
	AttnV:      []string{"blk.%d.attn_v.weight"},
	AttnOut:    []string{"blk.%d.attn_output.weight"},
	AttnQNorm:  []string{"blk.%d.attn_q_norm.weight"},
	AttnKNorm:  []string{"blk.%d.attn_k_norm.weight"},
	AttnPost:   []string{"blk.%d.post_attention_norm.weight"},
	FFNNorm:    []string{"blk.%d.ffn_norm.weight"},
	FFNGate:    []string{"blk.%d.ffn_gate.weight"},
	FFNUp:      []string{"blk.%d.ffn_up.weight"},
	FFNDown:    []string{"blk.%d.ffn_down.weight"},
	FFNPost:    []string{"blk.%d.post_ffw_norm.weight"},
}

// archs holds the supported families by general.architecture. Mistral,
// TinyLlama and SmolLM files say "llama".
var archs = map[string]Arch{
	"llama": {Name: "llama", RopeMode: plan.RopeNormal, AddBOS: true, Tensors: llamaCppNames},
	"qwen2": {Name: "qwen2", RopeMode: plan.RopeNeoX, QKVBias: true, Tensors: llamaCppNames},
	"qwen3": {Name: "qwen3", RopeMode: plan.RopeNeoX, QKNorm: true, Tensors: llamaCppNames},
	"gemma3": {
		Name:           "gemma3",
		NormAt:         NormSandwich,
		FFN:            FFNGELUGated,
		RopeMode:       plan.RopeNeoX,
		QKNorm:         true,
		SlidingPattern: 6,
		LocalRopeBase:  10000,
		EmbedScale:     true,
		AddBOS:         true,
		Tensors:        llamaCppNames,
	},
}

// LookupArch returns the descriptor of a general.architecture value.
func LookupArch(name string) (Arch, error) {
	if a, ok := archs[name]; ok {
		return a, nil
	}
	if name == "" {
		return Arch{}, fmt.Errorf("llm: the file has no general.architecture")
	}
	return Arch{}, fmt.Errorf("llm: architecture %q is not supported (supported: %s)", name, strings.Join(Architectures(), ", "))
}

// Architectures lists the supported general.architecture values.
func Architectures() []string {
	names := make([]string, 0, len(archs))
	for n := range archs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Sliding reports whether layer l attends through the sliding window.
func (a *Arch) Sliding(l int) bool {
	return a.SlidingPattern > 0 && (l+1)%a.SlidingPattern != 0
}
