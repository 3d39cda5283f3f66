package gguf

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// sampleKVs covers all 13 value types, arrays of each, and nested arrays.
func sampleKVs() []KV {
	nested := NewArray([]*Array{
		NewArray([]int32{1, -2, 3}),
		NewArray([]string{"a", ""}),
		NewArray([]*Array{NewArray([]float64{math.Pi})}),
		NewArray([]uint8{}),
	})
	return []KV{
		{"general.architecture", String("test")},
		{"t.u8", Uint8(200)},
		{"t.i8", Int8(-100)},
		{"t.u16", Uint16(60000)},
		{"t.i16", Int16(-30000)},
		{"t.u32", Uint32(4000000000)},
		{"t.i32", Int32(-2000000000)},
		{"t.f32", Float32(1.5)},
		{"t.bool", Bool(true)},
		{"t.str", String("héllo\x00world")},
		{"t.u64", Uint64(math.MaxUint64)},
		{"t.i64", Int64(math.MinInt64)},
		{"t.f64", Float64(-2.25)},
		{"a.u8", ArrayValue(NewArray([]uint8{1, 2, 255}))},
		{"a.i8", ArrayValue(NewArray([]int8{-1, 2}))},
		{"a.u16", ArrayValue(NewArray([]uint16{65535}))},
		{"a.i16", ArrayValue(NewArray([]int16{-5, 5}))},
		{"a.u32", ArrayValue(NewArray([]uint32{7, 8, 9}))},
		{"a.i32", ArrayValue(NewArray([]int32{-7}))},
		{"a.f32", ArrayValue(NewArray([]float32{0.5, float32(math.Inf(-1))}))},
		{"a.bool", ArrayValue(NewArray([]bool{true, false, true}))},
		{"a.str", ArrayValue(NewArray([]string{"x", "yy", ""}))},
		{"a.u64", ArrayValue(NewArray([]uint64{1 << 40}))},
		{"a.i64", ArrayValue(NewArray([]int64{-(1 << 40)}))},
		{"a.f64", ArrayValue(NewArray([]float64{1e300}))},
		{"a.nested", ArrayValue(nested)},
		{"a.empty", ArrayValue(NewArray([]string(nil)))},
	}
}

type sampleTensor struct {
	name  string
	typ   ggml.Type
	shape []int64
}

var sampleTensors = []sampleTensor{
	{"tok_embd", ggml.F32, []int64{3, 5}},
	{"q", ggml.Q8_0, []int64{64, 2}},
	{"scalar", ggml.F16, nil},
	{"iq", ggml.IQ2_XXS, []int64{256}}, // known to ggml, unsupported by Hark
	{"four", ggml.F16, []int64{1, 2, 3, 4}},
	{"empty", ggml.F32, []int64{0, 7}},
}

// build writes a file with the sample metadata and tensors; the data of
// tensor i is bytes valued i+1.
func build(t *testing.T, extra ...KV) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, kv := range append(extra, sampleKVs()...) {
		require.NoError(t, w.AddKV(kv.Key, kv.Value))
	}
	for _, st := range sampleTensors {
		require.NoError(t, w.AddTensor(st.name, st.typ, st.shape))
	}
	for i, st := range sampleTensors {
		n, err := ggml.TensorBytes(st.typ, st.shape)
		require.NoError(t, err)
		require.NoError(t, w.WriteTensor(bytes.Repeat([]byte{byte(i + 1)}, int(n))))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint32{0, 1, 64, 4096} {
		var extra []KV
		if align != 0 {
			extra = []KV{{KeyAlignment, Uint32(align)}}
		}
		b := build(t, extra...)
		f, err := Parse(b)
		require.NoError(t, err)
		require.EqualValues(t, 3, f.Version)
		wantAlign := int64(align)
		if align == 0 {
			wantAlign = DefaultAlignment
		}
		require.Equal(t, wantAlign, f.Alignment)
		require.Zero(t, f.DataOffset%wantAlign)

		kvs := append(extra, sampleKVs()...)
		require.Len(t, f.KVs, len(kvs))
		for i, kv := range kvs {
			require.Equal(t, kv.Key, f.KVs[i].Key)
			require.True(t, kv.Value.Equal(f.KVs[i].Value), "key %s: %#v != %#v", kv.Key, kv.Value, f.KVs[i].Value)
		}
		require.Len(t, f.Tensors, len(sampleTensors))
		end := f.DataOffset
		for i, st := range sampleTensors {
			tt, ok := f.Tensor(st.name)
			require.True(t, ok)
			require.Equal(t, &f.Tensors[i], tt)
			require.Equal(t, st.typ, tt.Type)
			require.Equal(t, len(st.shape), len(tt.Shape))
			if len(st.shape) > 0 {
				require.Equal(t, st.shape, tt.Shape)
			}
			n, _ := ggml.TensorBytes(st.typ, st.shape)
			require.Equal(t, n, tt.Bytes)
			require.Equal(t, end, tt.Offset)
			require.Zero(t, tt.Offset%wantAlign)
			require.Equal(t, bytes.Repeat([]byte{byte(i + 1)}, int(n)), tt.Data)
			end = tt.Offset + (n+wantAlign-1)/wantAlign*wantAlign
		}
		require.EqualValues(t, len(b), end, "last tensor padded to the alignment")

		// Writing the parsed file again reproduces it byte for byte.
		require.Equal(t, b, rewrite(t, f))

		var ue *ggml.UnsupportedError
		require.ErrorAs(t, f.CheckSupported(), &ue)
		require.Equal(t, "iq", ue.Tensor)
		require.Equal(t, ggml.IQ2_XXS, ue.Type)
		require.Contains(t, ue.Error(), "iq2_xxs")
	}
}

func TestAccessors(t *testing.T) {
	f, err := Parse(build(t))
	require.NoError(t, err)
	get := func(k string) Value { v, ok := f.Get(k); require.True(t, ok, k); return v }
	u8, ok := get("t.u8").Uint8()
	require.True(t, ok)
	require.EqualValues(t, 200, u8)
	_, ok = get("t.u8").Int8()
	require.False(t, ok, "exact type accessors reject other types")
	i8, _ := get("t.i8").Int8()
	require.EqualValues(t, -100, i8)
	u16, _ := get("t.u16").Uint16()
	require.EqualValues(t, 60000, u16)
	i16, _ := get("t.i16").Int16()
	require.EqualValues(t, -30000, i16)
	u32, _ := get("t.u32").Uint32()
	require.EqualValues(t, 4000000000, u32)
	i32, _ := get("t.i32").Int32()
	require.EqualValues(t, -2000000000, i32)
	f32, _ := get("t.f32").Float32()
	require.EqualValues(t, 1.5, f32)
	bl, ok := get("t.bool").Bool()
	require.True(t, ok && bl)
	s, _ := get("t.str").String()
	require.Equal(t, "héllo\x00world", s)
	u64, _ := get("t.u64").Uint64()
	require.EqualValues(t, uint64(math.MaxUint64), u64)
	i64, _ := get("t.i64").Int64()
	require.EqualValues(t, int64(math.MinInt64), i64)
	f64, _ := get("t.f64").Float64()
	require.EqualValues(t, -2.25, f64)

	n, err := f.GetInt("t.i16")
	require.NoError(t, err)
	require.EqualValues(t, -30000, n)
	_, err = f.GetInt("t.u64")
	require.Error(t, err, "uint64 above MaxInt64 is not an int64")
	x, err := f.GetFloat("t.f32")
	require.NoError(t, err)
	require.EqualValues(t, 1.5, x)
	_, err = f.GetString("t.u8")
	require.ErrorContains(t, err, "has type uint8, want string")
	_, err = f.GetString("missing")
	require.ErrorContains(t, err, "missing metadata key")
	require.Equal(t, "test", f.Architecture())

	a, err := f.GetArray("a.str")
	require.NoError(t, err)
	strs, ok := a.Strings()
	require.True(t, ok)
	require.Equal(t, []string{"x", "yy", ""}, strs)
	_, ok = a.Float32s()
	require.False(t, ok)
	fa, _ := f.GetArray("a.f32")
	fs, _ := fa.Float32s()
	require.Equal(t, float32(0.5), fs[0])
	require.True(t, math.IsInf(float64(fs[1]), -1))
	bools, ok := Values[bool](mustArray(t, f, "a.bool"))
	require.True(t, ok)
	require.Equal(t, []bool{true, false, true}, bools)
	i64s, _ := Values[int64](mustArray(t, f, "a.i64"))
	require.Equal(t, []int64{-(1 << 40)}, i64s)

	nested := mustArray(t, f, "a.nested")
	require.Equal(t, TypeArray, nested.Elem)
	require.Equal(t, 4, nested.Len())
	subs, ok := nested.Arrays()
	require.True(t, ok)
	i32s, _ := subs[0].Int32s()
	require.Equal(t, []int32{1, -2, 3}, i32s)
	deeper, _ := subs[2].Arrays()
	f64s, _ := Values[float64](deeper[0])
	require.Equal(t, []float64{math.Pi}, f64s)
	require.Equal(t, 0, subs[3].Len())
	require.Equal(t, TypeUint8, subs[3].Elem)
	require.Equal(t, 0, mustArray(t, f, "a.empty").Len())
	require.Equal(t, TypeString, mustArray(t, f, "a.empty").Elem)
}

func mustArray(t *testing.T, f *File, key string) *Array {
	a, err := f.GetArray(key)
	require.NoError(t, err)
	return a
}

// rewrite writes a parsed file again with the Writer.
func rewrite(t *testing.T, f *File) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, kv := range f.KVs {
		require.NoError(t, w.AddKV(kv.Key, kv.Value))
	}
	for _, tt := range f.Tensors {
		require.NoError(t, w.AddTensor(tt.Name, tt.Type, tt.Shape))
	}
	for _, tt := range f.Tensors {
		require.NoError(t, w.WriteTensor(tt.Data))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestStories260K(t *testing.T) {
	path := shared.Path(t, "models", "stories260K.gguf")
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.EqualValues(t, 3, f.Version)
	require.Len(t, f.KVs, 18)
	require.Len(t, f.Tensors, 48)
	require.Equal(t, "llama", f.Architecture())
	for key, want := range map[string]int64{
		"llama.context_length": 512, "llama.embedding_length": 64, "llama.feed_forward_length": 172,
		"llama.block_count": 5, "llama.attention.head_count": 8, "llama.attention.head_count_kv": 4,
		"llama.rope.dimension_count": 8,
	} {
		n, err := f.GetInt(key)
		require.NoError(t, err, key)
		require.Equal(t, want, n, key)
	}
	eps, err := f.GetFloat("llama.attention.layer_norm_rms_epsilon")
	require.NoError(t, err)
	require.InDelta(t, 1e-5, eps, 1e-12)
	tokens, err := f.GetArray("tokenizer.ggml.tokens")
	require.NoError(t, err)
	toks, ok := tokens.Strings()
	require.True(t, ok)
	require.Len(t, toks, 512)
	require.Equal(t, "<s>", toks[1])

	emb, ok := f.Tensor("token_embd.weight")
	require.True(t, ok)
	require.Equal(t, ggml.F32, emb.Type)
	require.Equal(t, []int64{64, 512}, emb.Shape)
	require.EqualValues(t, 64*512*4, emb.Bytes)
	require.Len(t, emb.Data, 64*512*4)
	up, ok := f.Tensor("blk.4.ffn_up.weight")
	require.True(t, ok)
	require.Equal(t, []int64{64, 172}, up.Shape)
	require.NoError(t, f.CheckSupported())

	// The writer reproduces the file byte for byte.
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(orig), sha256.Sum256(rewrite(t, f)))
}

func TestVocabOnly(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf"} {
		path := shared.Path(t, "llm-kit", "gguf-vocab", name)
		f, err := Open(path)
		require.NoError(t, err, name)
		require.Empty(t, f.Tensors)
		toks, err := f.GetArray("tokenizer.ggml.tokens")
		require.NoError(t, err)
		require.Equal(t, 32000, toks.Len()-boolInt(name == "ggml-vocab-phi-3.gguf")*64)
		orig, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, orig, rewrite(t, f), name)
		require.NoError(t, f.Close())
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter(&bytes.Buffer{})
	require.NoError(t, w.AddKV("k", Uint8(1)))
	require.ErrorContains(t, w.AddKV("k", Uint8(1)), "duplicate")
	require.ErrorContains(t, w.AddKV("v", Value{}), "no value")
	require.ErrorContains(t, w.AddKV(KeyAlignment, Uint32(3)), "power of two")
	require.ErrorContains(t, w.AddKV("bad", ArrayValue(&Array{Elem: TypeInt32, data: []string{}})), "malformed")
	require.ErrorContains(t, w.AddKV("nilsub", ArrayValue(NewArray([]*Array{nil}))), "malformed")
	require.ErrorContains(t, w.AddTensor("q", ggml.Q8_0, []int64{31}), "block size")
	require.ErrorContains(t, w.AddTensor("x", ggml.F32, []int64{1, 1, 1, 1, 1}), "dimensions")
	require.ErrorContains(t, w.AddTensor("u", ggml.Type(99), []int64{1}), "unknown type")
	require.NoError(t, w.AddTensor("a", ggml.F32, []int64{2}))
	require.ErrorContains(t, w.AddTensor("a", ggml.F32, []int64{2}), "duplicate")
	require.ErrorContains(t, w.WriteTensor(make([]byte, 7)), "needs 8 bytes")
	require.ErrorContains(t, w.Close(), "1 of 1 tensors have no data")

	w = NewWriter(&bytes.Buffer{})
	require.NoError(t, w.AddTensor("a", ggml.F32, []int64{1}))
	require.NoError(t, w.WriteTensor(make([]byte, 4)))
	require.Error(t, w.AddKV("late", Uint8(1)))
	require.Error(t, w.WriteTensor(make([]byte, 4)))
	require.NoError(t, w.Close())

	w = NewWriter(failWriter{})
	require.NoError(t, w.AddKV("k", String("v")))
	require.Error(t, w.Close())
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func BenchmarkOpenVocabSPM(b *testing.B) {
	path := shared.Path(b, "llm-kit", "gguf-vocab", "ggml-vocab-llama-spm.gguf")
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// TestAdjacent: tensors back to back in the file come out as one slice;
// an alignment gap, a reversed order or an empty tensor do not.
func TestAdjacent(t *testing.T) {
	get := func(f *File, name string) *Tensor {
		tt, ok := f.Tensor(name)
		require.True(t, ok, name)
		return tt
	}
	f, err := Parse(build(t, KV{KeyAlignment, Uint32(1)}))
	require.NoError(t, err)
	embd, q, scalar, empty := get(f, "tok_embd"), get(f, "q"), get(f, "scalar"), get(f, "empty")
	b, ok := f.Adjacent(embd, q, scalar)
	require.True(t, ok)
	require.Equal(t, append(append(append([]byte{}, embd.Data...), q.Data...), scalar.Data...), b)
	require.Equal(t, len(b), cap(b), "the span ends where its last tensor does")
	_, ok = f.Adjacent(q, embd)
	require.False(t, ok, "reversed order")
	_, ok = f.Adjacent(embd, scalar)
	require.False(t, ok, "a tensor left out between them")
	_, ok = f.Adjacent(empty)
	require.False(t, ok, "empty tensor")
	_, ok = f.Adjacent()
	require.False(t, ok)

	f, err = Parse(build(t, KV{KeyAlignment, Uint32(64)}))
	require.NoError(t, err)
	_, ok = f.Adjacent(get(f, "tok_embd"), get(f, "q"))
	require.False(t, ok, "60 bytes padded to 64 leave a gap")
	_, ok = f.Adjacent(get(f, "q"))
	require.True(t, ok, "one tensor is its own span")
}
