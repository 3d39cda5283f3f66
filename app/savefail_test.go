package app

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/dictation"
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
// once, and the history item says the audio was not kept.
func TestDictationDiskFull(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	src := &feedSource{}
	rec := NewCaptureRecorder(src.open)
	rec.createFile = func(path string) (dictation.WAVFile, error) {
		f, err := dictation.CreateFile(path)
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
	require.Eventually(t, func() bool { return len(ev.named("dictation:warning")) > 0 }, 5e9, 1e7, "told at once, while recording")
	require.Equal(t, "recording not saved: disk full (the dictation goes on from memory)",
		ev.named("dictation:warning")[0].(map[string]string)["message"])

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
}
