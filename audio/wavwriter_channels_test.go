package audio

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWAVWriterTwoChannels: a meeting's two channels are written as one
// interleaved stereo WAV that the decoders read back as two channels.
func TestWAVWriterTwoChannels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "two.wav")
	f, err := CreateFile(path)
	require.NoError(t, err)
	w, err := NewWAVWriterChannels(f, 16000, 2)
	require.NoError(t, err)
	frames := make([]float32, 2*1000)
	for i := range 1000 {
		frames[2*i], frames[2*i+1] = 0.5, -0.25
	}
	require.NoError(t, w.Write(frames))
	require.ErrorContains(t, w.Write(frames[:3]), "whole 2-channel frames")
	require.Equal(t, int64(1000), w.Samples())
	require.NoError(t, w.Close())

	s, err := Open(path)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, 2, s.Channels())
	got, err := ReadAll(s)
	require.NoError(t, err)
	require.Len(t, got, 2000)
	require.InDelta(t, 0.5, got[10], 1e-3)
	require.InDelta(t, -0.25, got[11], 1e-3)
}
