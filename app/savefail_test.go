package app

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/internal/shared"
)

// fullDiskFile fails every write past the WAV header, as a disk that
// fills just after a dictation starts.
type fullDiskFile struct{ *os.File }

func (f fullDiskFile) WriteAt(b []byte, off int64) (int, error) {
	if off >= 44 {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.WriteAt(b, off)
}

// TestDictationDiskFull: the WAV can't be written, yet the dictation
// transcribes from memory, delivers the reference text, tells the user at
// once, and the history item says the audio was not kept; once space
// returns the WAV is written whole from memory and the note goes.
func TestDictationDiskFull(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	var tries atomic.Int32
	a.Dictation.saveRetry = 20 * time.Millisecond
	a.Dictation.saveWAV = func(path string, x []float32) error {
		if tries.Add(1) <= 3 { // still full
			return &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		a.Dictation.saveWAV = nil // space returned: the real writer
		return a.Dictation.writeRecording(path, x)
	}
	src := &feedSource{}
	rec := NewCaptureRecorder(src.open)
	rec.createFile = func(path string) (audio.WAVFile, error) {
		f, err := audio.CreateFile(path)
		if err != nil {
			return nil, err
		}
		return fullDiskFile{f.(*os.File)}, nil
	}
	t.Cleanup(func() { rec.Close() })
	sink := &textSink{}
	a.SetRecorder(rec)
	a.SetOutput(sink)
	require.NoError(t, rec.Arm(""))

	clip, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	require.NoError(t, a.Dictation.Start())
	src.push(clip, 160)
	src.push(make([]float32, 16000), 160)
	require.Eventually(t, func() bool { return len(ev.named("dictation:warning")) > 0 }, shared.Wait(t, 5*time.Second), 1e7, "told at once, while recording")
	require.Equal(t, "recording not saved: disk full (the dictation goes on from memory)",
		ev.named("dictation:warning")[0].(Warning).Message)

	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	require.Equal(t, kitText(t, "jfk"), it.Text)
	require.Equal(t, []string{it.Text}, sink.texts)
	require.Contains(t, it.Error, "audio not kept: disk full")
	got, err := a.History.Get(it.ID)
	require.NoError(t, err)
	require.Contains(t, got.Error, "audio not kept: disk full")
	st, err := a.Dictation.Status()
	require.NoError(t, err)
	require.Contains(t, st.Error, "recording not saved: disk full")

	// Space returns: the whole recording is written and the note cleared.
	require.Eventually(t, func() bool {
		got, err := a.History.Get(it.ID)
		return err == nil && got.Error == ""
	}, shared.Wait(t, 10*time.Second), 20*time.Millisecond, "the note goes once the WAV is written")
	require.Greater(t, tries.Load(), int32(3))
	x, err := audio.Load16k(got.AudioPath)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(x), len(clip), "the WAV holds the whole dictation")
	require.Equal(t, int64(0), a.Dictation.unsaved.Load(), "nothing is held in memory any more")
}
