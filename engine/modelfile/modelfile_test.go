package modelfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/gguf"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

func meta(t *testing.T, f *File, key string) any {
	t.Helper()
	v, ok := f.MetadataMap()[key]
	require.True(t, ok, "metadata key %s", key)
	return v
}

func TestStories260K(t *testing.T) {
	f, err := Open(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, GGUF, f.Format)
	require.Equal(t, "llama", f.Architecture)
	require.NotNil(t, f.GGUF)
	require.Len(t, f.Tensors, 48)
	require.Len(t, f.Metadata, 18)
	require.Equal(t, "general.architecture", f.Metadata[0].Key)
	require.EqualValues(t, 64, meta(t, f, "llama.embedding_length"))
	require.Equal(t, ArraySummary{Type: "string", Len: 512}, meta(t, f, "tokenizer.ggml.tokens"))
	require.Equal(t, &Tokenizer{Model: "llama", VocabSize: 512, Tokens: 512, Scores: 512, TokenTypes: 512,
		Special: map[string]int64{"unknown": 0, "bos": 1, "eos": 2}}, f.Tokenizer)
	var emb Tensor
	for _, tt := range f.Tensors {
		if tt.Name == "token_embd.weight" {
			emb = tt
		}
	}
	require.Equal(t, ggml.F32, emb.Type)
	require.Equal(t, []int64{64, 512}, emb.Shape)
	require.EqualValues(t, 64*512*4, emb.Bytes)
	require.NoError(t, f.CheckSupported())
	// 260,032 weights (llama2.c header) plus the tied output stored again.
	require.EqualValues(t, 260032+512*64, f.TotalElements())
	b, err := json.Marshal(emb)
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"token_embd.weight","type":"f32","shape":[64,512],"offset":`+
		itoa(emb.Offset)+`,"bytes":131072}`, string(b))
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestWhisper(t *testing.T) {
	f, err := Open(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, GGML, f.Format)
	require.Equal(t, "whisper", f.Architecture)
	require.Len(t, f.Tensors, 167)
	require.EqualValues(t, 51864, meta(t, f, "whisper.n_vocab"))
	require.EqualValues(t, 2007, meta(t, f, "whisper.ftype"))
	require.EqualValues(t, 7, meta(t, f, "whisper.file_type"))
	require.EqualValues(t, 2, meta(t, f, "whisper.quantization_version"))
	require.Equal(t, []int64{80, 201}, meta(t, f, "whisper.mel_filters.shape"))
	require.Equal(t, &Tokenizer{Model: "whisper", VocabSize: 51864, Tokens: 50256}, f.Tokenizer)
	require.NoError(t, f.CheckSupported())
}

func TestVocabOnly(t *testing.T) {
	f, err := Open(shared.Path(t, "llm-kit", "gguf-vocab", "ggml-vocab-llama-spm.gguf"))
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, "llama", f.Architecture)
	require.Empty(t, f.Tensors)
	require.Equal(t, 32000, f.Tokenizer.VocabSize)
	require.Equal(t, "llama", f.Tokenizer.Model)
	require.EqualValues(t, 1, f.Tokenizer.Special["bos"])
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{shared.Path(t, "models", "stories260K.llama2c.bin"), "not a GGUF or whisper.cpp GGML model file (llama2.c checkpoint?)"},
		{shared.Path(t, "models", "tok512.llama2c.bin"), "not a GGUF or whisper.cpp GGML model file (llama2.c tokenizer?)"},
		{shared.Path(t, "models", "SOURCES.md"), "unrecognised header"},
	} {
		_, err := Open(c.path)
		require.ErrorContains(t, err, c.want)
		var fe *FormatError
		require.ErrorAs(t, err, &fe)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	_, err := Open(write("empty", nil))
	require.ErrorContains(t, err, "empty file")
	_, err = Open(write("ggjt", []byte("tjgg\x01\x00\x00\x00")))
	require.ErrorContains(t, err, `legacy llama.cpp GGML file, magic "ggjt"`)
	_, err = Open(write("zip", []byte("PK\x03\x04rest")))
	require.ErrorContains(t, err, "zip archive")
	st := binary.LittleEndian.AppendUint64(nil, 2)
	_, err = Open(write("st", append(st, "{}"...)))
	require.ErrorContains(t, err, "safetensors")
	// A broken GGUF is reported by the GGUF reader, not as an unknown format.
	_, err = Open(write("bad.gguf", []byte("GGUF\x03\x00\x00\x00")))
	require.ErrorContains(t, err, "gguf: truncated")
	_, err = Open(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestSummarize(t *testing.T) {
	require.Equal(t, "NaN", Summarize(gguf.Float32(float32(math.NaN()))))
	require.Equal(t, "-Inf", Summarize(gguf.Float64(math.Inf(-1))))
	require.Equal(t, float32(0.5), Summarize(gguf.Float32(0.5)))
	require.Equal(t, []any{int32(1), int32(2)}, Summarize(gguf.ArrayValue(gguf.NewArray([]int32{1, 2}))))
	long := gguf.NewArray(make([]float32, MaxArray+1))
	require.Equal(t, ArraySummary{"float32", MaxArray + 1}, Summarize(gguf.ArrayValue(long)))
	nested := gguf.NewArray([]*gguf.Array{long, gguf.NewArray([]string{"a"})})
	require.Equal(t, []any{ArraySummary{"float32", MaxArray + 1}, []any{"a"}}, Summarize(gguf.ArrayValue(nested)))
	b, err := json.Marshal(Summarize(gguf.ArrayValue(nested)))
	require.NoError(t, err)
	require.Equal(t, `[{"type":"float32","len":17},["a"]]`, string(b))

	// A GGUF file with non-finite floats still produces valid JSON.
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	require.NoError(t, w.AddKV("x", gguf.Float32(float32(math.Inf(1)))))
	require.NoError(t, w.Close())
	p := filepath.Join(t.TempDir(), "x.gguf")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	f, err := Open(p)
	require.NoError(t, err)
	require.Nil(t, f.Tokenizer)
	_, err = json.Marshal(f.MetadataMap())
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
