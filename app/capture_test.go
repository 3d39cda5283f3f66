package app

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/app/dictation"
	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/audio/capture"
	"github.com/harkapp/hark/internal/shared"
)

// feedSource is an input device driven by the test: Push delivers samples
// as the audio thread would.
type feedSource struct {
	mu     sync.Mutex
	onData func([]float32)
	opened int
}

func (f *feedSource) open(o capture.Options) (dictation.Source, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onData = o.OnData
	f.opened++
	return f, nil
}
func (f *feedSource) Start() error           { return nil }
func (f *feedSource) Stop() error            { return nil }
func (f *feedSource) Close() error           { return nil }
func (f *feedSource) Device() capture.Device { return capture.Device{ID: "feed", Name: "Test feed"} }
func (f *feedSource) push(x []float32, period int) {
	for len(x) > 0 {
		n := min(period, len(x))
		f.mu.Lock()
		cb := f.onData
		f.mu.Unlock()
		cb(x[:n])
		x = x[n:]
	}
}

// TestCaptureRecorderDictation drives the Dictation service through the
// real capture pipeline: speech that begins before the hotkey is kept by
// the pre-roll, the WAV holds everything, the VAD trims the trailing
// silence, and the text is the clip's.
func TestCaptureRecorderDictation(t *testing.T) {
	ev := newEvents()
	a := openApp(t, t.TempDir(), testModelsDir(t), ev)
	src := &feedSource{}
	rec := NewCaptureRecorder(src.open)
	t.Cleanup(func() { rec.Close() })
	sink := &textSink{}
	a.SetRecorder(rec)
	a.SetOutput(sink)
	require.NoError(t, rec.Arm(""))
	require.Equal(t, 1, src.opened)

	clip, err := audio.Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	// Room tone, then the first 0.3 s of speech before the hotkey.
	src.push(make([]float32, 4000), 160)
	lead := 4800
	src.push(clip[:lead], 160)
	require.NoError(t, a.Dictation.Start())
	src.push(clip[lead:], 160)
	src.push(make([]float32, 2*16000), 160) // two seconds of silence after
	require.Eventually(t, func() bool { return len(ev.named("dictation:level")) > 0 }, shared.Wait(t, 5*time.Second), 10*time.Millisecond)
	// The live preview shows the text while the recording goes on.
	require.Eventually(t, func() bool { return len(ev.named("dictation:partial")) > 0 }, shared.Wait(t, 20*time.Second), 20*time.Millisecond)
	partial := ev.named("dictation:partial")[0].(PartialText).Text
	require.Contains(t, partial, "ask not what your country can do for you")

	it, err := a.Dictation.Stop()
	require.NoError(t, err)
	require.Equal(t, kitText(t, "jfk"), it.Text, "the pre-roll kept the first word")
	wav, err := audio.Load16k(it.AudioPath)
	require.NoError(t, err)
	require.Len(t, wav, 8000+len(clip)-lead+2*16000, "the WAV holds the 500 ms pre-roll, the speech and the silence")
	require.Equal(t, []string{it.Text}, sink.texts)

	// Silence only: a clear error, and the recording is kept.
	require.NoError(t, a.Dictation.Start())
	src.push(make([]float32, 16000), 160)
	_, err = a.Dictation.Stop()
	require.ErrorContains(t, err, "no speech")
	items, err := a.History.List("", 10, 0)
	require.NoError(t, err)
	require.Len(t, items, 2)
	require.Equal(t, 1, src.opened, "the armed device stays open across recordings")
}

// spyRecorder keeps the last Recording the capture pipeline handed the
// service.
type spyRecorder struct {
	*CaptureRecorder
	mu   sync.Mutex
	last Recording
}

func (s *spyRecorder) Stop() (Recording, error) {
	r, err := s.CaptureRecorder.Stop()
	s.mu.Lock()
	s.last = r
	s.mu.Unlock()
	return r, err
}

func (s *spyRecorder) recording() Recording {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// TestCaptureRecorderAutoStopAndTrim dictates a real clip in toggle mode
// with auto-stop: the recording ends by itself (once) after the pause
// that follows the speech, the samples to transcribe are the clip without
// the silence around it, a clean-up that fails (no chat model) keeps the
// transcript, and the text goes out in the output mode of the settings.
func TestCaptureRecorderAutoStopAndTrim(t *testing.T) {
	ev := newEvents()
	models := testModelsDir(t)
	require.NoError(t, os.Remove(filepath.Join(models, "stories.gguf")), "no chat model: the clean-up fails")
	a := openApp(t, t.TempDir(), models, ev)
	set, err := a.Settings.Get()
	require.NoError(t, err)
	set.HotkeyMode, set.AutoStop, set.AutoStopMs = "toggle", true, 700
	set.Cleanup, set.OutputMode = true, "paste"
	_, err = a.Settings.Update(set)
	require.NoError(t, err)
	src := &feedSource{}
	cr := NewCaptureRecorder(src.open)
	t.Cleanup(func() { cr.Close() })
	rec := &spyRecorder{CaptureRecorder: cr}
	sink := &textSink{}
	a.SetRecorder(rec)
	a.SetOutput(sink)
	require.NoError(t, cr.Arm(""))

	clip, err := audio.Load16k(shared.Path(t, "audio", "ljspeech-LJ001-0002.wav"))
	require.NoError(t, err)
	require.NoError(t, a.Dictation.Start())
	x := append(append(make([]float32, 8000), clip...), make([]float32, 2*16000)...)
	src.push(x, 160)
	require.Eventually(t, func() bool { return len(ev.named("dictation:done")) == 1 }, shared.Wait(t, 60*time.Second), 10*time.Millisecond, "auto-stop")
	it := ev.named("dictation:done")[0].(Item)
	// Trimmed: well under the 3.1 s recorded, all of the 1.6 s clip.
	got := rec.recording().Samples
	require.Less(t, len(got), len(x)-16000)
	require.Greater(t, len(got), len(clip)-1600)
	want := kitText(t, "ljspeech-LJ001-0002")
	require.Equal(t, want, it.Text)
	require.Equal(t, []string{want}, sink.texts, "a failed clean-up keeps the transcript")
	require.Equal(t, []string{"paste"}, sink.modes)
	time.Sleep(300 * time.Millisecond)
	require.Len(t, ev.named("dictation:done"), 1, "auto-stop fires once")
	_, err = a.Dictation.Stop()
	require.ErrorContains(t, err, "not recording")
}
