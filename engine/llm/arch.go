// Package llm runs decoder-only language models (Llama, Qwen2, Qwen3 and
// the families that share their layout) from GGUF files through the
// engine's plans. An architecture is a descriptor (Arch): the plan builder
// reads it, so a new family is usually a new descriptor, not a new forward
// pass.
package llm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/harkapp/hark/engine/plan"
)

// NormKind is the normalisation a block applies to its inputs.
type NormKind uint8

const (
	NormRMS NormKind = iota // RMSNorm with a weight, no bias
)

// Activation is the feed-forward activation.
type Activation uint8

const (
	// ActSwiGLU: down(silu(gate(x)) ⊙ up(x)).
	ActSwiGLU Activation = iota
)

// Arch describes one model family: everything the plan builder needs that
// is not a number in the file's metadata.
type Arch struct {
	Name string
	Norm NormKind
	Act  Activation
	// RopeMode pairs dimensions as llama.cpp does for the family: GGUF
	// converters permute Llama's Q/K weights for the interleaved (normal)
	// mode, while Qwen's weights keep Hugging Face's rotate-half (NeoX)
	// layout.
	RopeMode uint32
	// QKVBias: the Q, K and V projections have biases (required).
	// Biases of other families are used when a file has them.
	QKVBias bool
	// QKNorm: per-head RMSNorm of Q and K before RoPE (Qwen3).
	QKNorm bool
	// AddBOS is the default for files without tokenizer.ggml.add_bos_token.
	AddBOS bool
}

// archs holds the supported families by general.architecture. Mistral,
// TinyLlama and SmolLM files say "llama".
var archs = map[string]Arch{
	"llama": {Name: "llama", RopeMode: plan.RopeNormal, AddBOS: true},
	"qwen2": {Name: "qwen2", RopeMode: plan.RopeNeoX, QKVBias: true},
	"qwen3": {Name: "qwen3", RopeMode: plan.RopeNeoX, QKNorm: true},
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
