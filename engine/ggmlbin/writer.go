package ggmlbin

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/harkapp/hark/engine/ggml"
)

// Writer streams a whisper.cpp model file: the header (hyper-parameters,
// mel filters, vocabulary) first, then tensors one at a time, in the
// layout whisper.cpp's converter and quantizer produce.
type Writer struct {
	w     *bufio.Writer
	names map[string]bool
	err   error
	buf   [4]byte
}

// NewWriter writes the header to w.
func NewWriter(w io.Writer, h HParams, mel MelFilters, vocab []string) (*Writer, error) {
	if int64(len(mel.Data)) != int64(mel.NMel)*int64(mel.NFFT) || mel.NMel < 0 || mel.NFFT < 0 {
		return nil, fmt.Errorf("ggml: mel filters hold %d values, want %d×%d", len(mel.Data), mel.NMel, mel.NFFT)
	}
	if len(vocab) > math.MaxInt32 {
		return nil, errors.New("ggml: vocabulary too large")
	}
	wr := &Writer{w: bufio.NewWriterSize(w, 1<<20), names: map[string]bool{}}
	wr.u32(Magic)
	for _, v := range h.Values() {
		wr.u32(uint32(v))
	}
	wr.u32(uint32(mel.NMel))
	wr.u32(uint32(mel.NFFT))
	for _, x := range mel.Data {
		wr.u32(math.Float32bits(x))
	}
	wr.u32(uint32(len(vocab)))
	for _, tok := range vocab {
		wr.u32(uint32(len(tok)))
		wr.keep(wr.w.WriteString(tok))
	}
	return wr, wr.err
}

// WriteTensor appends one tensor; len(data) must match its type and shape.
func (w *Writer) WriteTensor(name string, t ggml.Type, shape []int64, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(shape) < 1 || len(shape) > MaxDims {
		return fmt.Errorf("ggml: tensor %q has %d dimensions (1 to %d allowed)", name, len(shape), MaxDims)
	}
	if w.names[name] {
		return fmt.Errorf("ggml: duplicate tensor name %q", name)
	}
	for _, d := range shape {
		if d < 0 || d > math.MaxInt32 {
			return fmt.Errorf("ggml: tensor %q: dimension %d does not fit the format", name, d)
		}
	}
	n, err := ggml.TensorBytes(t, shape)
	if err != nil {
		return fmt.Errorf("ggml: tensor %q: %w", name, err)
	}
	if int64(len(data)) != n {
		return fmt.Errorf("ggml: tensor %q needs %d bytes, got %d", name, n, len(data))
	}
	w.names[name] = true
	w.u32(uint32(len(shape)))
	w.u32(uint32(len(name)))
	w.u32(uint32(t))
	for _, d := range shape {
		w.u32(uint32(d))
	}
	w.keep(w.w.WriteString(name))
	if _, err := w.w.Write(data); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Close flushes; it does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

func (w *Writer) u32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:], v)
	w.keep(w.w.Write(w.buf[:]))
}

// keep records the first write error (Close and the header report it).
func (w *Writer) keep(_ int, err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

// WriteTo writes f in whisper.cpp's layout; a file parsed from disk is
// reproduced byte for byte.
func (f *File) WriteTo(out io.Writer) (int64, error) {
	cw := &countWriter{w: out}
	w, err := NewWriter(cw, f.HParams, f.Mel, f.Vocab)
	if err != nil {
		return cw.n, err
	}
	for _, t := range f.Tensors {
		if err := w.WriteTensor(t.Name, t.Type, t.Shape, t.Data); err != nil {
			return cw.n, err
		}
	}
	err = w.Close()
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	k, err := c.w.Write(b)
	c.n += int64(k)
	return k, err
}
