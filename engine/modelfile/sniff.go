package modelfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/ggmlbin"
	"github.com/harkapp/hark/engine/gguf"
)

// Format names a model file format.
type Format string

const (
	GGUF Format = "gguf"
	GGML Format = "ggml" // whisper.cpp's legacy .bin
)

// Sniff names the format of a file from its bytes: GGUF or GGML, or an
// error describing what the file seems to be instead.
func Sniff(b []byte) (Format, error) {
	switch {
	case gguf.IsGGUF(b):
		return GGUF, nil
	case ggmlbin.IsGGML(b):
		return GGML, nil
	}
	return "", &FormatError{Guess: guess(b, int64(len(b)))}
}

// FormatError reports a file that is not a model file Hark reads.
type FormatError struct {
	Guess string // what the file looks like, if anything
}

func (e *FormatError) Error() string {
	if e.Guess == "" {
		return "not a GGUF or whisper.cpp GGML model file"
	}
	return fmt.Sprintf("not a GGUF or whisper.cpp GGML model file (%s)", e.Guess)
}

// guess recognises formats users are likely to try by mistake from the
// file's first bytes b and its size.
func guess(b []byte, size int64) string {
	if len(b) == 0 {
		return "empty file"
	}
	if len(b) >= 4 {
		switch m := binary.LittleEndian.Uint32(b); m {
		case 0x67676d66, 0x67676a74, 0x67676c61:
			return fmt.Sprintf("legacy llama.cpp GGML file, magic %q: convert it to GGUF", []byte{b[3], b[2], b[1], b[0]})
		case 0x616b3432:
			return "llama2.c checkpoint?"
		}
	}
	switch {
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return "a zip archive: PyTorch checkpoint?"
	case len(b) >= 9 && b[8] == '{' && binary.LittleEndian.Uint64(b) < uint64(len(b)):
		return "safetensors file?"
	case isLlama2cCheckpoint(b, size):
		return "llama2.c checkpoint?"
	case int64(len(b)) == size && isLlama2cTokenizer(b):
		return "llama2.c tokenizer?"
	}
	return fmt.Sprintf("unrecognised header % x", b[:min(len(b), 8)])
}

// isLlama2cCheckpoint checks llama2.c's original (version 0) layout: seven
// int32s (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
// seq_len; a negative vocab_size means an unshared classifier) followed by
// exactly the float32 weights that configuration implies.
func isLlama2cCheckpoint(b []byte, size int64) bool {
	if len(b) < 28 {
		return false
	}
	var h [7]int64
	for i := range h {
		h[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	dim, hidden, layers, heads, kvHeads, vocab, seq := h[0], h[1], h[2], h[3], h[4], h[5], h[6]
	shared := vocab > 0
	if vocab < 0 {
		vocab = -vocab
	}
	for _, v := range h {
		if v == 0 || v > 1<<20 || v < -(1<<20) {
			return false
		}
	}
	if dim <= 0 || hidden <= 0 || layers <= 0 || heads <= 0 || kvHeads <= 0 || seq <= 0 || dim%heads != 0 {
		return false
	}
	headSize := dim / heads
	kvDim := kvHeads * headSize
	n := vocab*dim + layers*(2*dim+2*dim*dim+2*dim*kvDim+3*dim*hidden) + dim + seq*headSize
	if !shared {
		n += vocab * dim
	}
	return size == 28+4*n
}

// isLlama2cTokenizer checks llama2.c's tokenizer.bin: an int32 maximum
// token length, then (float32 score, int32 length, bytes) to the end.
func isLlama2cTokenizer(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	maxLen := int32(binary.LittleEndian.Uint32(b))
	if maxLen <= 0 || maxLen > 1<<16 {
		return false
	}
	p, n := 4, 0
	for p < len(b) {
		if len(b)-p < 8 {
			return false
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(b[p:]))
		l := int32(binary.LittleEndian.Uint32(b[p+4:]))
		if math.IsNaN(float64(score)) || l < 0 || l > maxLen || int(l) > len(b)-p-8 {
			return false
		}
		p += 8 + int(l)
		n++
	}
	return n > 0
}
