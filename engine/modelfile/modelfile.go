// Package modelfile opens any model file Hark reads (GGUF, whisper.cpp
// GGML) and describes it in one format-independent view: architecture,
// metadata summarised for printing, tokenizer summary and tensor table.
// It backs `hark inspect`.
package modelfile

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/ggmlbin"
	"github.com/harkapp/hark/engine/gguf"
)

// Tensor is one row of the tensor table.
type Tensor struct {
	Name  string
	Type  ggml.Type
	Shape []int64 // ggml order: Shape[0] is the contiguous dimension
	// Offset is the absolute byte offset of the tensor's data in the file.
	Offset int64
	Bytes  int64
}

// MarshalJSON writes the type as ggml's lower-case name.
func (t Tensor) MarshalJSON() ([]byte, error) {
	shape := t.Shape
	if shape == nil {
		shape = []int64{}
	}
	return json.Marshal(struct {
		Name   string  `json:"name"`
		Type   string  `json:"type"`
		Shape  []int64 `json:"shape"`
		Offset int64   `json:"offset"`
		Bytes  int64   `json:"bytes"`
	}{t.Name, t.Type.String(), shape, t.Offset, t.Bytes})
}

// Entry is one metadata item, its value already summarised (see
// Summarize).
type Entry struct {
	Key   string
	Value any
}

// Tokenizer summarises the vocabulary without listing it.
type Tokenizer struct {
	Model string `json:"model,omitempty"` // e.g. "llama", "gpt2", "whisper"
	Pre   string `json:"pre,omitempty"`   // GGUF pre-tokenizer name
	// VocabSize is the model's vocabulary size (rows of the embedding).
	VocabSize int `json:"vocab_size"`
	// Tokens is the number of token strings stored in the file; whisper.cpp
	// files store only the regular tokens, not the special ones.
	Tokens     int              `json:"tokens"`
	Merges     int              `json:"merges,omitempty"`
	Scores     int              `json:"scores,omitempty"`
	TokenTypes int              `json:"token_types,omitempty"`
	Special    map[string]int64 `json:"special_ids,omitempty"` // "bos" -> 1, ...
}

// File is an open model file.
type File struct {
	Path         string
	Format       Format
	Architecture string
	Metadata     []Entry // file order for GGUF
	Tokenizer    *Tokenizer
	Tensors      []Tensor

	// The format's own view, for callers that need more than the summary;
	// exactly one is set.
	GGUF *gguf.File
	GGML *ggmlbin.File
}

// Open sniffs and parses the model file at path.
func Open(path string) (*File, error) {
	head, err := readHead(path)
	if err != nil {
		return nil, err
	}
	format, err := Sniff(head)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && st.Size() > int64(len(head)) {
			b := head
			// A tokenizer is recognised only by walking the whole file;
			// do that for small files only.
			if st.Size() <= 16<<20 {
				if whole, rerr := os.ReadFile(path); rerr == nil {
					b = whole
				}
			}
			err = &FormatError{Guess: guess(b, st.Size())}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &File{Path: path, Format: format}
	switch format {
	case GGUF:
		g, err := gguf.Open(path)
		if err != nil {
			return nil, err
		}
		f.GGUF = g
		f.fromGGUF(g)
	case GGML:
		g, err := ggmlbin.Open(path)
		if err != nil {
			return nil, err
		}
		f.GGML = g
		f.fromGGML(g)
	}
	return f, nil
}

const headSize = 4096

func readHead(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b := make([]byte, headSize)
	n, err := io.ReadFull(fh, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b[:n], nil
}

// Close releases the underlying file.
func (f *File) Close() error {
	if f.GGUF != nil {
		return f.GGUF.Close()
	}
	if f.GGML != nil {
		return f.GGML.Close()
	}
	return nil
}

// MetadataMap returns the metadata as a map (for JSON).
func (f *File) MetadataMap() map[string]any {
	m := make(map[string]any, len(f.Metadata))
	for _, e := range f.Metadata {
		m[e.Key] = e.Value
	}
	return m
}

// TotalBytes is the sum of the tensors' data sizes.
func (f *File) TotalBytes() int64 {
	var n int64
	for _, t := range f.Tensors {
		n += t.Bytes
	}
	return n
}

// TotalElements is the number of weights in all tensors.
func (f *File) TotalElements() int64 {
	var n int64
	for _, t := range f.Tensors {
		e := int64(1)
		for _, d := range t.Shape {
			e *= d
		}
		n += e
	}
	return n
}

// CheckSupported returns a *ggml.UnsupportedError naming the first tensor
// of a type Hark cannot compute with.
func (f *File) CheckSupported() error {
	for _, t := range f.Tensors {
		if !t.Type.Supported() {
			return &ggml.UnsupportedError{Tensor: t.Name, Type: t.Type}
		}
	}
	return nil
}
