package plan

import "github.com/harkapp/hark/engine/ggml"

// LayerNormMatVecType reports whether LayerNormMatVec takes weights of type
// t. The set is the GPU instances' (shaders' layer_norm_mat_vec_*): each
// instance grows every backend's kernels, so only the types Whisper's
// decoder multiplies by are carried; a model with other weights keeps
// LayerNorm and a MatVec.
func LayerNormMatVecType(t ggml.Type) bool {
	return t == ggml.F32 || t == ggml.F16 || t == ggml.Q8_0
}
