package audio

import (
	"os"
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

// TestRepairWAV: a writer killed after writing samples but before the
// header (and in the middle of a frame) leaves a file that RepairWAV makes
// whole, keeping every complete frame.
func TestRepairWAV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "torn.wav")
	f, err := CreateFile(path)
	require.NoError(t, err)
	w, err := NewWAVWriterChannels(f, 16000, 2)
	require.NoError(t, err)
	require.NoError(t, w.Write(make([]float32, 2*100)))
	require.NoError(t, w.Close())
	g, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = g.Write(make([]byte, 4*50+2)) // 50 frames and half of one, header untouched
	require.NoError(t, err)
	require.NoError(t, g.Close())

	n, err := RepairWAV(path)
	require.NoError(t, err)
	require.Equal(t, int64(150), n)
	s, err := Open(path)
	require.NoError(t, err)
	defer s.Close()
	got, err := ReadAll(s)
	require.NoError(t, err)
	require.Len(t, got, 300)

	other := filepath.Join(t.TempDir(), "x.wav")
	require.NoError(t, os.WriteFile(other, make([]byte, 100), 0o600))
	_, err = RepairWAV(other)
	require.ErrorContains(t, err, "not a WAV")
}

// TestLoadChannels16k: each channel of a two-channel file comes back on
// its own (resampled), never averaged with the other.
func TestLoadChannels16k(t *testing.T) {
	path := filepath.Join(t.TempDir(), "two.wav")
	f, err := CreateFile(path)
	require.NoError(t, err)
	w, err := NewWAVWriterChannels(f, 8000, 2)
	require.NoError(t, err)
	frames := make([]float32, 2*8000)
	for i := range 8000 {
		frames[2*i], frames[2*i+1] = 0.5, -0.25
	}
	require.NoError(t, w.Write(frames))
	require.NoError(t, w.Close())
	chs, err := LoadChannels16k(path)
	require.NoError(t, err)
	require.Len(t, chs, 2)
	require.InDelta(t, 16000, len(chs[0]), 64)
	require.InDelta(t, 0.5, chs[0][8000], 1e-3)
	require.InDelta(t, -0.25, chs[1][8000], 1e-3)
	_, err = Channel(FromSamples(frames, 8000, 2), 2)
	require.ErrorContains(t, err, "no channel 3")
}
