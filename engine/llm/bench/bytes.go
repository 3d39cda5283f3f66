package bench

import "github.com/harkapp/hark/engine/gguf"

// WeightBytesPerToken is the weight bytes one decoded token reads: every
// tensor once, except that the token embedding is read one row at a time
// unless it is also the output projection (tied: no output.weight), which
// reads all of it. Achieved bandwidth is this over the time per token.
func WeightBytesPerToken(f *gguf.File) int64 {
	var n int64
	_, untied := f.Tensor("output.weight")
	for _, t := range f.Tensors {
		if t.Name == "token_embd.weight" && untied && len(t.Shape) == 2 && t.Shape[1] > 0 {
			n += t.Bytes / t.Shape[1] // one row
			continue
		}
		n += t.Bytes
	}
	return n
}
