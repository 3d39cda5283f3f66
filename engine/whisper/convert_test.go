package whisper

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/engine/ggmlbin"
	"github.com/harkapp/hark/internal/shared"
)

type countingHash struct {
	n int64
	h io.Writer
}

func (c *countingHash) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.h.Write(b)
}

func convertDigest(t *testing.T, src *ggmlbin.File, typ ggml.Type) (string, int64) {
	t.Helper()
	h := sha256.New()
	cw := &countingHash{h: h}
	require.NoError(t, Convert(cw, src, typ))
	return hex.EncodeToString(h.Sum(nil)), cw.n
}

// Converting the kit's f16 model gives exactly the files whisper.cpp's
// converter (f32) and quantize tool (q8_0, q5_1, q4_0) wrote: the shipped
// q8_0 file and the digests the kit README lists.
func TestConvertMatchesWhisperCpp(t *testing.T) {
	t.Parallel()
	src, err := ggmlbin.Open(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin"))
	require.NoError(t, err)
	defer src.Close()

	q8, err := os.ReadFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	want := sha256.Sum256(q8)
	got, n := convertDigest(t, src, ggml.Q8_0)
	require.Equal(t, int64(len(q8)), n, "q8_0 size")
	require.Equal(t, hex.EncodeToString(want[:]), got, "q8_0 bytes")

	for _, c := range []struct {
		typ    ggml.Type
		size   int64
		digest string
	}{
		{ggml.F32, 151635450, "5f37d01d42fbdf44a692a848af8f8b4f8e99b409a662fc42ac907b25470920d4"},
		{ggml.Q5_1, 32166138, "11430191541088e906699a16924c4412ff9944c8cebcbbe859bc05b73331445c"},
		{ggml.Q4_0, 25335354, "b4b6476408509bc33aa4e781c0605241ef6ed8a2ac66066ee27750747e97e281"},
	} {
		got, n := convertDigest(t, src, c.typ)
		require.Equal(t, c.size, n, "%s size", c.typ)
		require.Equal(t, c.digest, got, "%s sha256", c.typ)
	}

	// f16 from f16 is the identity (the converter's own rule).
	f16, err := os.ReadFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin"))
	require.NoError(t, err)
	want = sha256.Sum256(f16)
	got, _ = convertDigest(t, src, ggml.F16)
	require.Equal(t, hex.EncodeToString(want[:]), got, "f16 round trip")
}

// f32 back to f16 follows the converter's rule (f16 for tensors of 2 or
// more dimensions except conv biases and positional embeddings) and so
// gives the kit's f16 file back.
func TestConvertF32ToF16(t *testing.T) {
	t.Parallel()
	path := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	src, err := ggmlbin.Open(path)
	require.NoError(t, err)
	defer src.Close()
	var f32 bytes.Buffer
	require.NoError(t, Convert(&f32, src, ggml.F32))
	mid, err := ggmlbin.Parse(f32.Bytes())
	require.NoError(t, err)
	require.EqualValues(t, 0, mid.HParams.FType)
	for _, tn := range mid.Tensors {
		require.Equal(t, ggml.F32, tn.Type, tn.Name)
	}
	var back bytes.Buffer
	require.NoError(t, Convert(&back, mid, ggml.F16))
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, back.Bytes()), "f16 -> f32 -> f16 differs from the original")
}

func TestConvertRejects(t *testing.T) {
	q8, err := ggmlbin.Open(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	defer q8.Close()
	require.ErrorContains(t, Convert(io.Discard, q8, ggml.Q4_0), "f32 or f16")
	require.ErrorContains(t, Convert(io.Discard, q8, ggml.Q6_K), "cannot write")
}

// Models of the other types transcribe jfk.wav as whisper.cpp did with the
// same files (reference/whispercpp/TYPE-cpu-jfk-bs1.json, greedy).
func TestConvertedModelsTranscribe(t *testing.T) {
	t.Parallel()
	src, err := ggmlbin.Open(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin"))
	require.NoError(t, err)
	defer src.Close()
	for _, typ := range []ggml.Type{ggml.F32, ggml.Q5_1, ggml.Q4_0} {
		path := filepath.Join(t.TempDir(), "kit-"+typ.String()+".bin")
		out, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, Convert(out, src, typ))
		require.NoError(t, out.Close())

		var ref struct {
			Transcription []struct {
				Text string `json:"text"`
			} `json:"transcription"`
		}
		readJSON(t, shared.Path(t, "whisper-kit", "reference", "whispercpp", typ.String()+"-cpu-jfk-bs1.json"), &ref)
		require.Len(t, ref.Transcription, 1)

		f, err := OpenFile(path)
		require.NoError(t, err)
		m, err := f.Load(kitBackend(t), Options{})
		require.NoError(t, err)
		opt := DefaultTranscribeOptions()
		opt.Language = "en"
		res, err := f.TranscribeFile(context.Background(), m, shared.Path(t, "audio", "jfk.wav"), opt)
		require.NoError(t, err)
		require.Equal(t, strings.TrimSpace(ref.Transcription[0].Text), strings.TrimSpace(res.Text), typ.String())
		m.Close()
		f.Close()
	}
}
