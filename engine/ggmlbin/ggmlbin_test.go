package ggmlbin

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/harkapp/hark/engine/ggml"
	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

var kitHParams = HParams{NVocab: 51864, NAudioCtx: 1500, NAudioState: 384, NAudioHead: 6, NAudioLayer: 4,
	NTextCtx: 448, NTextState: 384, NTextHead: 6, NTextLayer: 4, NMels: 80}

func TestKitModels(t *testing.T) {
	for _, c := range []struct {
		file   string
		ftype  int32
		counts map[ggml.Type]int
		size   int64
	}{
		{"ggml-kit-tiny.en-f16.bin", 1, map[ggml.Type]int{ggml.F16: 67, ggml.F32: 100}, 77704698},
		{"ggml-kit-tiny.en-q8_0.bin", 2007, map[ggml.Type]int{ggml.Q8_0: 65, ggml.F16: 2, ggml.F32: 100}, 43550778},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := shared.Path(t, "whisper-kit", "models", c.file)
			f, err := Open(path)
			require.NoError(t, err)
			defer f.Close()
			want := kitHParams
			want.FType = c.ftype
			require.Equal(t, want, f.HParams)
			require.Equal(t, c.ftype%1000, f.HParams.FileType())
			require.Equal(t, c.ftype/1000, f.HParams.QuantVersion())
			require.EqualValues(t, 80, f.Mel.NMel)
			require.EqualValues(t, 201, f.Mel.NFFT)
			require.Len(t, f.Mel.Data, 80*201)
			require.Zero(t, f.Mel.Data[0])
			require.InDelta(t, 0.0248, f.Mel.Data[1], 1e-4) // first triangle's peak, 0x3ccbaca4
			require.Len(t, f.Vocab, 50256)
			require.Equal(t, "!", f.Vocab[0])
			require.Equal(t, " the", f.Vocab[262])

			require.Len(t, f.Tensors, 167)
			counts := map[ggml.Type]int{}
			for _, tt := range f.Tensors {
				counts[tt.Type]++
			}
			require.Equal(t, c.counts, counts)
			emb, ok := f.Tensor("decoder.token_embedding.weight")
			require.True(t, ok)
			require.Equal(t, []int64{384, 51864}, emb.Shape)
			conv, ok := f.Tensor("encoder.conv1.weight")
			require.True(t, ok)
			require.Equal(t, ggml.F16, conv.Type)
			require.Equal(t, []int64{3, 80, 384}, conv.Shape)
			pos, _ := f.Tensor("encoder.positional_embedding")
			require.Equal(t, ggml.F32, pos.Type)
			require.Equal(t, []int64{384, 1500}, pos.Shape)
			last := f.Tensors[len(f.Tensors)-1]
			require.Equal(t, c.size, last.Offset+last.Bytes, "tensors run to the end of the file")
			require.NoError(t, f.CheckSupported())

			// Written back, the file is identical.
			orig := sha256.New()
			fh, err := os.Open(path)
			require.NoError(t, err)
			defer fh.Close()
			_, err = io.Copy(orig, fh)
			require.NoError(t, err)
			written := sha256.New()
			n, err := f.WriteTo(written)
			require.NoError(t, err)
			require.Equal(t, c.size, n)
			require.Equal(t, orig.Sum(nil), written.Sum(nil))
		})
	}
}

// small writes a tiny valid file.
func small(t testing.TB) []byte {
	var buf bytes.Buffer
	h := HParams{NVocab: 5, NAudioCtx: 2, NAudioState: 4, NAudioHead: 1, NAudioLayer: 1,
		NTextCtx: 2, NTextState: 4, NTextHead: 1, NTextLayer: 1, NMels: 2, FType: 2007}
	mel := MelFilters{NMel: 2, NFFT: 3, Data: []float32{0, 0.5, 1, 1, 0.5, 0}}
	w, err := NewWriter(&buf, h, mel, []string{"a", "", "\xff\x00b"})
	require.NoError(t, err)
	require.NoError(t, w.WriteTensor("w", ggml.Q8_0, []int64{32, 2}, bytes.Repeat([]byte{1}, 68)))
	require.NoError(t, w.WriteTensor("b", ggml.F32, []int64{4}, bytes.Repeat([]byte{2}, 16)))
	require.NoError(t, w.WriteTensor("iq", ggml.IQ4_XS, []int64{256, 1, 1, 1}, bytes.Repeat([]byte{3}, 136)))
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestSmallRoundTrip(t *testing.T) {
	b := small(t)
	f, err := Parse(b)
	require.NoError(t, err)
	require.EqualValues(t, 7, f.HParams.FileType())
	require.EqualValues(t, 2, f.HParams.QuantVersion())
	require.Equal(t, []float32{0, 0.5, 1, 1, 0.5, 0}, f.Mel.Data)
	require.Equal(t, []string{"a", "", "\xff\x00b"}, f.Vocab)
	require.Len(t, f.Tensors, 3)
	w, _ := f.Tensor("w")
	require.Equal(t, []int64{32, 2}, w.Shape)
	require.EqualValues(t, 68, w.Bytes)
	require.Equal(t, b[w.Offset:w.Offset+68], w.Data)
	b2, _ := f.Tensor("b")
	require.Equal(t, w.Offset+68+4*4+1, b2.Offset, "header: 3 ints, 1 dim, 1-byte name")
	var ue *ggml.UnsupportedError
	require.ErrorAs(t, f.CheckSupported(), &ue)
	require.Equal(t, "iq", ue.Tensor)
	require.Equal(t, ggml.IQ4_XS, ue.Type)
	var buf bytes.Buffer
	_, err = f.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, b, buf.Bytes())

	// Every strict prefix that cuts into a header or data fails.
	for n := range len(b) {
		_, err := Parse(b[:n])
		if n == int(w.Offset)-4*5-1 || n == int(w.Offset+68) || n == int(b2.Offset+16) {
			require.NoError(t, err, "prefix %d ends at a tensor boundary", n)
			continue
		}
		require.Error(t, err, "prefix %d", n)
	}
}

func put32(b []byte, off int, v int32) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c[off:], uint32(v))
	return c
}

func TestHostile(t *testing.T) {
	b := small(t)
	f, err := Parse(b)
	require.NoError(t, err)
	vocabAt := 48 + 8 + 6*4
	firstTensor := int(f.Tensors[0].Offset) - 4*5 - 1
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"wrong magic", put32(b, 0, 0x67676d66), "not a whisper.cpp GGML file"},
		{"negative hparam", put32(b, 4, -1), "n_vocab = -1"},
		{"huge hparam", put32(b, 44, 1<<30), "ftype"},
		{"huge mel", put32(b, 48, 1<<20), "mel filters"},
		{"negative mel", put32(b, 52, -3), "mel filters"},
		{"huge vocab", put32(b, vocabAt, 1<<30), "vocabulary size"},
		{"negative vocab", put32(b, vocabAt, -1), "vocabulary size"},
		{"huge token", put32(b, vocabAt+4, -1), "token 0"},
		{"zero dims", put32(b, firstTensor, 0), "0 dimensions"},
		{"five dims", put32(b, firstTensor, 5), "5 dimensions"},
		{"huge name", put32(b, firstTensor+4, 1<<30), "name length"},
		{"unknown type", put32(b, firstTensor+8, 4), "unknown type id 4"},
		{"negative type", put32(b, firstTensor+8, -2), "unknown type id -2"},
		{"negative dim", put32(b, firstTensor+12, -32), "negative dimension"},
		{"partial block", put32(b, firstTensor+12, 31), "block size"},
		{"data past end", put32(b, firstTensor+16, 1<<20), "needs"},
		{"duplicate", func() []byte {
			c := append([]byte(nil), b...)
			i := bytes.Index(c, []byte("b"+string(bytes.Repeat([]byte{2}, 16))))
			c[i] = 'w'
			return c
		}(), "duplicate tensor name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.b)
			require.ErrorContains(t, err, c.want)
		})
	}
}

// TestOpenHead: the header and filters alone are Open's, and a file cut
// after them still gives them; a file cut inside them is refused as
// Parse refuses it.
func TestOpenHead(t *testing.T) {
	b := small(t)
	full, err := Parse(b)
	require.NoError(t, err)
	dir := t.TempDir()
	melEnd := 48 + 8 + 4*int(full.Mel.NMel)*int(full.Mel.NFFT)
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{"whole": {b, ""}, "cut after the filters": {b[:melEnd], ""}, "cut in the filters": {b[:melEnd-1], "mel filters"}} {
		p := filepath.Join(dir, "m.bin")
		require.NoError(t, os.WriteFile(p, c.b, 0o644))
		h, err := OpenHead(p)
		if c.want != "" {
			require.ErrorContains(t, err, c.want, name)
			continue
		}
		require.NoError(t, err, name)
		require.Equal(t, full.HParams, h.HParams, name)
		require.Equal(t, full.Mel, h.Mel, name)
		require.Empty(t, h.Vocab, name)
		require.Empty(t, h.Tensors, name)
		require.NoError(t, h.Close())
	}
}

func TestWriterErrors(t *testing.T) {
	_, err := NewWriter(&bytes.Buffer{}, HParams{}, MelFilters{NMel: 2, NFFT: 2, Data: make([]float32, 3)}, nil)
	require.ErrorContains(t, err, "mel filters")
	w, err := NewWriter(&bytes.Buffer{}, HParams{}, MelFilters{}, nil)
	require.NoError(t, err)
	require.ErrorContains(t, w.WriteTensor("a", ggml.F32, nil, nil), "dimensions")
	require.ErrorContains(t, w.WriteTensor("a", ggml.F32, []int64{1 << 32}, nil), "does not fit")
	require.ErrorContains(t, w.WriteTensor("a", ggml.F32, []int64{2}, make([]byte, 4)), "needs 8 bytes")
	require.ErrorContains(t, w.WriteTensor("a", ggml.Type(5), []int64{2}, make([]byte, 4)), "unknown type")
	require.NoError(t, w.WriteTensor("a", ggml.F32, []int64{2}, make([]byte, 8)))
	require.ErrorContains(t, w.WriteTensor("a", ggml.F32, []int64{2}, make([]byte, 8)), "duplicate")
	require.NoError(t, w.Close())

	w, err = NewWriter(failWriter{}, HParams{}, MelFilters{}, nil)
	require.NoError(t, err) // buffered
	require.NoError(t, w.WriteTensor("a", ggml.F32, []int64{1}, make([]byte, 4)))
	require.Error(t, w.Close())
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func BenchmarkOpenKitF16(b *testing.B) {
	path := shared.Path(b, "whisper-kit", "models", "ggml-kit-tiny.en-f16.bin")
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
