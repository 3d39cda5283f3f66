// Package gguf reads and writes GGUF model files (versions 2 and 3): typed
// metadata, a checked tensor index, and tensor data as slices of a memory
// map of the file.
package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/internal/binread"
	"github.com/harkapp/hark/engine/internal/mapfile"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the tensor data alignment when general.alignment is
// absent.
const DefaultAlignment = 32

// MaxDims is the most dimensions a ggml tensor has.
const MaxDims = 4

// KeyAlignment is the metadata key that sets the tensor data alignment.
const KeyAlignment = "general.alignment"

// KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// Tensor is one entry of the tensor index.
type Tensor struct {
	Name  string
	Type  ggml.Type
	Shape []int64 // ggml order: Shape[0] is the contiguous dimension
	// Offset is the absolute byte offset of the data in the file.
	Offset int64
	// Bytes is the data size, ggml.TensorBytes(Type, Shape).
	Bytes int64
	// Data is the tensor's bytes, a slice of the file's mapping: valid
	// until the File is closed, and read-only.
	Data []byte
}

// Elements is the number of elements (the product of Shape).
func (t *Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is a parsed GGUF file.
type File struct {
	Version   uint32
	Alignment int64
	// DataOffset is the absolute offset of the tensor data section.
	DataOffset int64
	KVs        []KV // in file order
	Tensors    []Tensor

	kvIndex     map[string]int
	tensorIndex map[string]int
	m           *mapfile.File
	data        []byte // the whole file, which the tensors' Data alias
}

// Open memory-maps and parses the file at path. Close releases the map.
func Open(path string) (*File, error) {
	f, m, err := mapfile.OpenParsed(path, Parse)
	if err != nil {
		return nil, err
	}
	f.m = m
	return f, nil
}

// Close releases the file mapping; tensor Data must not be used afterwards.
func (f *File) Close() error {
	return mapfile.Release(&f.m, func() {
		for i := range f.Tensors {
			f.Tensors[i].Data = nil
		}
		f.data = nil
	})
}

// Parse reads a GGUF file held in memory. Tensor Data slices alias b.
func Parse(b []byte) (*File, error) {
	f, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	return f, nil
}

func parse(b []byte) (*File, error) {
	d := &decoder{binread.Reader{B: b}}
	magic, err := d.Take(4, "magic")
	if err != nil {
		return nil, err
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("not a GGUF file (magic %q)", magic)
	}
	f := &File{Alignment: DefaultAlignment}
	if f.Version, err = d.U32("version"); err != nil {
		return nil, err
	}
	switch {
	case f.Version == 2 || f.Version == 3:
	case f.Version == 1:
		return nil, errors.New("GGUF version 1 is obsolete and not supported (convert the file again)")
	case f.Version&0xffff == 0 && bits.ReverseBytes32(f.Version) <= 3:
		return nil, errors.New("big-endian GGUF files are not supported")
	default:
		return nil, fmt.Errorf("unsupported GGUF version %d", f.Version)
	}
	// Minimum encodings: a tensor info is name length, n_dims, type and
	// offset (24 bytes); a KV is key length, type and a 1-byte value.
	nTensors, err := d.count(24, "tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := d.count(13, "metadata count")
	if err != nil {
		return nil, err
	}
	if err := f.readKVs(d, nKV); err != nil {
		return nil, err
	}
	if err := f.readTensorInfos(d, nTensors); err != nil {
		return nil, err
	}
	if err := f.placeTensors(b, d.Pos); err != nil {
		return nil, err
	}
	f.data = b
	return f, nil
}

func (f *File) readKVs(d *decoder, n int) error {
	f.KVs = make([]KV, 0, min(n, maxPrealloc))
	f.kvIndex = make(map[string]int, min(n, maxPrealloc))
	for range n {
		at := d.Pos
		key, err := d.str("metadata key")
		if err != nil {
			return err
		}
		if _, dup := f.kvIndex[key]; dup {
			return fmt.Errorf("duplicate metadata key %q at offset %d", key, at)
		}
		t, err := d.valueType("metadata value type")
		if err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		v, err := d.value(t, 0)
		if err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		f.kvIndex[key] = len(f.KVs)
		f.KVs = append(f.KVs, KV{key, v})
	}
	if v, ok := f.Get(KeyAlignment); ok {
		a, ok := v.Int()
		if !ok || a <= 0 || a > 1<<30 || a&(a-1) != 0 {
			return fmt.Errorf("%s must be a power of two up to 2^30, got %s %v", KeyAlignment, v.Type(), v.Any())
		}
		f.Alignment = a
	}
	return nil
}

func (f *File) readTensorInfos(d *decoder, n int) error {
	f.Tensors = make([]Tensor, 0, min(n, maxPrealloc))
	f.tensorIndex = make(map[string]int, min(n, maxPrealloc))
	for i := range n {
		f.Tensors = append(f.Tensors, Tensor{})
		t := &f.Tensors[i]
		at := d.Pos
		var err error
		if t.Name, err = d.str("tensor name"); err != nil {
			return err
		}
		if _, dup := f.tensorIndex[t.Name]; dup {
			return fmt.Errorf("duplicate tensor name %q at offset %d", t.Name, at)
		}
		f.tensorIndex[t.Name] = i
		nd, err := d.U32("tensor dimension count")
		if err != nil {
			return err
		}
		if nd > MaxDims {
			return fmt.Errorf("tensor %q has %d dimensions (at most %d)", t.Name, nd, MaxDims)
		}
		t.Shape = make([]int64, nd)
		for j := range t.Shape {
			v, err := d.U64("tensor dimension")
			if err != nil {
				return err
			}
			if v > 1<<50 {
				return fmt.Errorf("tensor %q has an absurd dimension %d", t.Name, v)
			}
			t.Shape[j] = int64(v)
		}
		ty, err := d.U32("tensor type")
		if err != nil {
			return err
		}
		t.Type = ggml.Type(ty)
		if !t.Type.Known() {
			return fmt.Errorf("tensor %q has unknown type id %d", t.Name, ty)
		}
		if t.Bytes, err = ggml.TensorBytes(t.Type, t.Shape); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		off, err := d.U64("tensor offset")
		if err != nil {
			return err
		}
		if off > 1<<60 {
			return fmt.Errorf("tensor %q has an absurd data offset %d", t.Name, off)
		}
		t.Offset = int64(off) // relative for now; placeTensors makes it absolute
	}
	return nil
}

// placeTensors checks every tensor's data range (aligned, inside the file,
// no overlaps) and slices its data.
func (f *File) placeTensors(b []byte, infoEnd int) error {
	f.DataOffset = alignUp(int64(infoEnd), f.Alignment)
	if len(f.Tensors) == 0 {
		// Vocabulary-only files end right after the header, unpadded.
		return nil
	}
	size := int64(len(b))
	if f.DataOffset > size {
		return fmt.Errorf("tensor data section starts at %d, past the end of the file (%d bytes)", f.DataOffset, size)
	}
	order := make([]int, len(f.Tensors))
	for i := range order {
		t := &f.Tensors[i]
		order[i] = i
		if t.Offset%f.Alignment != 0 {
			return fmt.Errorf("tensor %q data offset %d is not a multiple of the alignment %d", t.Name, t.Offset, f.Alignment)
		}
		t.Offset += f.DataOffset
		if t.Offset > size || t.Bytes > size-t.Offset {
			return fmt.Errorf("tensor %q data [%d, %d) lies outside the file (%d bytes)", t.Name, t.Offset, t.Offset+t.Bytes, size)
		}
		t.Data = b[t.Offset : t.Offset+t.Bytes : t.Offset+t.Bytes]
	}
	slices.SortFunc(order, func(a, c int) int {
		return int(min(max(f.Tensors[a].Offset-f.Tensors[c].Offset, -1), 1))
	})
	// Compare each tensor with the furthest-reaching one before it, so
	// empty tensors in between cannot hide an overlap.
	var prev *Tensor
	for _, i := range order {
		q := &f.Tensors[i]
		if q.Bytes == 0 {
			continue
		}
		if prev != nil && prev.Offset+prev.Bytes > q.Offset {
			return fmt.Errorf("tensors %q and %q overlap in the file", prev.Name, q.Name)
		}
		if prev == nil || q.Offset+q.Bytes > prev.Offset+prev.Bytes {
			prev = q
		}
	}
	return nil
}

// Adjacent returns the bytes of ts as one slice of the file when each
// tensor's data starts where the previous one's ends (no alignment gap),
// and false otherwise. Backends can then treat several same-typed matrices
// as one (Q, K and V as one product) without copying them.
func (f *File) Adjacent(ts ...*Tensor) ([]byte, bool) {
	if len(ts) == 0 || f.data == nil {
		return nil, false
	}
	end := ts[0].Offset
	for _, t := range ts {
		if t == nil || t.Offset != end || t.Bytes == 0 {
			return nil, false
		}
		end += t.Bytes
	}
	return f.data[ts[0].Offset:end:end], true
}

func alignUp(n, a int64) int64 { return (n + a - 1) &^ (a - 1) }

// Get returns the metadata value for key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KVs[i].Value, true
}

// GetString returns a string-typed key; it fails when the key is missing
// or has another type.
func (f *File) GetString(key string) (string, error) { return getAs(f, key, "string", Value.String) }

// GetInt returns an integer key of any integer type as int64.
func (f *File) GetInt(key string) (int64, error) { return getAs(f, key, "integer", Value.Int) }

// GetFloat returns a float32 or float64 key as float64.
func (f *File) GetFloat(key string) (float64, error) { return getAs(f, key, "float", Value.Float) }

// GetArray returns an array key.
func (f *File) GetArray(key string) (*Array, error) { return getAs(f, key, "array", Value.Array) }

// getAs reads key through as, which reports whether the value has the
// type the caller wants (named want in the error).
func getAs[T any](f *File, key, want string, as func(Value) (T, bool)) (T, error) {
	var zero T
	v, err := f.get(key)
	if err != nil {
		return zero, err
	}
	if x, ok := as(v); ok {
		return x, nil
	}
	return zero, f.typeErr(key, v, want)
}

func (f *File) get(key string) (Value, error) {
	v, ok := f.Get(key)
	if !ok {
		return Value{}, fmt.Errorf("gguf: missing metadata key %q", key)
	}
	return v, nil
}

func (f *File) typeErr(key string, v Value, want string) error {
	return fmt.Errorf("gguf: metadata key %q has type %s, want %s", key, v.Type(), want)
}

// Architecture is general.architecture, or "" when absent.
func (f *File) Architecture() string {
	s, _ := f.GetString("general.architecture")
	return s
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.tensorIndex[name]
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

// IsGGUF reports whether b starts with the GGUF magic.
func IsGGUF(b []byte) bool { return bytes.HasPrefix(b, []byte(Magic)) }
