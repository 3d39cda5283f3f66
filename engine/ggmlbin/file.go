// Package ggmlbin reads and writes whisper.cpp's GGML model files (.bin):
// a magic, Whisper's hyper-parameters, the stored mel filter bank, the
// vocabulary, then tensors stored back to back without alignment.
package ggmlbin

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/internal/binread"
	"github.com/harkapp/hark/engine/internal/mapfile"
)

// Magic is the little-endian uint32 at the start of the file ("lmgg" on disk).
const Magic uint32 = 0x67676d6c

// MaxDims is the most dimensions a tensor may have.
const MaxDims = 4

// QntVersionFactor: quantized files store ftype + 1000 × GGML_QNT_VERSION.
const QntVersionFactor = 1000

// HParams are the hyper-parameters in file order.
type HParams struct {
	NVocab      int32
	NAudioCtx   int32
	NAudioState int32
	NAudioHead  int32
	NAudioLayer int32
	NTextCtx    int32
	NTextState  int32
	NTextHead   int32
	NTextLayer  int32
	NMels       int32
	// FType is the raw stored value: file type + 1000 × quantization version.
	FType int32
}

// FileType is the ggml file type (ftype % 1000): 0 f32, 1 f16, 2 q4_0,
// 3 q4_1, 7 q8_0, 8 q5_0, 9 q5_1, ...
func (h HParams) FileType() int32 { return h.FType % QntVersionFactor }

// QuantVersion is the GGML quantization format version (0 for float files).
func (h HParams) QuantVersion() int32 { return h.FType / QntVersionFactor }

func (h *HParams) fields() []*int32 {
	return []*int32{&h.NVocab, &h.NAudioCtx, &h.NAudioState, &h.NAudioHead, &h.NAudioLayer,
		&h.NTextCtx, &h.NTextState, &h.NTextHead, &h.NTextLayer, &h.NMels, &h.FType}
}

// HParamNames are the fields' names as whisper.cpp calls them, in file order.
var HParamNames = []string{"n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
	"n_text_ctx", "n_text_state", "n_text_head", "n_text_layer", "n_mels", "ftype"}

// Values returns the hyper-parameters in file order (see HParamNames).
func (h HParams) Values() []int32 {
	out := make([]int32, 0, len(HParamNames))
	for _, p := range h.fields() {
		out = append(out, *p)
	}
	return out
}

// MelFilters is the stored filter bank, NMel rows of NFFT floats.
type MelFilters struct {
	NMel, NFFT int32
	Data       []float32 // row-major, NMel × NFFT
}

// Tensor is one stored tensor.
type Tensor struct {
	Name  string
	Type  ggml.Type
	Shape []int64 // ggml order: Shape[0] is the contiguous dimension
	// Offset is the absolute byte offset of the data in the file.
	Offset int64
	Bytes  int64
	// Data aliases the file mapping: read-only, valid until Close.
	Data []byte
}

// File is a parsed whisper.cpp model file.
type File struct {
	HParams HParams
	Mel     MelFilters
	// Vocab holds the stored token byte strings (Go strings may hold any
	// bytes). whisper.cpp stores only the regular tokens; special tokens
	// are implied by NVocab.
	Vocab   []string
	Tensors []Tensor

	index map[string]int
	m     *mapfile.File
}

// Open memory-maps and parses path.
func Open(path string) (*File, error) {
	f, m, err := mapfile.OpenParsed(path, Parse)
	if err != nil {
		return nil, err
	}
	f.m = m
	return f, nil
}

// Close releases the mapping; tensor Data must not be used afterwards.
func (f *File) Close() error {
	return mapfile.Release(&f.m, func() {
		for i := range f.Tensors {
			f.Tensors[i].Data = nil
		}
	})
}

// IsGGML reports whether b starts with the whisper.cpp GGML magic.
func IsGGML(b []byte) bool { return len(b) >= 4 && binary.LittleEndian.Uint32(b) == Magic }

// Parse reads a whisper.cpp model held in memory; tensor Data aliases b.
func Parse(b []byte) (*File, error) {
	f, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("ggml: %w", err)
	}
	return f, nil
}

// OpenHead reads path's header and mel filters alone: a File with
// HParams and Mel, no vocabulary and no tensors (what a spectrogram
// needs, without the vocabulary's 51,864 strings).
func OpenHead(path string) (*File, error) {
	f, m, err := mapfile.OpenParsed(path, func(b []byte) (*File, error) {
		f, _, err := parseHead(b)
		if err != nil {
			return nil, fmt.Errorf("ggml: %w", err)
		}
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	m.Close() // nothing aliases the map: the filters are copied
	return f, nil
}

func parse(b []byte) (*File, error) {
	f, d, err := parseHead(b)
	if err != nil {
		return nil, err
	}
	if err := f.readVocab(d); err != nil {
		return nil, err
	}
	for d.Remaining() > 0 {
		if err := f.readTensor(d); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// parseHead reads the magic, the hyper-parameters and the mel filters,
// and returns the decoder at the vocabulary.
func parseHead(b []byte) (*File, *decoder, error) {
	d := &decoder{binread.Reader{B: b}}
	magic, err := d.U32("magic")
	if err != nil {
		return nil, nil, err
	}
	if magic != Magic {
		return nil, nil, fmt.Errorf("not a whisper.cpp GGML file (magic 0x%08x)", magic)
	}
	f := &File{index: map[string]int{}}
	for i, p := range f.HParams.fields() {
		if *p, err = d.I32("hyper-parameter " + HParamNames[i]); err != nil {
			return nil, nil, err
		}
		// Beyond 2^24 no Whisper dimension is plausible, and the bound
		// keeps later products far from overflow.
		if *p < 0 || *p > 1<<24 {
			return nil, nil, fmt.Errorf("hyper-parameter %s = %d is out of range", HParamNames[i], *p)
		}
	}
	if err := f.readMel(d); err != nil {
		return nil, nil, err
	}
	return f, d, nil
}

func (f *File) readMel(d *decoder) error {
	var err error
	if f.Mel.NMel, err = d.I32("mel filter count"); err != nil {
		return err
	}
	if f.Mel.NFFT, err = d.I32("mel filter length"); err != nil {
		return err
	}
	n := int64(f.Mel.NMel) * int64(f.Mel.NFFT)
	if f.Mel.NMel < 0 || f.Mel.NFFT < 0 || n > int64(d.Remaining()/4) {
		return fmt.Errorf("mel filters %d×%d do not fit in the file", f.Mel.NMel, f.Mel.NFFT)
	}
	raw, err := d.Take(int(n)*4, "mel filters")
	if err != nil {
		return err
	}
	f.Mel.Data = make([]float32, n)
	for i := range f.Mel.Data {
		f.Mel.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return nil
}

func (f *File) readVocab(d *decoder) error {
	n, err := d.I32("vocabulary size")
	if err != nil {
		return err
	}
	if n < 0 || int(n) > d.Remaining()/4 {
		return fmt.Errorf("vocabulary size %d does not fit in the file", n)
	}
	// Grow as tokens are read: a corrupt count must not size the
	// allocation (a Go string header is 4 times its length prefix).
	f.Vocab = make([]string, 0, min(n, 1<<10))
	for i := range int(n) {
		l, err := d.U32("token length")
		if err != nil {
			return err
		}
		n := int(min(l, math.MaxInt32))
		s, err := d.Take(n, "token")
		if err != nil { // named by its index only here: a Sprintf a token was a third of the parse
			_, err = d.Take(n, fmt.Sprintf("token %d", i))
			return err
		}
		f.Vocab = append(f.Vocab, string(s))
	}
	return nil
}

func (f *File) readTensor(d *decoder) error {
	at := d.Pos
	nDims, err := d.I32("tensor dimension count")
	if err != nil {
		return err
	}
	nameLen, err := d.I32("tensor name length")
	if err != nil {
		return err
	}
	ttype, err := d.I32("tensor type")
	if err != nil {
		return err
	}
	if nDims < 1 || nDims > MaxDims {
		return fmt.Errorf("tensor at offset %d has %d dimensions (1 to %d allowed)", at, nDims, MaxDims)
	}
	t := Tensor{Type: ggml.Type(ttype), Shape: make([]int64, nDims)}
	for i := range t.Shape {
		v, err := d.I32("tensor dimension")
		if err != nil {
			return err
		}
		if v < 0 {
			return fmt.Errorf("tensor at offset %d has negative dimension %d", at, v)
		}
		t.Shape[i] = int64(v)
	}
	if nameLen < 0 || int(nameLen) > d.Remaining() {
		return fmt.Errorf("tensor at offset %d: name length %d does not fit in the file", at, nameLen)
	}
	name, _ := d.Take(int(nameLen), "tensor name")
	t.Name = string(name)
	if ttype < 0 || !t.Type.Known() {
		return fmt.Errorf("tensor %q has unknown type id %d", t.Name, ttype)
	}
	if _, dup := f.index[t.Name]; dup {
		return fmt.Errorf("duplicate tensor name %q", t.Name)
	}
	if t.Bytes, err = ggml.TensorBytes(t.Type, t.Shape); err != nil {
		return fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if t.Bytes > int64(d.Remaining()) {
		return fmt.Errorf("tensor %q needs %d bytes of data, the file has %d left", t.Name, t.Bytes, d.Remaining())
	}
	t.Offset = int64(d.Pos)
	t.Data, _ = d.Take(int(t.Bytes), "tensor data")
	t.Data = t.Data[:len(t.Data):len(t.Data)]
	f.index[t.Name] = len(f.Tensors)
	f.Tensors = append(f.Tensors, t)
	return nil
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.index[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// CheckSupported returns a *ggml.UnsupportedError for the first tensor
// whose type Hark cannot compute with.
func (f *File) CheckSupported() error {
	for i := range f.Tensors {
		if t := &f.Tensors[i]; !t.Type.Supported() {
			return &ggml.UnsupportedError{Tensor: t.Name, Type: t.Type}
		}
	}
	return nil
}

// decoder reads little-endian fields with bounds checks.
type decoder struct{ binread.Reader }
