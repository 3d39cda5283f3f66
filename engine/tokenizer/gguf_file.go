package tokenizer

import (
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/gguf"
)

// ggufMetadata adapts a parsed GGUF file to Metadata.
type ggufMetadata struct{ f *gguf.File }

func (m ggufMetadata) String(key string) (string, bool) {
	v, ok := m.f.Get(key)
	if !ok {
		return "", false
	}
	return v.String()
}

func (m ggufMetadata) array(key string) (*gguf.Array, bool) {
	v, ok := m.f.Get(key)
	if !ok {
		return nil, false
	}
	return v.Array()
}

func (m ggufMetadata) Strings(key string) ([]string, bool) {
	a, ok := m.array(key)
	if !ok {
		return nil, false
	}
	return a.Strings()
}

func (m ggufMetadata) Int(key string) (int64, bool) {
	v, ok := m.f.Get(key)
	if !ok {
		return 0, false
	}
	return v.Int()
}

func (m ggufMetadata) Bool(key string) (bool, bool) {
	v, ok := m.f.Get(key)
	if !ok {
		return false, false
	}
	return v.Bool()
}

func (m ggufMetadata) Float32s(key string) ([]float32, bool) {
	a, ok := m.array(key)
	if !ok {
		return nil, false
	}
	return a.Float32s()
}

// Int32s accepts any integer element type: writers disagree on the type of
// tokenizer.ggml.token_type.
func (m ggufMetadata) Int32s(key string) ([]int32, bool) {
	a, ok := m.array(key)
	if !ok {
		return nil, false
	}
	if v, ok := a.Int32s(); ok {
		return v, true
	}
	out := make([]int32, a.Len())
	for i := range out {
		n, ok := a.Index(i).Int()
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return nil, false
		}
		out[i] = int32(n)
	}
	return out, true
}

// FromGGUFFile builds the tokenizer of an opened GGUF file.
func FromGGUFFile(f *gguf.File) (*Tokenizer, error) { return FromGGUF(ggufMetadata{f}) }

// LoadGGUF opens a GGUF file (a full model or a vocab-only file) and builds
// its tokenizer. The tokenizer keeps no reference to the file.
func LoadGGUF(path string) (*Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	return FromGGUFFile(f)
}
