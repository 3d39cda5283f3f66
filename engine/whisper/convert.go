package whisper

import (
	"fmt"
	"io"
	"slices"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/ggmlbin"
)

// File types of whisper.cpp's header (ggml's ftype enum) for the types
// Convert writes. Quantized files add 1000 × the quantization version.
var convertFileTypes = map[ggml.Type]int32{
	ggml.F32:  0,
	ggml.F16:  1,
	ggml.Q4_0: 2,
	ggml.Q4_1: 3,
	ggml.Q8_0: 7,
	ggml.Q5_0: 8,
	ggml.Q5_1: 9,
}

// quantVersion is GGML_QNT_VERSION, stored in quantized files' ftype.
const quantVersion = 2

// ConvertTypes lists the types Convert writes.
func ConvertTypes() []ggml.Type {
	out := make([]ggml.Type, 0, len(convertFileTypes))
	for t := range convertFileTypes {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// keptFloat are the tensors whisper.cpp keeps in f32: its converter never
// stores them as f16 and its quantizer skips them.
var keptFloat = []string{"encoder.conv1.bias", "encoder.conv2.bias",
	"encoder.positional_embedding", "decoder.positional_embedding"}

// Convert writes src as a model of type t, as whisper.cpp's tools do:
//   - f32: every tensor f32 (the converter's use-f32 mode);
//   - f16: tensors of 2 or more dimensions f16 except the conv biases and
//     positional embeddings (the converter's default);
//   - q4_0, q4_1, q5_0, q5_1, q8_0: every 2-D tensor except those four
//     quantized with ggml's reference quantizers, the others copied as
//     they are (so the conv weights stay f16), as its quantize tool does.
//
// src must be a float (f32 or f16) file: re-quantizing is lossy.
func Convert(dst io.Writer, src *ggmlbin.File, t ggml.Type) error {
	ft, ok := convertFileTypes[t]
	if !ok {
		return fmt.Errorf("whisper: cannot write %s files (supported: %v)", t, ConvertTypes())
	}
	if f := src.HParams.FileType(); f != 0 && f != 1 {
		return fmt.Errorf("whisper: the source model has file type %d; convert from an f32 or f16 model", f)
	}
	h := src.HParams
	h.FType = ft
	if t != ggml.F32 && t != ggml.F16 {
		h.FType += quantVersion * ggmlbin.QntVersionFactor
	}
	w, err := ggmlbin.NewWriter(dst, h, src.Mel, src.Vocab)
	if err != nil {
		return err
	}
	var f32 []float32
	var out []byte
	for _, tn := range src.Tensors {
		target := tensorType(tn, t)
		if target == tn.Type {
			if err := w.WriteTensor(tn.Name, tn.Type, tn.Shape, tn.Data); err != nil {
				return err
			}
			continue
		}
		if tn.Type != ggml.F32 && tn.Type != ggml.F16 {
			return fmt.Errorf("whisper: tensor %q is %s; convert from an f32 or f16 model", tn.Name, tn.Type)
		}
		n := int64(1)
		for _, d := range tn.Shape {
			n *= d
		}
		size, err := ggml.TensorBytes(target, tn.Shape)
		if err != nil {
			return fmt.Errorf("whisper: tensor %q: %w", tn.Name, err)
		}
		f32 = slices.Grow(f32[:0], int(n))[:n]
		if err := ggml.Dequantize(tn.Type, tn.Data, f32); err != nil {
			return fmt.Errorf("whisper: tensor %q: %w", tn.Name, err)
		}
		out = slices.Grow(out[:0], int(size))[:size]
		if err := ggml.Quantize(target, f32, out); err != nil {
			return fmt.Errorf("whisper: tensor %q: %w", tn.Name, err)
		}
		if err := w.WriteTensor(tn.Name, target, tn.Shape, out); err != nil {
			return err
		}
	}
	return w.Close()
}

// tensorType is the type whisper.cpp's tools give a tensor in a file of
// type t.
func tensorType(tn ggmlbin.Tensor, t ggml.Type) ggml.Type {
	kept := slices.Contains(keptFloat, tn.Name)
	switch {
	case t == ggml.F32:
		return ggml.F32
	case t == ggml.F16:
		if len(tn.Shape) < 2 || kept {
			return ggml.F32
		}
		return ggml.F16
	case len(tn.Shape) == 2 && !kept:
		return t
	default:
		return tn.Type
	}
}
