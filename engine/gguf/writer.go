package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/harkapp/hark/engine/ggml"
)

// Writer streams a GGUF v3 file: declare metadata and tensors first, then
// write each tensor's data in declaration order. Tensor data is never
// buffered, so files larger than memory can be written.
//
// The alignment is taken from a general.alignment metadata entry, if one
// is added, else DefaultAlignment. Every tensor's data is padded with zeros
// to the alignment; a file without tensors ends right after its header.
type Writer struct {
	w         *bufio.Writer
	kvs       []KV
	keys      map[string]bool
	tensors   []Tensor
	names     map[string]bool
	alignment int64
	next      int   // index of the next tensor whose data is due
	dataSize  int64 // relative offset after the declared tensors
	started   bool
	err       error
}

// NewWriter starts a GGUF file on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{
		w:         bufio.NewWriterSize(w, 1<<20),
		keys:      map[string]bool{},
		names:     map[string]bool{},
		alignment: DefaultAlignment,
	}
}

// AddKV declares a metadata entry. Keys must be unique.
func (w *Writer) AddKV(key string, v Value) error {
	switch {
	case w.started:
		return errors.New("gguf: AddKV after tensor data was written")
	case w.keys[key]:
		return fmt.Errorf("gguf: duplicate metadata key %q", key)
	case !v.valid:
		return fmt.Errorf("gguf: metadata key %q has no value", key)
	}
	if err := checkValue(v, 0); err != nil {
		return fmt.Errorf("gguf: metadata key %q: %w", key, err)
	}
	if key == KeyAlignment {
		a, ok := v.Int()
		if !ok || a <= 0 || a > 1<<30 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: %s must be a power of two up to 2^30", KeyAlignment)
		}
		if len(w.tensors) > 0 {
			return fmt.Errorf("gguf: %s must be added before the tensors", KeyAlignment)
		}
		w.alignment = a
	}
	w.keys[key] = true
	w.kvs = append(w.kvs, KV{key, v})
	return nil
}

// checkValue rejects arrays whose element type does not match their data
// and nesting the reader would refuse.
func checkValue(v Value, depth int) error {
	if v.typ != TypeArray {
		return nil
	}
	if depth+1 > maxDepth {
		return fmt.Errorf("arrays nested deeper than %d", maxDepth)
	}
	a := v.arr
	if a == nil || a.data == nil || NewArrayOf(a.data).Elem != a.Elem {
		return errors.New("malformed array")
	}
	if sub, ok := a.Arrays(); ok {
		for _, s := range sub {
			if err := checkValue(ArrayValue(s), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddTensor declares a tensor; its data follows later through WriteTensor.
func (w *Writer) AddTensor(name string, t ggml.Type, shape []int64) error {
	switch {
	case w.started:
		return errors.New("gguf: AddTensor after tensor data was written")
	case w.names[name]:
		return fmt.Errorf("gguf: duplicate tensor name %q", name)
	case len(shape) > MaxDims:
		return fmt.Errorf("gguf: tensor %q has %d dimensions (at most %d)", name, len(shape), MaxDims)
	}
	n, err := ggml.TensorBytes(t, shape)
	if err != nil {
		return fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	w.names[name] = true
	w.tensors = append(w.tensors, Tensor{Name: name, Type: t, Shape: append([]int64(nil), shape...), Offset: w.dataSize, Bytes: n})
	w.dataSize += alignUp(n, w.alignment)
	return nil
}

// WriteTensor writes the data of the next declared tensor; len(data) must
// be its size. The first call writes the header.
func (w *Writer) WriteTensor(data []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.next >= len(w.tensors) {
		return errors.New("gguf: WriteTensor: all declared tensors were written")
	}
	t := &w.tensors[w.next]
	if int64(len(data)) != t.Bytes {
		return fmt.Errorf("gguf: tensor %q needs %d bytes, got %d", t.Name, t.Bytes, len(data))
	}
	if err := w.header(); err != nil {
		return err
	}
	if _, err := w.w.Write(data); err != nil && w.err == nil {
		w.err = err
	}
	w.pad(t.Bytes)
	w.next++
	return w.err
}

// Close writes the header if no tensor data was written and flushes. It
// fails if declared tensors are missing data. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if err := w.header(); err != nil {
		return err
	}
	if w.next != len(w.tensors) {
		return fmt.Errorf("gguf: %d of %d tensors have no data", len(w.tensors)-w.next, len(w.tensors))
	}
	if err := w.w.Flush(); err != nil {
		return err
	}
	return w.err
}

func (w *Writer) header() error {
	if w.started {
		return w.err
	}
	w.started = true
	e := &encoder{w: w.w}
	e.raw([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		e.value(kv.Value)
	}
	for _, t := range w.tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.Type))
		e.u64(uint64(t.Offset))
	}
	if len(w.tensors) > 0 {
		w.pad(e.n)
	}
	if e.err != nil {
		w.err = e.err
	}
	return w.err
}

var zeros [256]byte

// pad writes zeros so that n bytes become a multiple of the alignment.
func (w *Writer) pad(n int64) {
	for p := alignUp(n, w.alignment) - n; p > 0; {
		k := min(p, int64(len(zeros)))
		if _, err := w.w.Write(zeros[:k]); err != nil && w.err == nil {
			w.err = err
		}
		p -= k
	}
}

// encoder writes little-endian GGUF fields and counts the bytes.
type encoder struct {
	w   io.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	k, err := e.w.Write(b)
	e.n += int64(k)
	e.err = err
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], v)
	e.raw(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.raw(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw([]byte(s))
}

func (e *encoder) value(v Value) {
	switch v.typ {
	case TypeString:
		e.str(v.str)
	case TypeArray:
		e.array(v.arr)
	default:
		binary.LittleEndian.PutUint64(e.buf[:], v.bits)
		e.raw(e.buf[:v.typ.fixedSize()])
	}
}

func (e *encoder) array(a *Array) {
	e.u32(uint32(a.Elem))
	e.u64(uint64(a.Len()))
	switch d := a.data.(type) {
	case []string:
		for _, s := range d {
			e.str(s)
		}
	case []*Array:
		for _, s := range d {
			e.array(s)
		}
	case []uint8:
		e.raw(d)
	default:
		// Fixed-size numbers: encode in chunks through a small buffer.
		var chunk [4096]byte
		size := a.Elem.fixedSize()
		n := a.Len()
		for i := 0; i < n; {
			k := 0
			for ; i < n && k+size <= len(chunk); i++ {
				binary.LittleEndian.PutUint64(e.buf[:], a.Index(i).bits)
				copy(chunk[k:], e.buf[:size])
				k += size
			}
			e.raw(chunk[:k])
		}
	}
}
