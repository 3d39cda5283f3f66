package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// The prefetched spectrogram is the one TranscribeFile would compute; a
// bad audio file gives the error TranscribeFile would, and a model that
// does not open gives no prefetch (the runtime's load reports it).
func TestPrefetchSpectrogram(t *testing.T) {
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	jfk := shared.Path(t, "audio", "jfk.wav")
	r := <-prefetchSpectrogram(model, jfk)
	require.NoError(t, r.err)
	require.NotNil(t, r.spec)
	defer r.spec.Close()
	mf, err := whisper.OpenFile(model)
	require.NoError(t, err)
	defer mf.Close()
	want, err := mf.FileSpectrogram(jfk, 0)
	require.NoError(t, err)
	defer want.Close()
	d := want.Dims()
	require.Equal(t, d, r.spec.Dims())
	a, b := make([]float32, d.NMels*d.NFrames), make([]float32, d.NMels*d.NFrames)
	require.NoError(t, want.ReadWindow(a, 0, d.NFrames, d.NFrames))
	require.NoError(t, r.spec.ReadWindow(b, 0, d.NFrames, d.NFrames))
	require.Equal(t, a, b)

	missing := filepath.Join(t.TempDir(), "missing.wav")
	_, wantErr := mf.FileSpectrogram(missing, 0)
	require.Error(t, wantErr)
	r = <-prefetchSpectrogram(model, missing)
	require.Nil(t, r.spec)
	require.EqualError(t, r.err, wantErr.Error())

	r = <-prefetchSpectrogram(filepath.Join(t.TempDir(), "no-model.bin"), jfk)
	require.Nil(t, r.spec)
	require.NoError(t, r.err)

	discardSpectrogram(prefetchSpectrogram(model, jfk)) // frees what nobody takes
}
