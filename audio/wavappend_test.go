package audio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendWAV: a two-channel recording torn by a crash (a frame and a
// half past its header's sizes) is reopened and appended to: every whole
// frame is kept, the new ones follow in order, and the header is true; a
// file of another format is refused.
func TestAppendWAV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "torn.wav")
	f, err := CreateFile(path)
	require.NoError(t, err)
	w, err := NewWAVWriterChannels(f, 16000, 2)
	require.NoError(t, err)
	require.NoError(t, w.Write([]float32{0.5, -0.5, 0.25, -0.25}))
	g, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = g.Write([]byte{0, 0x10, 0, 0xf0, 0, 0x08}) // a frame past the header, and half of one
	require.NoError(t, err)
	require.NoError(t, g.Close())
	// The writer is abandoned, as a killed process leaves it.

	a, err := AppendWAV(path, 16000, 2)
	require.NoError(t, err)
	require.Equal(t, int64(3), a.Samples())
	require.NoError(t, a.Write([]float32{0.75, -0.75}))
	require.Equal(t, int64(4), a.Samples())
	require.NoError(t, a.Close())
	s, err := Open(path)
	require.NoError(t, err)
	defer s.Close()
	got, err := ReadAll(s)
	require.NoError(t, err)
	want := []float32{0.5, -0.5, 0.25, -0.25, 0.125, -0.125, 0.75, -0.75}
	require.Len(t, got, len(want))
	for i := range want {
		require.InDelta(t, want[i], got[i], 1.0/32767, "sample %d", i)
	}

	_, err = AppendWAV(path, 16000, 1)
	require.ErrorContains(t, err, "not 16000 Hz 1-channel")
	_, err = AppendWAV(filepath.Join(t.TempDir(), "none.wav"), 16000, 2)
	require.ErrorIs(t, err, os.ErrNotExist)
}
