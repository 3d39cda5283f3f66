package gguf

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/stretchr/testify/require"
)

// rawTensor is a tensor info written verbatim, valid or not.
type rawTensor struct {
	name string
	dims []uint64
	typ  uint32
	off  uint64
}

// rawFile encodes a GGUF file field by field so that tests can write what
// the Writer refuses to. kvs is appended verbatim after the counts.
func rawFile(version uint32, nTensors, nKV uint64, kvs []byte, tensors []rawTensor, dataLen int) []byte {
	var buf bytes.Buffer
	e := &encoder{w: &buf}
	e.raw([]byte(Magic))
	e.u32(version)
	e.u64(nTensors)
	e.u64(nKV)
	e.raw(kvs)
	for _, t := range tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(d)
		}
		e.u32(t.typ)
		e.u64(t.off)
	}
	for buf.Len()%DefaultAlignment != 0 {
		buf.WriteByte(0)
	}
	buf.Write(make([]byte, dataLen))
	return buf.Bytes()
}

func kvBytes(key string, typ uint32, payload ...[]byte) []byte {
	var buf bytes.Buffer
	e := &encoder{w: &buf}
	e.str(key)
	e.u32(typ)
	for _, p := range payload {
		e.raw(p)
	}
	return buf.Bytes()
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func TestHostile(t *testing.T) {
	f32 := uint32(ggml.F32)
	ok1 := rawTensor{"a", []uint64{8}, f32, 0}
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"wrong magic", []byte("GGUG\x03\x00\x00\x00"), "not a GGUF file"},
		{"version 1", rawFile(1, 0, 0, nil, nil, 0), "version 1"},
		{"version 9", rawFile(9, 0, 0, nil, nil, 0), "unsupported GGUF version 9"},
		{"big endian", rawFile(0x03000000, 0, 0, nil, nil, 0), "big-endian"},
		{"absurd tensor count", rawFile(3, 1<<60, 0, nil, nil, 0), "tensor count"},
		{"absurd kv count", rawFile(3, 0, 1<<40, nil, nil, 0), "metadata count"},
		{"huge key", rawFile(3, 0, 1, append(le64(1<<62), make([]byte, 16)...), nil, 0), "metadata key length"},
		{"huge string value", rawFile(3, 0, 1, kvBytes("k", 8, le64(1<<50)), nil, 0), "string length"},
		{"unknown value type", rawFile(3, 0, 1, kvBytes("k", 13), nil, 0), "unknown metadata value type 13"},
		{"unknown array elem", rawFile(3, 0, 1, kvBytes("k", 9, le32(77), le64(0)), nil, 0), "unknown metadata value type 77"},
		{"huge array", rawFile(3, 0, 1, kvBytes("k", 9, le32(4), le64(1<<40)), nil, 0), "array length"},
		{"huge string array", rawFile(3, 0, 1, kvBytes("k", 9, le32(8), le64(1<<20)), nil, 0), "array length"},
		{"bad bool", rawFile(3, 0, 1, kvBytes("k", 7, []byte{2}), nil, 0), "invalid bool"},
		{"deep nesting", rawFile(3, 0, 1, kvBytes("k", 9, bytes.Repeat(append(le32(9), le64(1)...), 20)), nil, 0), "nested deeper"},
		{"duplicate key", rawFile(3, 0, 2, append(kvBytes("k", 0, []byte{1}), kvBytes("k", 0, []byte{1})...), nil, 0), "duplicate metadata key"},
		{"alignment not power of two", rawFile(3, 0, 1, kvBytes(KeyAlignment, 4, le32(48)), nil, 0), "power of two"},
		{"alignment zero", rawFile(3, 0, 1, kvBytes(KeyAlignment, 4, le32(0)), nil, 0), "power of two"},
		{"alignment wrong type", rawFile(3, 0, 1, kvBytes(KeyAlignment, 6, le32(0x42000000)), nil, 0), "power of two"},
		{"too many dims", rawFile(3, 1, 0, nil, []rawTensor{{"a", []uint64{1, 1, 1, 1, 1}, f32, 0}}, 32), "5 dimensions"},
		{"absurd dim", rawFile(3, 1, 0, nil, []rawTensor{{"a", []uint64{1 << 62}, f32, 0}}, 32), "absurd dimension"},
		{"overflowing shape", rawFile(3, 1, 0, nil, []rawTensor{{"a", []uint64{1 << 30, 1 << 30, 1 << 30}, f32, 0}}, 32), "overflows"},
		{"unknown tensor type", rawFile(3, 1, 0, nil, []rawTensor{{"a", []uint64{8}, 4, 0}}, 32), "unknown type id 4"},
		{"partial block", rawFile(3, 1, 0, nil, []rawTensor{{"a", []uint64{31}, uint32(ggml.Q4_0), 0}}, 32), "block size"},
		{"duplicate tensor", rawFile(3, 2, 0, nil, []rawTensor{ok1, {"a", []uint64{8}, f32, 32}}, 64), "duplicate tensor name"},
		{"out of range", rawFile(3, 1, 0, nil, []rawTensor{{"a", []uint64{8}, f32, 32}}, 32), "outside the file"},
		{"data truncated", rawFile(3, 1, 0, nil, []rawTensor{ok1}, 31), "outside the file"},
		{"absurd offset", rawFile(3, 1, 0, nil, []rawTensor{{"a", []uint64{8}, f32, 1 << 63}}, 32), "absurd data offset"},
		{"misaligned", rawFile(3, 1, 0, nil, []rawTensor{{"a", []uint64{1}, f32, 4}}, 32), "not a multiple of the alignment"},
		{"overlap", rawFile(3, 2, 0, nil, []rawTensor{{"a", []uint64{16}, f32, 0}, {"b", []uint64{8}, f32, 32}}, 64), "overlap"},
		{"overlap hidden by empty", rawFile(3, 3, 0, nil, []rawTensor{{"a", []uint64{32}, f32, 0}, {"e", []uint64{0}, f32, 32}, {"b", []uint64{8}, f32, 64}}, 128), "overlap"},
		{"no data section", rawFile(3, 1, 0, nil, []rawTensor{ok1}, 0)[:57], "past the end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.b)
			require.ErrorContains(t, err, c.want)
		})
	}

	// The valid variants of the same constructions parse.
	for _, b := range [][]byte{
		rawFile(2, 1, 0, nil, []rawTensor{ok1}, 32),
		rawFile(3, 2, 0, nil, []rawTensor{{"a", []uint64{8}, f32, 32}, {"b", []uint64{8}, f32, 0}}, 64),
		rawFile(3, 0, 1, kvBytes(KeyAlignment, 10, le64(64)), nil, 0),
		rawFile(3, 2, 0, nil, []rawTensor{{"e", []uint64{0}, f32, 0}, {"b", []uint64{8}, f32, 0}}, 32),
	} {
		_, err := Parse(b)
		require.NoError(t, err)
	}
}

// TestTruncations parses every prefix of a valid file: all but the whole
// file must fail cleanly.
func TestTruncations(t *testing.T) {
	b := build(t)
	f, err := Parse(b)
	require.NoError(t, err)
	// The last tensor's padding can be cut without losing data, so only
	// prefixes short of its data end must fail.
	last := f.Tensors[0]
	for _, tt := range f.Tensors {
		if tt.Offset+tt.Bytes > last.Offset+last.Bytes {
			last = tt
		}
	}
	for n := range int(last.Offset + last.Bytes) {
		_, err := Parse(b[:n])
		require.Error(t, err, "prefix %d", n)
	}
}

// TestAllocationBound: a small file claiming a huge array must fail before
// allocating anything like the claimed size.
func TestAllocationBound(t *testing.T) {
	b := rawFile(3, 0, 1, kvBytes("k", 9, le32(12), le64(1<<27)), nil, 0)
	allocs := testing.AllocsPerRun(5, func() { Parse(b) })
	require.Less(t, allocs, 20.0)
	var ms [2]runtimeMem
	ms[0].read()
	for range 10 {
		_, err := Parse(b)
		require.Error(t, err)
	}
	ms[1].read()
	require.Less(t, ms[1].total-ms[0].total, uint64(1<<20), "bytes allocated by 10 parses")
}

// TestCorruptCountInLargeFile: a count that the file's size allows but its
// content does not back must not reserve memory for every claimed entry.
func TestCorruptCountInLargeFile(t *testing.T) {
	const size = 4 << 20
	for _, b := range [][]byte{
		rawFile(3, size/24, 0, nil, nil, size),                                           // zero infos: duplicate "" name
		rawFile(3, 0, 1, kvBytes("k", 9, le32(8), le64(size/8), le64(1<<40)), nil, size), // string array
		rawFile(3, 0, size/13, kvBytes("k", 0, []byte{1}), nil, size),                    // KVs: duplicate key ""
	} {
		var ms [2]runtimeMem
		ms[0].read()
		_, err := Parse(b)
		ms[1].read()
		require.Error(t, err)
		require.Less(t, ms[1].total-ms[0].total, uint64(size/2), "bytes allocated")
	}
}
