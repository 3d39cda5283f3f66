package whisper

import (
	"fmt"

	"github.com/harkapp/hark/engine/ggmlbin"
	"github.com/harkapp/hark/engine/plan"
)

// File is an opened whisper.cpp model file with its vocabulary.
type File struct {
	*ggmlbin.File
	H     HParams
	Vocab *Vocab
}

// OpenFile opens and checks a whisper.cpp GGML model file.
func OpenFile(path string) (*File, error) {
	f, err := ggmlbin.Open(path)
	if err != nil {
		return nil, err
	}
	h, err := headOf(f, path, true)
	if err != nil {
		f.Close()
		return nil, err
	}
	v, err := NewVocab(f.Vocab, h.NVocab)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{File: f, H: h, Vocab: v}, nil
}

// OpenFileHead opens path's header and mel filters alone, checked as
// OpenFile checks them: a File for FileSpectrogram (the spectrogram
// computed while the runtime loads the model), without the vocabulary,
// whose 51,864 strings and tokenizer took most of OpenFile's time, nor
// tensors: not for Load or decoding.
func OpenFileHead(path string) (*File, error) {
	f, err := ggmlbin.OpenHead(path)
	if err != nil {
		return nil, err
	}
	h, err := headOf(f, path, false)
	if err != nil {
		return nil, err
	}
	return &File{File: f, H: h}, nil
}

// headOf is f's hyper-parameters, checked, and its filters' size against
// them; tensors: the tensors' types too.
func headOf(f *ggmlbin.File, path string, tensors bool) (HParams, error) {
	hp := f.HParams
	h := HParams{NVocab: int(hp.NVocab), NAudioCtx: int(hp.NAudioCtx), NAudioState: int(hp.NAudioState),
		NAudioHead: int(hp.NAudioHead), NAudioLayer: int(hp.NAudioLayer), NTextCtx: int(hp.NTextCtx),
		NTextState: int(hp.NTextState), NTextHead: int(hp.NTextHead), NTextLayer: int(hp.NTextLayer), NMels: int(hp.NMels)}
	if err := h.Validate(); err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	if tensors {
		if err := f.CheckSupported(); err != nil {
			return h, fmt.Errorf("%s: %w", path, err)
		}
	}
	if int(f.Mel.NMel) != h.NMels {
		return h, fmt.Errorf("%s: the file's mel filters have %d bins, the model %d", path, f.Mel.NMel, h.NMels)
	}
	return h, nil
}

// Tensor implements Weights.
func (f *File) Tensor(name string) (Tensor, bool) {
	t, ok := f.File.Tensor(name)
	if !ok {
		return Tensor{}, false
	}
	return Tensor{Type: t.Type, Shape: t.Shape, Data: t.Data}, true
}

// Load builds and loads the model on backend. The file must stay open while
// the model is in use: weights are read from its memory map.
func (f *File) Load(backend plan.Backend, opt Options) (*Model, error) {
	return Load(backend, f.H, f, opt)
}
