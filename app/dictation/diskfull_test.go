package dictation

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

// fullDisk is a recording file whose writes fail with ENOSPC after the
// first budget bytes, as on a disk that fills during a dictation.
type fullDisk struct {
	*os.File
	budget int64
}

func (f *fullDisk) WriteAt(b []byte, off int64) (int, error) {
	if off+int64(len(b)) > f.budget {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(b, off)
}

// A full disk keeps every sample in memory, tells at once, and the
// recording still comes back whole (with SaveErr).
func TestRecorderDiskFull(t *testing.T) {
	src := &pushSource{}
	var told atomic.Int32
	r := NewRecorder(RecorderConfig{
		OnSaveError: func(err error) {
			require.ErrorIs(t, err, syscall.ENOSPC)
			told.Add(1)
		},
		CreateFile: func(path string) (audio.WAVFile, error) {
			f, err := audio.CreateFile(path)
			if err != nil {
				return nil, err
			}
			return &fullDisk{File: f.(*os.File), budget: 44 + 2*1600}, nil
		},
	}, src.open)
	require.NoError(t, r.Start(filepath.Join(t.TempDir(), "a.wav")))
	for i := range 100 {
		src.Push(shared.Ramp(i*160, 160))
	}
	rec, err := r.Stop()
	require.NoError(t, err)
	require.ErrorIs(t, rec.SaveErr, syscall.ENOSPC)
	require.Equal(t, int32(1), told.Load())
	require.Equal(t, shared.Ramp(0, 16000), rec.Samples)
}
